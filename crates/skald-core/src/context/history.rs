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
    let is_prompt = |r: &MessageRow| matches!(r.role(), Ok(Role::User | Role::Agent));
    let turn_start = live.iter().rposition(is_prompt).unwrap_or(0);
    let mut start = 0;
    if let Some(max) = opts.max_messages
        && live.len() > max
    {
        // Never start inside the current turn: its prompt and every call/result stay.
        start = (live.len() - max).min(turn_start);
        while start < turn_start && !is_prompt(&live[start]) {
            start += 1;
        }
    }
    let mut out = Vec::with_capacity(live.len() - start);
    let mut pending_user: Vec<String> = Vec::new();
    let flush = |pending: &mut Vec<String>, out: &mut Vec<Value>| {
        if !pending.is_empty() {
            let content = if pending.len() == 1 {
                pending.pop().unwrap_or_default()
            } else {
                pending.join("\n\n")
            };
            out.push(message("user", content));
            pending.clear();
        }
    };
    for (i, row) in live.into_iter().enumerate().skip(start) {
        if is_prompt(&row) {
            let text = user_text(row);
            if !text.trim().is_empty() {
                pending_user.push(text);
            }
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
            let id = request_call_id(call.id);
            let name = call.name.clone();
            let mut content = tool_content(call);
            if let (true, Some(limit)) = (earlier_turn, opts.max_tool_result_chars) {
                // Only results longer than the limit in bytes can be longer in chars.
                let len = if content.len() > limit { content.chars().count() } else { 0 };
                if len > limit {
                    content = hidden_placeholder(&name, len, limit);
                }
            }
            let mut msg = Map::with_capacity(3);
            msg.insert("role".into(), Value::String("tool".into()));
            msg.insert("tool_call_id".into(), Value::String(id));
            msg.insert("content".into(), Value::String(content));
            out.push(Value::Object(msg));
        }
    }
    flush(&mut pending_user, &mut out);
    out
}

/// `{"role": role, "content": content}` without copying the content.
fn message(role: &str, content: String) -> Value {
    let mut msg = Map::with_capacity(2);
    msg.insert("role".into(), Value::String(role.into()));
    msg.insert("content".into(), Value::String(content));
    Value::Object(msg)
}

fn user_text(row: MessageRow) -> String {
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

fn assistant_message(row: MessageRow, calls: &[ToolCallRow]) -> Value {
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
