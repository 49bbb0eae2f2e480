//! A frame's conversation history kept between rounds and extended with what changed since
//! (`Store::frame_delta`): the messages `history_messages` builds from every row, without reading
//! or rendering the older rows again.
//!
//! What can change in rows already rendered, and how each change is followed:
//! - a call still `pending`/`running`: re-read every round, its result message re-rendered;
//! - the newest prompt moving (a new prompt or a folded steer): the results of the turn that just
//!   became an earlier one are hidden in place when over the limit;
//! - prompts after the last reply: coalesced only when a reply follows, re-read every round; one
//!   marked failed (a crash's orphan) moves the turn back, which is a rebuild ([`Stale`]);
//! - the count cap's window (compaction off): its start only moves forward, the front is dropped;
//! - a call added to a rendered row: a rebuild. Compaction and a settings change rebuild too
//!   (checked by the cache).

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;
use skald_protocol::ToolStatus;
use skald_store::repo::history::MessageRow;
use skald_store::repo::replay_delta::{DeltaCursor, FrameDelta};
use skald_store::repo::tools::ToolCallRow;

use super::history::{
    HistoryOptions, assistant_message, hidden, is_prompt, prompt_message, tool_message, user_text,
    window_start,
};
use super::tokens::message_chars;

/// Bytes a JSON value node costs besides its strings (map entry, enum, allocation headers).
const NODE_BYTES: usize = 64;

/// A change the increment cannot follow: the caller rebuilds from every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// A prompt already counted was marked failed, so an earlier prompt starts the turn again.
    PromptFailed,
    /// A call was added to a row already rendered.
    LateCall,
}

/// The history part of a request, as the builder splices it in.
pub struct HistoryView {
    /// A window that starts inside a run of prompts sends only their tail, coalesced anew.
    pub first: Option<Value>,
    pub shared: Arc<Vec<Value>>,
    pub range: Range<usize>,
    /// The prompts after the last reply, coalesced.
    pub last: Option<Value>,
    /// Estimate chars of `first`, `shared[range]` and `last`.
    pub chars: usize,
}

#[derive(Debug, Clone, Copy, Default)]
struct Weight {
    chars: usize,
    bytes: usize,
}

impl Weight {
    fn of(message: &Value) -> Self {
        Self { chars: message_chars(message), bytes: json_bytes(message) }
    }

    fn add(&mut self, w: Weight) {
        self.chars += w.chars;
        self.bytes += w.bytes;
    }

    fn sub(&mut self, w: Weight) {
        self.chars = self.chars.saturating_sub(w.chars);
        self.bytes = self.bytes.saturating_sub(w.bytes);
    }
}

fn json_bytes(v: &Value) -> usize {
    NODE_BYTES
        + match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(json_bytes).sum(),
            Value::Object(o) => o.iter().map(|(k, v)| k.len() + json_bytes(v)).sum(),
            _ => 0,
        }
}

/// Where a call's result message sits.
#[derive(Debug, Clone)]
struct ResultAt {
    call_id: i64,
    /// Absolute message index.
    index: usize,
    name: String,
}

#[derive(Debug, Clone)]
struct Prompt {
    id: i64,
    text: String,
}

/// A live row inside the count cap's window.
#[derive(Debug, Clone)]
struct RowMark {
    /// The prompt's text; `None` for a reply.
    prompt: Option<String>,
    /// Absolute index of the row's first message (for a prompt, where its run's message goes).
    msg_start: usize,
}

/// One frame's rendered history and what is needed to extend it.
#[derive(Debug, Clone)]
pub struct IncrementalHistory {
    opts: HistoryOptions,
    /// Rendered messages; `msgs[i]` has the absolute index `base + i`.
    msgs: Arc<Vec<Value>>,
    base: usize,
    /// Absolute index of the first message still used (the count cap drops the front).
    front: usize,
    /// Weight of `msgs` from `front` on.
    weight: Weight,
    /// Absolute index where the messages of the rows after the newest prompt begin.
    turn_from: usize,
    /// Results rendered in the current turn, hidden when a newer prompt ends it.
    turn_results: Vec<ResultAt>,
    /// Calls still `pending`/`running`.
    open: Vec<ResultAt>,
    /// Prompts after the last reply, coalesced into one message only when a reply follows.
    pending: Vec<Prompt>,
    /// With a count cap: every live row from the window's start.
    rows: Option<VecDeque<RowMark>>,
    /// Bytes of the prompt texts held in `pending` and `rows`.
    text_bytes: usize,
    last_message_id: i64,
    last_tool_id: i64,
}

impl IncrementalHistory {
    /// The history of `rows` (every row of the frame after `from`, failed ones included, in id
    /// order) and `tools` (their calls in id order); `max_tool_id` as the same read saw it.
    pub fn from_rows(
        opts: HistoryOptions,
        from: i64,
        max_tool_id: i64,
        rows: Vec<MessageRow>,
        tools: Vec<ToolCallRow>,
    ) -> Self {
        // Room for the rounds to come: filled to the brim, the next round's push would copy the
        // whole history into a larger vector.
        let rendered = rows.len() + tools.len();
        let mut h = Self {
            opts,
            msgs: Arc::new(Vec::with_capacity(rendered + rendered / 4 + 16)),
            base: 0,
            front: 0,
            weight: Weight::default(),
            turn_from: 0,
            turn_results: Vec::new(),
            open: Vec::new(),
            pending: Vec::new(),
            rows: opts.max_messages.map(|_| VecDeque::new()),
            text_bytes: 0,
            last_message_id: from,
            last_tool_id: max_tool_id,
        };
        let mut calls = calls_by_message(tools);
        for row in rows {
            let row_calls = calls.remove(&row.id).unwrap_or_default();
            h.push_row(row, row_calls);
        }
        h
    }

    pub fn options(&self) -> HistoryOptions {
        self.opts
    }

    /// Whether later rounds can extend this history. A capped history without any prompt is
    /// built from the newest rows only each time (`ReplayWindow::Tail`), never extended.
    pub fn extendable(&self) -> bool {
        self.rows.as_ref().is_none_or(|rows| rows.iter().any(|r| r.prompt.is_some()))
    }

    /// What the next `frame_delta` must return.
    pub fn cursor(&self) -> DeltaCursor {
        DeltaCursor {
            // Prompts after the last reply are read again: one may have been marked failed.
            after_message_id: self.pending.first().map_or(self.last_message_id, |p| p.id - 1),
            after_tool_id: self.last_tool_id,
            open_calls: self.open.iter().map(|o| o.call_id).collect(),
        }
    }

    /// Applies what changed since `cursor()`. On `Err` the history is unusable: rebuild.
    pub fn apply(&mut self, delta: FrameDelta) -> Result<(), Stale> {
        let mut new_calls: HashMap<i64, Vec<ToolCallRow>> = HashMap::new();
        for call in delta.tools {
            if call.id <= self.last_tool_id {
                self.update_open(call);
            } else if call.message_id <= self.last_message_id {
                return Err(Stale::LateCall);
            } else {
                new_calls.entry(call.message_id).or_default().push(call);
            }
        }
        for row in delta.messages {
            if row.id <= self.last_message_id {
                if row.is_failed() && self.pending.iter().any(|p| p.id == row.id) {
                    return Err(Stale::PromptFailed);
                }
                continue;
            }
            let calls = new_calls.remove(&row.id).unwrap_or_default();
            self.push_row(row, calls);
        }
        self.last_tool_id = self.last_tool_id.max(delta.max_tool_id);
        Ok(())
    }

    /// The history to send now. With a count cap this also drops what fell out of the window.
    pub fn view(&mut self) -> HistoryView {
        let last = prompt_message(self.pending.iter().map(|p| p.text.clone()).collect());
        let last_chars = last.as_ref().map_or(0, message_chars);
        if let Some(start) = self.window_start() {
            self.trim_to(start);
        }
        let Some(rows) = self.rows.as_ref() else {
            return HistoryView {
                first: None,
                shared: self.msgs.clone(),
                range: self.front - self.base..self.msgs.len(),
                last,
                chars: self.weight.chars + last_chars,
            };
        };
        // The window starts at a prompt; the run of prompts it starts in is coalesced anew.
        let run = rows.iter().position(|r| r.prompt.is_none()).unwrap_or(rows.len());
        let first =
            prompt_message(rows.iter().take(run).filter_map(|r| r.prompt.clone()).collect());
        let first_chars = first.as_ref().map_or(0, message_chars);
        let Some(after_run) = rows.get(run).map(|r| r.msg_start) else {
            // The window starts among the prompts after the last reply: they are `first`.
            return HistoryView {
                first,
                shared: self.msgs.clone(),
                range: 0..0,
                last: None,
                chars: first_chars,
            };
        };
        // `msgs[front..after_run]` is at most the run's own coalesced message.
        let skipped: usize = self.msgs[self.front - self.base..after_run - self.base]
            .iter()
            .map(message_chars)
            .sum();
        HistoryView {
            first,
            shared: self.msgs.clone(),
            range: after_run - self.base..self.msgs.len(),
            last,
            chars: first_chars + self.weight.chars - skipped + last_chars,
        }
    }

    /// Approximate heap bytes held (for the cache's budget).
    pub fn memory(&self) -> usize {
        let rows = self.rows.as_ref().map_or(0, VecDeque::len);
        let results = self.turn_results.len() + self.open.len();
        self.weight.bytes
            + self.text_bytes
            + rows * std::mem::size_of::<RowMark>()
            + results * (std::mem::size_of::<ResultAt>() + 16)
            + (self.front - self.base) * NODE_BYTES
    }

    fn end(&self) -> usize {
        self.base + self.msgs.len()
    }

    fn push(&mut self, message: Value) {
        self.weight.add(Weight::of(&message));
        Arc::make_mut(&mut self.msgs).push(message);
    }

    /// Replaces the message at absolute `index` (ignored once it left the window).
    fn replace(&mut self, index: usize, message: Value) {
        if index < self.front {
            return;
        }
        let (new, base) = (Weight::of(&message), self.base);
        if let Some(slot) = Arc::make_mut(&mut self.msgs).get_mut(index - base) {
            let old = std::mem::replace(slot, message);
            self.weight.sub(Weight::of(&old));
            self.weight.add(new);
        }
    }

    fn push_row(&mut self, row: MessageRow, calls: Vec<ToolCallRow>) {
        self.last_message_id = self.last_message_id.max(row.id);
        if row.is_failed() {
            return;
        }
        if is_prompt(&row) {
            self.end_turn();
            let id = row.id;
            let text = user_text(row);
            self.text_bytes += text.len();
            let msg_start = self.end();
            if let Some(rows) = self.rows.as_mut() {
                self.text_bytes += text.len();
                rows.push_back(RowMark { prompt: Some(text.clone()), msg_start });
            }
            self.pending.push(Prompt { id, text });
            return;
        }
        self.flush_prompts();
        let msg_start = self.end();
        if let Some(rows) = self.rows.as_mut() {
            rows.push_back(RowMark { prompt: None, msg_start });
        }
        if calls.is_empty() {
            // An empty reply carries nothing and providers reject it.
            if !row.content.trim().is_empty() {
                self.push(assistant_message(row, &[]));
            }
            return;
        }
        self.push(assistant_message(row, &calls));
        for call in calls {
            let at = ResultAt { call_id: call.id, index: self.end(), name: call.name.clone() };
            if is_open(&call) {
                self.open.push(at.clone());
            }
            self.turn_results.push(at);
            self.push(tool_message(call, None));
        }
    }

    /// A newer prompt: the current turn's results become an earlier turn's.
    fn end_turn(&mut self) {
        let results = std::mem::take(&mut self.turn_results);
        if let Some(limit) = self.opts.max_tool_result_chars {
            for r in results {
                self.hide(&r, limit);
            }
        }
        self.turn_from = self.end();
    }

    /// Hides the result at `at` in place when it is longer than `limit` chars.
    fn hide(&mut self, at: &ResultAt, limit: usize) {
        if at.index < self.front {
            return;
        }
        let base = self.base;
        let Some(Value::String(content)) =
            self.msgs.get(at.index - base).and_then(|m| m.get("content"))
        else {
            return;
        };
        let Some(placeholder) = hidden(&at.name, content, limit) else { return };
        let old = Weight { chars: content.chars().count(), bytes: content.len() };
        let new = Weight { chars: placeholder.chars().count(), bytes: placeholder.len() };
        if let Some(Value::String(slot)) = Arc::make_mut(&mut self.msgs)
            .get_mut(at.index - base)
            .and_then(|m| m.get_mut("content"))
        {
            *slot = placeholder;
            self.weight.sub(old);
            self.weight.add(new);
        }
    }

    fn flush_prompts(&mut self) {
        let texts: Vec<String> = self.pending.drain(..).map(|p| p.text).collect();
        self.text_bytes -= texts.iter().map(String::len).sum::<usize>().min(self.text_bytes);
        if let Some(message) = prompt_message(texts) {
            self.push(message);
        }
    }

    fn update_open(&mut self, call: ToolCallRow) {
        let Some(pos) = self.open.iter().position(|o| o.call_id == call.id) else { return };
        let at = if is_open(&call) { self.open[pos].clone() } else { self.open.swap_remove(pos) };
        let hide = self.opts.max_tool_result_chars.filter(|_| at.index < self.turn_from);
        self.replace(at.index, tool_message(call, hide));
    }

    /// With a count cap: the index in `rows` of the window's first row.
    fn window_start(&self) -> Option<usize> {
        let rows = self.rows.as_ref()?;
        let turn_start = rows.iter().rposition(|r| r.prompt.is_some()).unwrap_or(0);
        Some(window_start(rows.len(), turn_start, self.opts.max_messages, |i| {
            rows[i].prompt.is_some()
        }))
    }

    /// Drops the rows before `start` and their messages: the window never moves back.
    fn trim_to(&mut self, start: usize) {
        let Some(rows) = self.rows.as_mut() else { return };
        for r in rows.drain(..start) {
            self.text_bytes -= r.prompt.map_or(0, |t| t.len()).min(self.text_bytes);
        }
        let front = rows.front().map_or(self.base + self.msgs.len(), |r| r.msg_start);
        for m in &self.msgs[self.front - self.base..front - self.base] {
            self.weight.sub(Weight::of(m));
        }
        self.front = front;
        self.open.retain(|o| o.index >= front);
        self.turn_results.retain(|o| o.index >= front);
        // Free the dropped front once it is most of the vector (amortised O(1) per message).
        let dead = self.front - self.base;
        if dead > 32 && dead * 2 > self.msgs.len() {
            Arc::make_mut(&mut self.msgs).drain(..dead);
            self.base = self.front;
        }
    }
}

/// A call whose result can still change.
fn is_open(call: &ToolCallRow) -> bool {
    !matches!(
        call.status(),
        Ok(ToolStatus::Done | ToolStatus::Failed | ToolStatus::Rejected | ToolStatus::Cancelled)
    )
}

fn calls_by_message(tools: Vec<ToolCallRow>) -> HashMap<i64, Vec<ToolCallRow>> {
    let mut calls: HashMap<i64, Vec<ToolCallRow>> = HashMap::new();
    for t in tools {
        calls.entry(t.message_id).or_default().push(t);
    }
    calls
}
