//! The reliability matrix's engine rows (`docs/reliability.md`): each test drives the real engine
//! against the strict fake provider, records what the user, the model and the database saw, and
//! fails unless the row holds.

mod attacker;
mod config;
mod files;
mod mcp;
mod provider;

use serde_json::Value;
use skald_protocol::{ApprovalRequest, DebugMessage, DeltaKind, Event, SessionDetail, TurnEnd};
use skald_testkit::RecordedRequest;
use skald_testkit::matrix::excerpt;

/// Longest quote of one message in a table cell.
const QUOTE: usize = 90;

/// What a person following the session saw, in order: streamed text as one piece per model
/// reply, then every notice, error, approval request and answer.
pub fn user_view(events: &[Event]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut streamed = String::new();
    let flush = |streamed: &mut String, out: &mut Vec<String>| {
        if !streamed.is_empty() {
            out.push(format!("streamed {}", excerpt(streamed, QUOTE)));
            streamed.clear();
        }
    };
    for ev in events {
        if let Event::TokenDelta { kind: DeltaKind::Content, delta } = ev {
            streamed.push_str(delta);
            continue;
        }
        let line = match ev {
            Event::ToolError { error, .. } => Some(format!("tool error {}", excerpt(error, QUOTE))),
            Event::ToolRejected { reason, .. } => {
                Some(format!("call rejected {}", excerpt(reason, QUOTE)))
            }
            Event::ApprovalRequested { tool_name, request, .. } => Some(match request {
                ApprovalRequest::Write { path, diff } => {
                    format!("asked to approve a write to {path} ({})", diff.summary)
                }
                ApprovalRequest::Command { command, workdir } => {
                    format!("asked to approve command {} in {workdir}", excerpt(command, QUOTE))
                }
                ApprovalRequest::McpCall { server, tool } => {
                    format!("asked to approve {tool} of MCP server {server}")
                }
                ApprovalRequest::Other { .. } => format!("asked to approve {tool_name}"),
            }),
            Event::FileChanged { path, diff, .. } => {
                Some(format!("file changed {path} ({})", diff.summary))
            }
            Event::ModelFallback { from, to, reason } => {
                Some(format!("model {from} → {to} ({})", excerpt(reason, QUOTE)))
            }
            Event::ModelRetry { model, reason, .. } => {
                Some(format!("model {model} asked again ({})", excerpt(reason, QUOTE)))
            }
            Event::LlmFailed { last_error, .. } => {
                Some(format!("every model failed {}", excerpt(last_error, QUOTE)))
            }
            Event::TurnEnded { outcome: TurnEnd::Failed { reason } } => {
                Some(format!("error {}", excerpt(reason, QUOTE)))
            }
            Event::TurnEnded { outcome: TurnEnd::Exhausted { rounds } } => {
                Some(format!("stopped after {rounds} tool rounds"))
            }
            Event::TurnEnded { outcome: TurnEnd::Cancelled {} } => Some("stopped".to_string()),
            Event::Done { content, .. } => Some(format!("answer {}", excerpt(content, QUOTE))),
            _ => None,
        };
        if let Some(line) = line {
            flush(&mut streamed, &mut out);
            out.push(line);
        }
    }
    flush(&mut streamed, &mut out);
    out.join("; ")
}

/// The text a streaming view shows for the last model reply: content deltas since the last
/// round boundary (a `thinking` or `tool_start` closes a reply), less what a failed attempt
/// streamed (the clients drop it on `model_retry` and `model_fallback`, as `ui/src/backend/chat.ts`
/// does).
pub fn streamed_answer(events: &[Event]) -> String {
    let mut text = String::new();
    for ev in events {
        match ev {
            Event::TokenDelta { kind: DeltaKind::Content, delta } => text.push_str(delta),
            Event::Thinking { .. }
            | Event::ToolStart { .. }
            | Event::ModelRetry { .. }
            | Event::ModelFallback { .. } => text.clear(),
            _ => {}
        }
    }
    text
}

/// The session's rows as the debug view lists them: users (and whether they failed), answers,
/// and each call with its status.
pub fn stored_view(detail: &SessionDetail) -> String {
    let parts: Vec<String> = detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::User { content, failed, .. } => Some(format!(
                "user {}{}",
                excerpt(content, 40),
                if *failed { " (marked failed)" } else { "" }
            )),
            DebugMessage::Assistant { content, .. } => {
                Some(format!("answer {}", excerpt(content, 40)))
            }
            DebugMessage::Tool { label, status, .. } => {
                Some(format!("call `{label}` {}", status_name(*status)))
            }
            _ => None,
        })
        .collect();
    parts.join("; ")
}

fn status_name(status: skald_protocol::ToolStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The final answers stored in the session, in order.
pub fn answers(detail: &SessionDetail) -> Vec<String> {
    detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::Assistant { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

/// Whether the user's prompt is stored, unfailed.
pub fn prompt_kept(detail: &SessionDetail, prompt: &str) -> bool {
    detail.messages.iter().any(
        |m| matches!(m, DebugMessage::User { content, failed: false, .. } if content == prompt),
    )
}

pub fn messages(req: &RecordedRequest) -> Vec<Value> {
    req.body["messages"].as_array().cloned().unwrap_or_default()
}

pub fn text_of(msg: &Value) -> String {
    match &msg["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

/// The tool results (role `tool`) of a request, in order.
pub fn tool_results(req: &RecordedRequest) -> Vec<String> {
    messages(req).iter().filter(|m| m["role"] == "tool").map(text_of).collect()
}

/// How the model's requests went: how many, whether the provider refused any as invalid, and
/// whether every retry carried the same conversation as the first attempt.
pub fn retry_view(reqs: &[RecordedRequest]) -> String {
    let invalid = reqs.iter().filter(|r| r.validation_error.is_some()).count();
    let first = reqs.first().map(messages);
    let same = reqs.iter().skip(1).all(|r| Some(messages(r)) == first);
    let mut s = format!("{} request{}", reqs.len(), if reqs.len() == 1 { "" } else { "s" });
    if reqs.len() > 1 {
        s.push_str(if same {
            ", each retry with the same conversation"
        } else {
            ", the retries with a different conversation"
        });
    }
    let plain = reqs.iter().skip(1).filter(|r| !r.stream).count();
    if reqs.first().is_some_and(|r| r.stream) && plain > 0 {
        s.push_str(&format!(", {plain} of them asked without streaming"));
    }
    if invalid > 0 {
        s.push_str(&format!(", {invalid} refused by the provider as invalid"));
    }
    s
}
