//! Folds streamed chunks (or one whole reply) into an `LlmTurn`: text, reasoning, usage, cost and
//! tool calls assembled from their deltas.

use serde_json::Value;

use crate::error::LlmError;
use crate::turn::{LlmTurn, StreamDelta, ToolCallOut, Usage};
use crate::wire::{CompletionWire, ToolCallWire};

#[derive(Debug, Default)]
struct CallSlot {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates one reply. Feed it SSE `data` payloads with [`TurnAssembler::on_data`] or a whole
/// JSON body with [`TurnAssembler::on_json`], then call [`TurnAssembler::finish`].
#[derive(Debug, Default)]
pub struct TurnAssembler {
    content: String,
    reasoning: String,
    calls: Vec<CallSlot>,
    usage: Option<Usage>,
    cost: Option<f64>,
    finish_reason: Option<String>,
    done: bool,
    chunks: u64,
}

impl TurnAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once `[DONE]` was seen; the caller stops reading.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Number of JSON chunks folded in so far.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Whether any part of the reply (text, reasoning or a tool call) has arrived.
    pub fn has_output(&self) -> bool {
        !self.content.is_empty() || !self.reasoning.is_empty() || !self.calls.is_empty()
    }

    /// One SSE `data` payload.
    pub fn on_data(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<(), LlmError> {
        let trimmed = data.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        if trimmed == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        match serde_json::from_str::<CompletionWire>(trimmed) {
            Ok(chunk) => self.apply(chunk, on_delta),
            // A server that omits the blank line between events makes several `data:` lines one
            // event; each line is then a chunk of its own.
            Err(first) if trimmed.contains('\n') => {
                for line in trimmed.lines() {
                    let line = line.trim();
                    if line == "[DONE]" {
                        self.done = true;
                    } else if !line.is_empty() {
                        let chunk = serde_json::from_str::<CompletionWire>(line)
                            .map_err(|_| malformed(&first, trimmed))?;
                        self.apply(chunk, on_delta)?;
                    }
                }
                Ok(())
            }
            Err(e) => Err(malformed(&e, trimmed)),
        }
    }

    /// A whole non-streaming `chat.completion` body.
    pub fn on_json(
        &mut self,
        body: &str,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<(), LlmError> {
        let reply: CompletionWire =
            serde_json::from_str(body).map_err(|e| malformed(&e, body.trim()))?;
        self.apply(reply, on_delta)?;
        self.done = true;
        Ok(())
    }

    fn apply(
        &mut self,
        chunk: CompletionWire,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<(), LlmError> {
        self.chunks += 1;
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            return Err(LlmError::Provider(error_message(&err)));
        }
        if let Some(u) = chunk.usage.as_ref().filter(|u| u.is_object()) {
            let (usage, cost) = read_usage(u);
            self.usage = Some(usage);
            if cost.is_some() {
                self.cost = cost;
            }
        }
        for choice in chunk.choices {
            // We always ask for one choice; a server that sends more gets its first one used.
            if choice.index.is_some_and(|i| i != 0) {
                continue;
            }
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    self.content.push_str(&text);
                    on_delta(StreamDelta::Content(text));
                }
                // Some servers send both fields with the same text; prefer the DeepSeek name.
                if let Some(text) =
                    delta.reasoning_content.or(delta.reasoning).filter(|t| !t.is_empty())
                {
                    self.reasoning.push_str(&text);
                    on_delta(StreamDelta::Reasoning(text));
                }
                for tc in delta.tool_calls.unwrap_or_default() {
                    self.apply_tool_delta(tc);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    fn apply_tool_delta(&mut self, tc: ToolCallWire) {
        let id = tc.id.filter(|s| !s.is_empty());
        let pos = self.slot_for(tc.index, id.as_deref());
        let slot = &mut self.calls[pos];
        if let Some(id) = id
            && slot.id.is_empty()
        {
            slot.id = id;
        }
        if let Some(f) = tc.function {
            if let Some(name) = f.name.filter(|n| !n.is_empty()) {
                // Servers that repeat the full name in every chunk must not double it; servers
                // that stream the name in pieces get the pieces joined.
                if slot.name.is_empty() {
                    slot.name = name;
                } else if slot.name != name {
                    slot.name.push_str(&name);
                }
            }
            if let Some(args) = f.arguments {
                slot.arguments.push_str(&args);
            }
        }
    }

    /// Which call a delta belongs to: by `index`; by `id` when a server omits the index; the last
    /// call when a continuation chunk carries neither. A new id on a known index starts a new
    /// call (servers that number every call 0).
    fn slot_for(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let found = match index {
            Some(idx) => self.calls.iter().rposition(|c| c.index == Some(idx)).filter(|&p| {
                let existing = &self.calls[p].id;
                id.is_none_or(|id| existing.is_empty() || existing == id)
            }),
            None => match id {
                Some(id) => self.calls.iter().position(|c| c.id == id),
                None => self.calls.len().checked_sub(1),
            },
        };
        found.unwrap_or_else(|| {
            self.calls.push(CallSlot { index, ..CallSlot::default() });
            self.calls.len() - 1
        })
    }

    /// The finished turn. With `require_end`, a stream that stopped before `[DONE]` or a finish
    /// reason counts as dropped. A reply with neither text nor tool calls is `Empty`.
    pub fn finish(self, model: &str, require_end: bool) -> Result<LlmTurn, LlmError> {
        if require_end && !self.done && self.finish_reason.is_none() {
            return Err(LlmError::Stream("stream ended before the reply finished".into()));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (i, slot) in self.calls.into_iter().enumerate() {
            if slot.name.is_empty() && slot.arguments.is_empty() {
                continue;
            }
            let id = if slot.id.is_empty() { format!("call_{i}") } else { slot.id };
            tool_calls.push(ToolCallOut { id, name: slot.name, arguments: slot.arguments });
        }
        if self.content.trim().is_empty() && tool_calls.is_empty() {
            return Err(LlmError::Empty);
        }
        Ok(LlmTurn {
            content: self.content,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
            cost: self.cost,
            model: model.to_owned(),
        })
    }
}

fn malformed(err: &serde_json::Error, data: &str) -> LlmError {
    let mut snippet: String = data.chars().take(200).collect();
    if snippet.len() < data.len() {
        snippet.push('…');
    }
    LlmError::Malformed(format!("{err} in {snippet:?}"))
}

fn error_message(err: &Value) -> String {
    let msg = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| err.as_str().map(str::to_owned))
        .unwrap_or_else(|| err.to_string());
    msg.chars().take(2000).collect()
}

fn read_usage(u: &Value) -> (Usage, Option<f64>) {
    let num = |v: Option<&Value>| -> u64 {
        v.and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))).unwrap_or(0)
    };
    let details = u.get("prompt_tokens_details");
    let cache_read = num(details.and_then(|d| d.get("cached_tokens")))
        .max(num(u.get("cache_read_input_tokens")))
        .max(num(u.get("prompt_cache_hit_tokens")));
    let cache_write = num(details.and_then(|d| d.get("cache_write_tokens")))
        .max(num(u.get("cache_creation_input_tokens")));
    let usage = Usage {
        input_tokens: num(u.get("prompt_tokens")).max(num(u.get("input_tokens"))),
        output_tokens: num(u.get("completion_tokens")).max(num(u.get("output_tokens"))),
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
    };
    (usage, u.get("cost").and_then(Value::as_f64))
}

#[cfg(test)]
#[path = "assemble_tests.rs"]
mod tests;
