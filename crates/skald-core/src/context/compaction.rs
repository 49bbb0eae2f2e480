//! `ContextCompactor`: when a frame's context grows past its trigger, summarise the older history
//! with the session's model chain and store the boundary replay starts after.
//!
//! Accounting (survives restarts, never sees stale numbers): the last healthy assistant row's
//! reported usage after the latest boundary, plus chars/4 of everything that follows it; with no
//! such row, the estimate of the whole built request. Rows before the boundary are never read,
//! so usage describing the larger pre-summary context cannot re-trigger a compaction.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Value, json};
use skald_llm::{ChatRequest, LlmClient, LlmError, ModelEndpoint};
use skald_protocol::ToolStatus;
use skald_store::repo::history::{MessageRow, Role};
use skald_store::repo::tools::ToolCallRow;
use skald_store::{Store, StoreError};
use tokio_util::sync::CancellationToken;

use super::builder::{ContextInputs, MessageBuilder};
use super::call_results::tool_content;
use super::history::{HistoryOptions, history_messages};
use super::system::summary_message;
use super::tokens::estimate_messages;
use crate::config::CompactionConfig;

/// Why a summary could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the model could not summarise the conversation: {0}")]
    Summariser(LlmError),
    #[error("the model returned an empty summary")]
    EmptySummary,
}

/// Tool results are cut to this many chars in the summariser request only.
pub const SUMMARY_TOOL_RESULT_CHARS: usize = 2_000;
/// A low temperature keeps summaries factual and repeatable.
pub const SUMMARY_TEMPERATURE: f32 = 0.3;

const SUMMARISER_SYSTEM: &str = "You write checkpoint summaries of conversations between a user \
     and an AI assistant that uses tools. Only write the summary: do not answer questions, do not \
     continue the conversation and do not call tools.";

const TEMPLATE: &str = "Write the checkpoint in Markdown with exactly these sections, in this \
     order (write \"None\" under a section with nothing to say):

## Goal
## Constraints & Preferences
## Progress
### Done
### In Progress
### Blocked
## Key Decisions
## Next Steps
## Critical Context
## Files Touched

Keep exact identifiers, file paths, URLs, commands, numbers and error text verbatim. Under Files \
     Touched list every file read, created or changed, one per line.";

/// What one compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionReport {
    pub summary_id: i64,
    /// Id of the last summarised row; replay starts after it.
    pub covers_up_to_message_id: i64,
    /// Accounted context size that led to the compaction.
    pub tokens_before: i64,
    /// Estimated size of the request rebuilt from the summary and the kept tail.
    pub tokens_after: i64,
    /// Rows folded into the summary (failed rows not counted).
    pub summarised_messages: usize,
    /// The stored summary text, as later requests carry it.
    pub summary: String,
}

/// Summarises one frame's history. Borrowed parts so a turn can build one per check cheaply.
pub struct ContextCompactor<'a> {
    store: &'a Store,
    llm: &'a LlmClient,
    chain: &'a [ModelEndpoint],
    config: CompactionConfig,
}

impl<'a> ContextCompactor<'a> {
    pub fn new(
        store: &'a Store,
        llm: &'a LlmClient,
        chain: &'a [ModelEndpoint],
        config: CompactionConfig,
    ) -> Self {
        Self { store, llm, chain, config }
    }

    /// Context size above which the frame is compacted: `threshold_tokens` when set, else the
    /// first model's window minus the reserve (three quarters of a window no larger than the
    /// reserve); `None` (never) for an unknown window.
    pub fn trigger_tokens(&self) -> Option<i64> {
        if let Some(t) = self.config.threshold_tokens {
            return Some(to_i64(t));
        }
        let window = self.chain.first()?.context_window?;
        // A reserve as large as the window (the default 16k against a small local model's 4k)
        // would mean never: such a window compacts at three quarters instead.
        let trigger = match window.checked_sub(self.config.reserve_tokens) {
            Some(t) if t > 0 => t,
            _ => window / 4 * 3,
        };
        Some(to_i64(trigger)).filter(|t| *t > 0)
    }

    /// The accounted context size of the request `builder` would build now.
    pub async fn context_tokens(
        &self,
        builder: &MessageBuilder,
        inputs: &ContextInputs,
    ) -> Result<i64, StoreError> {
        Ok(context_size(self.store, builder, inputs).await?.tokens)
    }

    /// Compacts when enabled and the accounted size exceeds the trigger. `on_start` runs just
    /// before the summariser is called (for the `compacting` event). A summariser failure or an
    /// empty summary is logged and reported as `None`: the turn goes on uncompacted.
    pub async fn maybe_compact(
        &self,
        builder: &MessageBuilder,
        inputs: &ContextInputs,
        cancel: &CancellationToken,
        on_start: impl FnOnce() + Send,
    ) -> Result<Option<CompactionReport>, StoreError> {
        if !self.config.enabled {
            return Ok(None);
        }
        let Some(trigger) = self.trigger_tokens() else {
            return Ok(None);
        };
        let tokens = self.context_tokens(builder, inputs).await?;
        if tokens <= trigger {
            return Ok(None);
        }
        tracing::info!(stack_id = inputs.stack_id, tokens, trigger, "compacting context");
        match self.run(builder, inputs, tokens, None, cancel, on_start).await {
            Err(CompactionError::Store(e)) => Err(e),
            Err(e) => {
                tracing::warn!(stack_id = inputs.stack_id, "not compacted: {e}");
                Ok(None)
            }
            Ok(report) => Ok(report),
        }
    }

    /// `/compact [focus]`: compacts regardless of the trigger (and of `enabled`); `focus` is
    /// appended to the summariser's instructions. `None` when no useful cut exists; a failed
    /// summariser is an error here, since the human asked for this summary.
    pub async fn compact_now(
        &self,
        builder: &MessageBuilder,
        inputs: &ContextInputs,
        focus: Option<&str>,
        cancel: &CancellationToken,
        on_start: impl FnOnce() + Send,
    ) -> Result<Option<CompactionReport>, CompactionError> {
        let tokens = self.context_tokens(builder, inputs).await?;
        self.run(builder, inputs, tokens, focus, cancel, on_start).await
    }

    async fn run(
        &self,
        builder: &MessageBuilder,
        inputs: &ContextInputs,
        tokens_before: i64,
        focus: Option<&str>,
        cancel: &CancellationToken,
        on_start: impl FnOnce() + Send,
    ) -> Result<Option<CompactionReport>, CompactionError> {
        let stack_id = inputs.stack_id;
        let previous = self.store.latest_summary(stack_id).await?;
        let boundary = previous.as_ref().map_or(0, |s| s.covers_up_to_message_id);
        let rows = self.store.messages_for_stack_after(stack_id, boundary).await?;
        let tools = self.store.tool_calls_for_stack_after(stack_id, boundary).await?;
        let live: Vec<&MessageRow> = rows.iter().filter(|r| !r.is_failed()).collect();
        let keep = to_i64(self.config.keep_recent_tokens);
        let Some(cut) = choose_cut(&live, &tools, keep) else {
            return Ok(None);
        };
        let covers_up_to = live[cut - 1].id;
        on_start();
        let request = ChatRequest {
            messages: summariser_messages(
                previous.as_ref().map(|s| s.content.as_str()),
                &live[..cut],
                &tools,
                focus,
            )
            .into(),
            tools: Vec::new().into(),
            temperature: Some(SUMMARY_TEMPERATURE),
            max_tokens: None,
            answer_only: false,
            stream: false,
        };
        let answer =
            self.llm.complete(self.chain, &request, cancel.clone(), &mut |_| {}, &mut |_| {}).await;
        let summary = match answer {
            Ok(turn) if !turn.content.trim().is_empty() => turn.content.trim().to_string(),
            Ok(_) => return Err(CompactionError::EmptySummary),
            Err(e) => return Err(CompactionError::Summariser(e)),
        };
        let tokens_after = {
            let built = builder.build_request(inputs).await?;
            let opts = HistoryOptions {
                max_messages: (!builder.settings().compaction_enabled)
                    .then_some(builder.settings().max_history_messages),
                max_tool_result_chars: builder.settings().max_tool_result_chars,
            };
            let kept_rows: Vec<MessageRow> =
                rows.iter().filter(|r| r.id > covers_up_to).cloned().collect();
            let kept_ids: BTreeSet<i64> = kept_rows.iter().map(|r| r.id).collect();
            let kept_tools: Vec<ToolCallRow> =
                tools.iter().filter(|t| kept_ids.contains(&t.message_id)).cloned().collect();
            let old = estimate_messages(&history_messages(rows.clone(), tools.clone(), opts))
                + previous
                    .as_ref()
                    .map_or(0, |s| estimate_messages(&[summary_message(&s.content)]));
            let new = estimate_messages(&history_messages(kept_rows, kept_tools, opts))
                + estimate_messages(&[summary_message(&summary)]);
            (built.estimated_tokens - old + new).max(0)
        };
        let summary_id = self
            .store
            .append_summary(stack_id, &summary, covers_up_to, tokens_before, tokens_after)
            .await?;
        tracing::info!(stack_id, summary_id, tokens_before, tokens_after, "context compacted");
        Ok(Some(CompactionReport {
            summary_id,
            covers_up_to_message_id: covers_up_to,
            tokens_before,
            tokens_after,
            summarised_messages: cut,
            summary,
        }))
    }
}

/// The size of the request a frame's next round would send, as compaction counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSize {
    pub tokens: i64,
    /// The reply whose reported usage the count starts from; `None` when no reply since the
    /// latest compaction reported usage, so `tokens` is the estimate of the whole request.
    pub reported_by: Option<MessageRow>,
}

/// The accounted size of the request `builder` would build now for `inputs`' frame (the
/// compaction trigger, `/context` and the context meter all count this way).
pub async fn context_size(
    store: &Store,
    builder: &MessageBuilder,
    inputs: &ContextInputs,
) -> Result<ContextSize, StoreError> {
    let built = builder.build_request(inputs).await?;
    let summary = store.latest_summary(inputs.stack_id).await?;
    let boundary = summary.as_ref().map_or(0, |s| s.covers_up_to_message_id);
    // Only rows from the newest reply that reported usage on can count: reading the whole frame
    // for this made every check linear in the session's length.
    let from = match store.last_reported_usage(inputs.stack_id, boundary).await? {
        Some(r) => r.id - 1,
        None => return Ok(ContextSize { tokens: built.estimated_tokens, reported_by: None }),
    };
    let rows = store.messages_for_stack_after(inputs.stack_id, from).await?;
    let tools = store.tool_calls_for_stack_after(inputs.stack_id, from).await?;
    let since = summary.as_ref().map(|s| s.created_at.as_str());
    Ok(accounted_size(rows, &tools, built.estimated_tokens, since))
}

/// Context size from stored rows after the boundary (or from the newest reply with usage on, the
/// only rows that can count): the last healthy assistant row's usage
/// (`input + cache_read + cache_write + output`) plus chars/4 of what follows it; without such a
/// row, `whole_estimate` (the estimate of the full request).
///
/// `summarised_at` is the latest summary's `created_at`: a kept-tail row written before it
/// reported usage of the larger pre-summary request, so only rows written after it count.
/// (Same-millisecond rows count as stale: estimating is the safe side.)
pub fn accounted_size(
    rows: Vec<MessageRow>,
    tools: &[ToolCallRow],
    whole_estimate: i64,
    summarised_at: Option<&str>,
) -> ContextSize {
    let mut live: Vec<MessageRow> = rows.into_iter().filter(|r| !r.is_failed()).collect();
    let calls = calls_by_message(tools);
    let fresh = |r: &MessageRow| summarised_at.is_none_or(|t| r.created_at.as_str() > t);
    let reported = live.iter().rposition(|r| {
        matches!(r.role(), Ok(Role::Assistant)) && r.input_tokens.is_some_and(|t| t > 0) && fresh(r)
    });
    let Some(at) = reported else {
        return ContextSize { tokens: whole_estimate, reported_by: None };
    };
    let row = &live[at];
    let usage = row.input_tokens.unwrap_or(0)
        + row.cache_read_tokens.unwrap_or(0)
        + row.cache_write_tokens.unwrap_or(0)
        + row.output_tokens.unwrap_or(0);
    // The reporting row's own results were not part of its request.
    let own_results: usize = calls
        .get(&row.id)
        .map_or(0, |cs| cs.iter().map(|c| c.result.as_deref().map_or(0, char_len)).sum());
    let after: usize = live[at + 1..].iter().map(|r| row_chars(r, &calls)).sum();
    let tokens = usage + to_i64_usize((own_results + after) / 4);
    ContextSize { tokens, reported_by: Some(live.swap_remove(at)) }
}

/// Index of the first kept row in `live` (rows after the boundary, failed rows removed), or
/// `None` when nothing useful can be summarised.
///
/// The kept tail holds at least `keep_tokens` (estimated) when the history allows, and starts at
/// a safe point: a prompt row, or an assistant row that requests tools (its results follow it,
/// so a call is never separated from its result). The tail never starts after the current turn's
/// prompt, nor after an assistant row with an open (pending/running) call.
pub fn choose_cut(live: &[&MessageRow], tools: &[ToolCallRow], keep_tokens: i64) -> Option<usize> {
    let n = live.len();
    if n < 2 {
        return None;
    }
    let calls = calls_by_message(tools);
    let is_prompt = |r: &MessageRow| matches!(r.role(), Ok(Role::User | Role::Agent));
    let has_calls = |r: &MessageRow| calls.contains_key(&r.id);
    let safe = |j: usize| is_prompt(live[j]) || has_calls(live[j]);
    let mut limit = live.iter().rposition(|r| is_prompt(r)).unwrap_or(n - 1);
    let open = live.iter().position(|r| {
        calls.get(&r.id).is_some_and(|cs| {
            cs.iter().any(|c| matches!(c.status(), Ok(ToolStatus::Pending | ToolStatus::Running)))
        })
    });
    if let Some(o) = open {
        limit = limit.min(o);
    }
    let mut i = n;
    let mut kept: i64 = 0;
    while i > 0 && kept < keep_tokens {
        i -= 1;
        kept += to_i64_usize(row_chars(live[i], &calls) / 4);
    }
    if kept < keep_tokens {
        return None; // the whole history fits in the tail
    }
    let cut = (i..=limit.min(n - 1))
        .find(|&j| safe(j))
        .or_else(|| (1..i.min(limit + 1)).rev().find(|&j| safe(j)))?;
    let cut = cut.min(limit);
    (cut > 0 && safe(cut)).then_some(cut)
}

/// The summariser request: a system message, then one user message with the previous summary,
/// the transcript of `rows`, the files touched and the template.
pub fn summariser_messages(
    previous: Option<&str>,
    rows: &[&MessageRow],
    tools: &[ToolCallRow],
    focus: Option<&str>,
) -> Vec<Value> {
    let calls = calls_by_message(tools);
    let mut text = String::new();
    if let Some(p) = previous.map(str::trim).filter(|p| !p.is_empty()) {
        text.push_str("<previous-summary>\n");
        text.push_str(p);
        text.push_str("\n</previous-summary>\n\n");
    }
    text.push_str("<conversation>\n");
    let mut files = BTreeSet::new();
    for row in rows {
        match row.role() {
            Ok(Role::User | Role::Agent) => {
                text.push_str(&format!("[USER]: {}\n", row.content.trim()));
            }
            _ => {
                text.push_str(&format!("[ASSISTANT]: {}", row.content.trim()));
                let row_calls = calls.get(&row.id).map(Vec::as_slice).unwrap_or(&[]);
                if !row_calls.is_empty() {
                    let list: Vec<String> = row_calls
                        .iter()
                        .map(|c| {
                            format!(
                                "{}({})",
                                c.name,
                                shorten(c.arguments.as_deref().unwrap_or(""), 500)
                            )
                        })
                        .collect();
                    text.push_str(&format!(" [Tool calls: {}]", list.join(", ")));
                }
                text.push('\n');
                for c in row_calls {
                    files.extend(touched_path(c));
                    text.push_str(&format!(
                        "[TOOL RESULT {}]: {}\n",
                        c.name,
                        shorten(&tool_content((*c).clone()), SUMMARY_TOOL_RESULT_CHARS)
                    ));
                }
            }
        }
    }
    text.push_str("</conversation>\n\n");
    if !files.is_empty() {
        text.push_str("Files named in tool calls above:\n");
        for f in &files {
            text.push_str(&format!("- {f}\n"));
        }
        text.push('\n');
    }
    if previous.is_some() {
        text.push_str(
            "Update the previous summary with the conversation above into one new checkpoint. ",
        );
    } else {
        text.push_str("Summarise the conversation above into a checkpoint. ");
    }
    text.push_str(TEMPLATE);
    if let Some(f) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        text.push_str(&format!("\n\nFocus especially on: {f}"));
    }
    vec![
        json!({ "role": "system", "content": SUMMARISER_SYSTEM }),
        json!({ "role": "user", "content": text }),
    ]
}

fn touched_path(call: &ToolCallRow) -> Option<String> {
    let args: Value = serde_json::from_str(call.arguments.as_deref()?).ok()?;
    args.get("path").and_then(Value::as_str).map(str::to_string)
}

/// Head of `s` within `max` chars, with a marker saying how much was dropped.
fn shorten(s: &str, max: usize) -> String {
    let len = char_len(s);
    if len <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}…[{} more chars cut]", len - max)
}

fn calls_by_message(tools: &[ToolCallRow]) -> HashMap<i64, Vec<&ToolCallRow>> {
    let mut calls: HashMap<i64, Vec<&ToolCallRow>> = HashMap::new();
    for t in tools {
        calls.entry(t.message_id).or_default().push(t);
    }
    calls
}

/// Chars a row contributes to a request: text, reasoning, each call's name + arguments + result.
fn row_chars(row: &MessageRow, calls: &HashMap<i64, Vec<&ToolCallRow>>) -> usize {
    let mut n = char_len(&row.content) + row.reasoning_content.as_deref().map_or(0, char_len);
    for c in calls.get(&row.id).map(Vec::as_slice).unwrap_or(&[]) {
        n += char_len(&c.name)
            + c.arguments.as_deref().map_or(0, char_len)
            + c.result.as_deref().map_or(0, char_len);
    }
    n
}

fn char_len(s: &str) -> usize {
    s.chars().count()
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_i64_usize(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
