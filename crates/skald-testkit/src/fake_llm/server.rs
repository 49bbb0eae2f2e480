//! The HTTP server: `/v1/chat/completions`, `/v1/models`, the `/__fake/*` control endpoints and
//! the `FakeLlm` handle that owns the background task.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use super::queue::ReplyQueue;
use super::record::RecordedRequest;
use super::render::{self, Answer, AnswerCall, CompletionMeta};
use super::reply::{Reply, Usage, WhenEmpty};
use super::script::Script;
use super::validate::validate_chat_request;

/// How to start a [`FakeLlm`].
#[derive(Clone, Debug)]
pub struct FakeLlmOptions {
    /// Ids listed by `/v1/models`.
    pub models: Vec<String>,
    /// What to answer when no reply is queued.
    pub when_empty: WhenEmpty,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Pause between SSE events (0 = none), for UIs that want to watch tokens arrive.
    pub chunk_delay_ms: u64,
}

impl Default for FakeLlmOptions {
    fn default() -> Self {
        FakeLlmOptions {
            models: vec!["fake-model".to_owned(), "fake-model-2".to_owned()],
            when_empty: WhenEmpty::Echo,
            port: 0,
            chunk_delay_ms: 0,
        }
    }
}

/// A running fake OpenAI-compatible provider. Dropping it shuts the server down, live
/// connections included.
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl FakeLlm {
    /// Binds 127.0.0.1:0 and serves in a background tokio task.
    pub async fn start() -> std::io::Result<FakeLlm> {
        FakeLlm::start_with(FakeLlmOptions::default()).await
    }

    pub async fn start_with(opts: FakeLlmOptions) -> std::io::Result<FakeLlm> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, opts.port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(opts));
        let task = tokio::spawn(accept_loop(listener, router(shared.clone())));
        Ok(FakeLlm { addr, shared, task })
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues a reply on the global FIFO (served to any model).
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push(None, reply);
    }

    /// Queues a reply served only to requests for `model` (ahead of the global FIFO).
    pub fn push_for_model(&self, model: &str, reply: Reply) {
        self.shared.lock().queue.push(Some(model), reply);
    }

    /// Queues every reply of a script.
    pub fn push_script(&self, script: Script) {
        let mut state = self.shared.lock();
        for reply in script.replies {
            state.queue.push(None, reply);
        }
        for (model, replies) in script.by_model {
            for reply in replies {
                state.queue.push(Some(&model), reply);
            }
        }
    }

    /// Every `/v1/chat/completions` request so far, in arrival order (rejected ones included).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    pub fn pending_replies(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Drops queued replies and recorded requests (sequence numbers restart at 1).
    pub fn reset(&self) {
        self.shared.lock().reset();
    }

    /// Chat-completion requests whose handler is still running (e.g. stalled). Lets tests see
    /// that a client hanging up really ends the server side.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every connection task.
        self.task.abort();
    }
}

struct Shared {
    opts: FakeLlmOptions,
    state: Mutex<MutableState>,
    next_call_id: AtomicU64,
    in_flight: AtomicUsize,
}

#[derive(Default)]
struct MutableState {
    queue: ReplyQueue,
    requests: Vec<RecordedRequest>,
    last_seq: u64,
}

impl MutableState {
    fn reset(&mut self) {
        self.queue.clear();
        self.requests.clear();
        self.last_seq = 0;
    }
}

impl Shared {
    fn new(opts: FakeLlmOptions) -> Shared {
        Shared {
            opts,
            state: Mutex::new(MutableState::default()),
            next_call_id: AtomicU64::new(1),
            in_flight: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, MutableState> {
        // A panicking test thread must not make every later assertion panic too.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends a record and returns its sequence number.
    fn record(&self, mut rec: RecordedRequest) -> u64 {
        let mut state = self.lock();
        state.last_seq += 1;
        rec.seq = state.last_seq;
        state.requests.push(rec);
        state.last_seq
    }

    fn set_status(&self, seq: u64, status: u16) {
        let mut state = self.lock();
        if let Some(rec) = state.requests.iter_mut().rev().find(|r| r.seq == seq) {
            rec.status = status;
        }
    }

    fn fresh_call_id(&self) -> String {
        format!("call_fake_{}", self.next_call_id.fetch_add(1, Ordering::SeqCst))
    }
}

/// Counts a running chat handler; the count drops when the handler future is dropped, which is
/// also what happens when the client hangs up mid-stall.
struct InFlight(Arc<Shared>);

impl InFlight {
    fn new(shared: &Arc<Shared>) -> InFlight {
        shared.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn accept_loop(listener: TcpListener, app: Router) {
    let mut connections = JoinSet::new();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Typically EMFILE; back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        // Without NODELAY, Nagle + delayed ACK hold small SSE events back by ~40 ms.
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        connections.spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
        });
        while connections.try_join_next().is_some() {}
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(list_models))
        .route("/__fake/replies", post(control_push))
        .route("/__fake/requests", get(control_requests))
        .route("/__fake/reset", post(control_reset))
        .fallback(not_found)
        .with_state(shared)
}

fn error_body(message: &str, kind: &str) -> Value {
    json!({ "error": { "message": message, "type": kind, "param": null, "code": null } })
}

fn error_response(status: StatusCode, message: &str, kind: &str) -> Response {
    (status, axum::Json(error_body(message, kind))).into_response()
}

async fn not_found(uri: Uri) -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        &format!("unknown path {}", uri.path()),
        "invalid_request_error",
    )
}

async fn list_models(State(shared): State<Arc<Shared>>) -> Response {
    let data: Vec<Value> = shared
        .opts
        .models
        .iter()
        .map(|id| json!({ "id": id, "object": "model", "created": 0, "owned_by": "skald-testkit" }))
        .collect();
    axum::Json(json!({ "object": "list", "data": data })).into_response()
}

async fn control_push(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let parsed = serde_json::from_slice::<Value>(&body).and_then(|v| match v {
        Value::Array(_) => serde_json::from_value::<Vec<Reply>>(v),
        other => serde_json::from_value::<Reply>(other).map(|r| vec![r]),
    });
    let replies = match parsed {
        Ok(r) => r,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                &format!("invalid reply JSON: {e}"),
                "invalid_request_error",
            );
        }
    };
    let model = query.get("model").map(String::as_str);
    let queued = replies.len();
    let mut state = shared.lock();
    for reply in replies {
        state.queue.push(model, reply);
    }
    axum::Json(json!({ "queued": queued, "pending": state.queue.len() })).into_response()
}

async fn control_requests(State(shared): State<Arc<Shared>>) -> Response {
    axum::Json(shared.lock().requests.clone()).into_response()
}

async fn control_reset(State(shared): State<Arc<Shared>>) -> Response {
    shared.lock().reset();
    axum::Json(json!({ "ok": true })).into_response()
}

async fn chat_completions(
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
        let reply = shared.lock().queue.take(&model);
        match reply {
            Some(Reply::Stall { ms, then_hang }) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                if then_hang {
                    std::future::pending::<()>().await;
                }
            }
            other => break respond(&shared, other, &body, &model, stream, seq),
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
            return body_response(shared, stream, parts, true);
        }
        Some(Reply::MalformedSse) => {
            let parts = if stream {
                let mut p = render::content_events(&meta, None);
                p.push(render::malformed_event(&meta));
                p
            } else {
                vec![Bytes::from_static(b"{\"id\": \"chatcmpl-fake\", \"choices\": [")]
            };
            return body_response(shared, stream, parts, false);
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
        body_response(shared, true, render::stream_events(&meta, &answer), false)
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
        Usage { prompt_tokens, completion_tokens: chars as u64 / 4 }
    });
    Answer { content, reasoning, calls, usage }
}

fn status_response(code: u16, retry_after: Option<u64>, body: Option<String>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match body {
        Some(text) => (status, text).into_response(),
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

/// A 200 response whose body is `parts`, written one part per write; with `abort`, the
/// connection is cut after the last part (no terminating chunk, so the client sees an error).
fn body_response(shared: &Shared, sse: bool, parts: Vec<Bytes>, abort: bool) -> Response {
    let delay = Duration::from_millis(shared.opts.chunk_delay_ms);
    let mut items: Vec<Result<Bytes, std::io::Error>> = parts.into_iter().map(Ok).collect();
    if abort {
        items.push(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "scripted drop mid-stream",
        )));
    }
    let first = std::sync::atomic::AtomicBool::new(true);
    let stream = futures::stream::iter(items).then(move |item| {
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
    match last.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
