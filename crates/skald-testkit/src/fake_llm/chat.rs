//! The `/v1/chat/completions` handler: validation, reply selection, stalls and the wire response.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};

use super::record::RecordedRequest;
use super::render::{self, Answer, AnswerCall, CompletionMeta};
use super::reply::{Reply, Usage, WhenEmpty};
use super::server::{InFlight, Shared};
use super::validate::validate_chat_request;

fn error_body(message: &str, kind: &str) -> Value {
    json!({ "error": { "message": message, "type": kind, "param": null, "code": null } })
}

pub(super) fn error_response(status: StatusCode, message: &str, kind: &str) -> Response {
    (status, axum::Json(error_body(message, kind))).into_response()
}

pub(super) async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let _in_flight = InFlight::new(&shared);
    let (body, check) = match serde_json::from_slice::<Value>(&body) {
        Ok(v) => {
            let check = validate_chat_request(&v);
            (v, check)
        }
        Err(e) => (
            Value::String(String::from_utf8_lossy(&body).into_owned()),
            Err(format!("invalid JSON body: {e}")),
        ),
    };
    let model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let mut rec = RecordedRequest {
        seq: 0,
        path: uri.path().to_owned(),
        model: model.clone(),
        stream,
        body: Value::Null,
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into()))
            .collect(),
        validation_error: None,
        status: 0,
        unscripted: false,
    };
    if let Err(message) = check {
        rec.body = body;
        rec.validation_error = Some(message.clone());
        rec.status = 400;
        shared.record(rec);
        return error_response(StatusCode::BAD_REQUEST, &message, "invalid_request_error");
    }
    rec.body = body.clone();
    let seq = shared.record(rec);
    let model = model.unwrap_or_default();
    let response = loop {
        let reply = {
            let mut state = shared.lock();
            state.keyed.take(&body).or_else(|| state.queue.take_for(&model, &first_text(&body)))
        };
        match reply {
            Some(Reply::Stall { ms, then_hang }) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                if then_hang {
                    std::future::pending::<()>().await;
                }
            }
            other => {
                if other.is_none() {
                    shared.mark_unscripted(seq);
                }
                break respond(&shared, other, &body, &model, stream, seq);
            }
        }
    };
    shared.set_status(seq, response.status().as_u16());
    response
}

fn respond(
    shared: &Shared,
    reply: Option<Reply>,
    body: &Value,
    model: &str,
    stream: bool,
    seq: u64,
) -> Response {
    let meta = CompletionMeta {
        id: format!("chatcmpl-fake-{seq}"),
        created: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        model: model.to_owned(),
    };
    let prompt_tokens = prompt_chars(body) as u64 / 4;
    let answer = match reply {
        None => match shared.opts.when_empty {
            WhenEmpty::Echo => {
                let content = format!("fake reply to: {}", last_user_text(body));
                answer_of(Some(content), None, Vec::new(), None, prompt_tokens)
            }
            WhenEmpty::Error => {
                return error_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "no scripted reply",
                    "server_error",
                );
            }
        },
        Some(Reply::Text { content, reasoning, usage }) => {
            answer_of(Some(content), reasoning, Vec::new(), usage, prompt_tokens)
        }
        Some(Reply::ToolCalls { content, calls, usage }) => {
            let calls = calls
                .into_iter()
                .map(|c| AnswerCall {
                    id: c.id.unwrap_or_else(|| shared.fresh_call_id()),
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect();
            answer_of(content, None, calls, usage, prompt_tokens)
        }
        Some(Reply::Empty) => answer_of(Some(String::new()), None, Vec::new(), None, prompt_tokens),
        Some(Reply::Status { code, retry_after, body, .. }) => {
            return status_response(code, retry_after, body);
        }
        Some(Reply::DropMidStream { partial }) => {
            let mut parts: Vec<Bytes> = if stream {
                render::content_events(&meta, Some(&partial))
            } else {
                vec![Bytes::from(format!(
                    "{{\"id\":\"{}\",\"object\":\"chat.completion\",\"choices\":[{{\"message\":{{\"content\":{}",
                    meta.id,
                    json!(partial)
                ))]
            };
            parts.retain(|p| !p.is_empty());
            return body_response(shared, stream, parts, BodyEnd::Abort);
        }
        Some(Reply::HangMidStream { partial }) => {
            return body_response(
                shared,
                true,
                render::content_events(&meta, Some(&partial)),
                BodyEnd::Hang,
            );
        }
        Some(Reply::MalformedSse) => {
            let parts = if stream {
                let mut p = render::content_events(&meta, None);
                p.push(render::malformed_event(&meta));
                p
            } else {
                vec![Bytes::from_static(b"{\"id\": \"chatcmpl-fake\", \"choices\": [")]
            };
            return body_response(shared, stream, parts, BodyEnd::Close);
        }
        Some(Reply::StreamEndsBeforeDelta { error }) => {
            if !stream {
                return error_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "a scripted stream fault was taken by a plain request",
                    "server_error",
                );
            }
            let mut parts = vec![Bytes::from_static(b": ping\n\n")];
            parts.extend(error.map(|m| render::sse_event(&error_body(&m, "server_error"))));
            return body_response(shared, true, parts, BodyEnd::Close);
        }
        Some(Reply::Stall { .. }) => {
            // The handler resolves stalls before calling here; answer as if nothing was queued.
            return error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "unresolved stall",
                "server_error",
            );
        }
    };
    if stream {
        body_response(shared, true, render::stream_events(&meta, &answer), BodyEnd::Close)
    } else {
        axum::Json(render::completion_json(&meta, &answer)).into_response()
    }
}

fn answer_of(
    content: Option<String>,
    reasoning: Option<String>,
    calls: Vec<AnswerCall>,
    usage: Option<Usage>,
    prompt_tokens: u64,
) -> Answer {
    let usage = usage.unwrap_or_else(|| {
        let chars = content.as_deref().map_or(0, |c| c.chars().count())
            + reasoning.as_deref().map_or(0, |r| r.chars().count())
            + calls
                .iter()
                .map(|c| c.name.chars().count() + c.arguments.chars().count())
                .sum::<usize>();
        Usage { prompt_tokens, completion_tokens: chars as u64 / 4, cost: None }
    });
    Answer { content, reasoning, calls, usage }
}

fn status_response(code: u16, retry_after: Option<u64>, body: Option<String>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match body {
        Some(text) => match serde_json::from_str::<Value>(&text) {
            Ok(json @ Value::Object(_)) => (status, axum::Json(json)).into_response(),
            _ => (status, text).into_response(),
        },
        None => {
            let kind = match code {
                429 => "rate_limit_error",
                400..=499 => "invalid_request_error",
                _ => "server_error",
            };
            let message = format!("scripted HTTP {code}");
            error_response(status, &message, kind)
        }
    };
    if let Some(secs) = retry_after {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

/// What follows the last part of a 200 body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BodyEnd {
    /// The body ends normally.
    Close,
    /// The connection is cut (no terminating chunk, so the client sees an error).
    Abort,
    /// Nothing more is ever sent and the connection stays open.
    Hang,
}

/// A 200 response whose body is `parts`, written one part per write, then ended as `end` says.
fn body_response(shared: &Shared, sse: bool, parts: Vec<Bytes>, end: BodyEnd) -> Response {
    let delay = Duration::from_millis(shared.opts.chunk_delay_ms);
    let mut items: Vec<Result<Bytes, std::io::Error>> = parts.into_iter().map(Ok).collect();
    if end == BodyEnd::Abort {
        items.push(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "scripted drop mid-stream",
        )));
    }
    let first = AtomicBool::new(true);
    let hang = futures::stream::once(async move {
        if end == BodyEnd::Hang {
            std::future::pending::<()>().await;
        }
    })
    .filter_map(|()| async { None });
    let stream = futures::stream::iter(items).chain(hang).then(move |item| {
        let pause = !first.swap(false, Ordering::SeqCst) && !delay.is_zero();
        async move {
            if pause {
                tokio::time::sleep(delay).await;
            }
            if item.is_err() {
                // hyper buffers whatever is ready; pausing here lets it flush the headers and the
                // partial events to the socket before the error aborts the connection.
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            item
        }
    });
    let content_type = if sse { "text/event-stream" } else { "application/json" };
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Characters of the request's messages that a tokenizer would see (text, tool names, arguments).
fn prompt_chars(body: &Value) -> usize {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else { return 0 };
    messages
        .iter()
        .map(|m| {
            let content = m.get("content").map_or(0, text_chars);
            let calls = m.get("tool_calls").and_then(Value::as_array).map_or(0, |calls| {
                calls
                    .iter()
                    .filter_map(|c| c.get("function"))
                    .map(|f| {
                        ["name", "arguments"]
                            .iter()
                            .filter_map(|k| f.get(*k).and_then(Value::as_str))
                            .map(|s| s.chars().count())
                            .sum::<usize>()
                    })
                    .sum()
            });
            content + calls
        })
        .sum()
}

fn text_chars(content: &Value) -> usize {
    match content {
        Value::String(s) => s.chars().count(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(|s| s.chars().count())
            .sum(),
        _ => 0,
    }
}

/// The text of the first non-system message: the conversation's (or a sub-agent's) task.
fn first_text(body: &Value) -> String {
    let messages = body.get("messages").and_then(Value::as_array);
    let first = messages
        .into_iter()
        .flatten()
        .find(|m| m.get("role").and_then(Value::as_str) != Some("system"));
    first.map(text_of).unwrap_or_default()
}

fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn last_user_text(body: &Value) -> String {
    let messages = body.get("messages").and_then(Value::as_array);
    let Some(last) = messages
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return String::new();
    };
    text_of(last)
}
