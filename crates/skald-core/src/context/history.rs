//! Stored rows → chat messages: coalescing, tool results by status, healing, hiding.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use skald_store::repo::history::{MessageRow, Role};
use skald_store::repo::tools::ToolCallRow;

use super::call_results::{hidden_placeholder, tool_content};

/// How the history part of a request is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryOptions {
    /// Count cap when compaction is off; `None` = no cap.
    pub max_messages: Option<usize>,
    /// Results of earlier turns longer than this are replaced by a placeholder.
    pub max_tool_result_chars: Option<usize>,
}

/// The id a call carries in requests: derived from its row so it is unique and stable forever.
pub fn request_call_id(tool_call_id: i64) -> String {
    format!("call_{tool_call_id}")
}

/// Builds the conversation messages of one frame.
///
/// `rows` are the frame's rows after the compaction boundary in id order (failed rows are
/// skipped here), `tools` the calls of those rows in id order. Both are consumed: their texts
/// move into the request instead of being copied (a long frame carries megabytes of them).
pub fn history_messages(
    rows: Vec<MessageRow>,
    tools: Vec<ToolCallRow>,
    opts: HistoryOptions,
) -> Vec<Value> {
    let live: Vec<MessageRow> = rows.into_iter().filter(|r| !r.is_failed()).collect();
    let mut calls: HashMap<i64, Vec<ToolCallRow>> = HashMap::new();
    for t in tools {
        calls.entry(t.message_id).or_default().push(t);
    }
    let turn_start = live.iter().rposition(is_prompt).unwrap_or(0);
    let start = window_start(live.len(), turn_start, opts.max_messages, |i| is_prompt(&live[i]));
    let mut out = Vec::with_capacity(live.len() - start);
    let mut pending_user: Vec<String> = Vec::new();
    let flush = |pending: &mut Vec<String>, out: &mut Vec<Value>| {
        out.extend(prompt_message(std::mem::take(pending)));
    };
    for (i, row) in live.into_iter().enumerate().skip(start) {
        if is_prompt(&row) {
            pending_user.push(user_text(row));
            continue;
        }
        flush(&mut pending_user, &mut out);
        let row_calls = calls.remove(&row.id).unwrap_or_default();
        if row_calls.is_empty() {
            if row.content.trim().is_empty() {
                continue; // an empty assistant row carries nothing and providers reject it
            }
            out.push(assistant_message(row, &[]));
            continue;
        }
        out.push(assistant_message(row, &row_calls));
        let earlier_turn = i < turn_start;
        for call in row_calls {
            let limit = opts.max_tool_result_chars.filter(|_| earlier_turn);
            out.push(tool_message(call, limit));
        }
    }
    flush(&mut pending_user, &mut out);
    out
}

/// Index of the first of `len` live rows a count cap of `max` keeps: the cut snaps forward to a
/// prompt and never starts inside the current turn (whose newest prompt is `turn_start`), so its
/// prompt and every call and result stay.
pub(super) fn window_start(
    len: usize,
    turn_start: usize,
    max: Option<usize>,
    is_prompt_at: impl Fn(usize) -> bool,
) -> usize {
    let Some(max) = max.filter(|m| len > *m) else { return 0 };
    let mut start = (len - max).min(turn_start);
    while start < turn_start && !is_prompt_at(start) {
        start += 1;
    }
    start
}

/// Whether a row is a prompt (the user's, or a parent agent's to a sub-agent).
pub(super) fn is_prompt(row: &MessageRow) -> bool {
    matches!(row.role(), Ok(Role::User | Role::Agent))
}

/// The one user message consecutive prompts become (their non-blank texts joined by blank
/// lines), or none when every text is blank.
pub(super) fn prompt_message(mut texts: Vec<String>) -> Option<Value> {
    texts.retain(|t| !t.trim().is_empty());
    let content = match texts.len() {
        0 => return None,
        1 => texts.pop().unwrap_or_default(),
        _ => texts.join("\n\n"),
    };
    Some(message("user", content))
}

/// The result message of a call; with `hide_over`, a result longer than that many chars is
/// replaced by the placeholder (results of earlier turns).
pub(super) fn tool_message(call: ToolCallRow, hide_over: Option<usize>) -> Value {
    let id = request_call_id(call.id);
    let name = call.name.clone();
    let content = hide_long(&name, tool_content(call), hide_over);
    let mut msg = Map::with_capacity(3);
    msg.insert("role".into(), Value::String("tool".into()));
    msg.insert("tool_call_id".into(), Value::String(id));
    msg.insert("content".into(), Value::String(content));
    Value::Object(msg)
}

/// `content`, or the placeholder when it is longer than `limit` chars.
fn hide_long(name: &str, content: String, limit: Option<usize>) -> String {
    match limit.and_then(|l| hidden(name, &content, l)) {
        Some(placeholder) => placeholder,
        None => content,
    }
}

/// The placeholder for a result of `name` longer than `limit` chars, `None` when it fits.
pub(super) fn hidden(name: &str, content: &str, limit: usize) -> Option<String> {
    // Only results longer than the limit in bytes can be longer in chars.
    let len = if content.len() > limit { content.chars().count() } else { 0 };
    (len > limit).then(|| hidden_placeholder(name, len, limit))
}

/// `{"role": role, "content": content}` without copying the content.
fn message(role: &str, content: String) -> Value {
    let mut msg = Map::with_capacity(2);
    msg.insert("role".into(), Value::String(role.into()));
    msg.insert("content".into(), Value::String(content));
    Value::Object(msg)
}

pub(super) fn user_text(row: MessageRow) -> String {
    match row.metadata.as_deref().and_then(attachments_block) {
        Some(block) => format!("{}\n\n{block}", row.content),
        None => row.content,
    }
}

/// The `[SYSTEM INFO]` block listing a message's attachments, derived on the fly (never stored).
fn attachments_block(metadata: &str) -> Option<String> {
    let v: Value = serde_json::from_str(metadata).ok()?;
    let list = v.get("attachments")?.as_array()?;
    if list.is_empty() {
        return None;
    }
    let mut s = String::from("[SYSTEM INFO] The user attached these files:");
    for a in list {
        let path = a.get("path").and_then(Value::as_str).unwrap_or("?");
        let name = a.get("name").and_then(Value::as_str).unwrap_or(path);
        s.push_str(&format!("\n- {name}: {path}"));
    }
    Some(s)
}

pub(super) fn assistant_message(row: MessageRow, calls: &[ToolCallRow]) -> Value {
    let mut msg = Map::with_capacity(4);
    msg.insert("role".into(), Value::String("assistant".into()));
    msg.insert("content".into(), Value::String(row.content));
    if let Some(r) = row.reasoning_content.filter(|r| !r.is_empty()) {
        msg.insert("reasoning_content".into(), Value::String(r));
    }
    if !calls.is_empty() {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({
                    "id": request_call_id(c.id),
                    "type": "function",
                    "function": { "name": c.name, "arguments": replayable_arguments(c) },
                })
            })
            .collect();
        msg.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    Value::Object(msg)
}

/// Invalid JSON the model once produced is replayed as `{}`: its error result already told the
/// model what was wrong, and some providers reject unparseable arguments in history.
fn replayable_arguments(call: &ToolCallRow) -> String {
    match call.arguments.as_deref() {
        // Syntax-checked without building the value: this runs for every call of every round.
        Some(a)
            if a.trim_start().starts_with('{')
                && serde_json::from_str::<serde::de::IgnoredAny>(a).is_ok() =>
        {
            a.to_string()
        }
        _ => "{}".to_string(),
    }
}
