//! The `FakeLlm` handle, its shared state, the accept loop, the router and the control endpoints.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use super::chat::error_response;
use super::check::{Allowed, script_problems};
use super::keyed::{KeyedReplies, KeyedReply, When};
use super::queue::ReplyQueue;
use super::record::RecordedRequest;
use super::reply::{Reply, WhenEmpty};
use super::script::Script;

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
    /// Panic on drop when the script was not followed (see the crate docs). Off only for the
    /// standalone binary, whose callers read `/__fake/requests` instead.
    pub check_on_drop: bool,
}

impl Default for FakeLlmOptions {
    fn default() -> Self {
        FakeLlmOptions {
            models: vec!["fake-model".to_owned(), "fake-model-2".to_owned()],
            when_empty: WhenEmpty::Error,
            port: 0,
            chunk_delay_ms: 0,
            check_on_drop: true,
        }
    }
}

/// A running fake OpenAI-compatible provider. Dropping it shuts the server down, live
/// connections included, and fails the test when the script was not followed (see the crate
/// docs).
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

    /// Queues a reply served to requests whose first non-system message contains `key` (ahead
    /// of the model and global queues). A sub-agent's first message is its task, so concurrent
    /// sub-agents each get their own script whatever order their requests arrive in.
    pub fn push_for_prompt(&self, key: &str, reply: Reply) {
        self.shared.lock().queue.push_for_prompt(key, reply);
    }

    /// Answers every request that `when` matches with `reply`, as often as such a request
    /// comes, ahead of the queues (the first matching keyed reply wins). For tests that repeat
    /// requests, e.g. by killing and resuming the engine. Panics on a `Stall`, which only makes
    /// sense in order.
    pub fn on(&self, when: When, reply: Reply) {
        if let Err(e) = self.shared.lock().keyed.push(KeyedReply { when, reply }) {
            panic!("{e}");
        }
    }

    /// Queues every reply of a script.
    pub fn push_script(&self, script: Script) {
        let mut state = self.shared.lock();
        for keyed in script.keyed {
            if let Err(e) = state.keyed.push(keyed) {
                panic!("{e}");
            }
        }
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
        *self.shared.in_flight.borrow()
    }

    /// Waits until exactly `n` chat-completion handlers run: 1 once a stalled request has
    /// arrived, 0 once the client's hang-up has ended it. Panics after [`crate::HANG_GUARD`].
    pub async fn wait_in_flight(&self, n: usize) {
        let mut rx = self.shared.in_flight.subscribe();
        let reached = tokio::time::timeout(crate::HANG_GUARD, rx.wait_for(|now| *now == n)).await;
        assert!(
            matches!(reached, Ok(Ok(_))),
            "the fake provider never had {n} requests in flight (it has {})",
            self.in_flight()
        );
    }

    /// Panics, naming each problem with the request body, unless every request so far was
    /// answered by a scripted reply and no reply is left. The drop check does the same at the
    /// end of the test; call this where a clearer failure point helps.
    pub fn assert_script_consumed(&self) {
        if let Some(report) = self.script_report() {
            panic!("{report}");
        }
    }

    /// This test leaves scripted replies unconsumed on purpose (e.g. it stops a turn
    /// mid-script); the drop check then ignores leftovers.
    pub fn allow_leftover_replies(&self) {
        self.shared.allowed.leftover.store(true, Ordering::SeqCst);
    }

    /// This test sends requests with no reply queued on purpose (it tests the `WhenEmpty`
    /// answer itself); the drop check then ignores them.
    pub fn allow_unscripted_requests(&self) {
        self.shared.allowed.unscripted.store(true, Ordering::SeqCst);
    }

    /// This test sends requests the validator rejects on purpose; the drop check then ignores
    /// them.
    pub fn allow_rejected_requests(&self) {
        self.shared.allowed.rejected.store(true, Ordering::SeqCst);
    }

    /// What [`FakeLlm::assert_script_consumed`] would panic with, or `None` when the script was
    /// followed.
    pub fn script_report(&self) -> Option<String> {
        let state = self.shared.lock();
        script_problems(&state.requests, &state.queue, &state.keyed, &self.shared.allowed)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every connection task.
        self.task.abort();
        // A second panic while unwinding would abort the process and hide the first failure.
        if self.shared.opts.check_on_drop && !std::thread::panicking() {
            self.assert_script_consumed();
        }
    }
}

pub(super) struct Shared {
    pub(super) opts: FakeLlmOptions,
    state: Mutex<MutableState>,
    next_call_id: AtomicU64,
    /// A watch rather than a counter so tests can wait for a value instead of polling.
    pub(super) in_flight: watch::Sender<usize>,
    allowed: Allowed,
}

#[derive(Default)]
pub(super) struct MutableState {
    pub(super) queue: ReplyQueue,
    pub(super) keyed: KeyedReplies,
    pub(super) requests: Vec<RecordedRequest>,
    last_seq: u64,
}

impl MutableState {
    fn reset(&mut self) {
        self.queue.clear();
        self.keyed.clear();
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
            in_flight: watch::Sender::new(0),
            allowed: Allowed::default(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, MutableState> {
        // A panicking test thread must not make every later assertion panic too.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends a record and returns its sequence number.
    pub(super) fn record(&self, mut rec: RecordedRequest) -> u64 {
        let mut state = self.lock();
        state.last_seq += 1;
        rec.seq = state.last_seq;
        state.requests.push(rec);
        state.last_seq
    }

    pub(super) fn mark_unscripted(&self, seq: u64) {
        let mut state = self.lock();
        if let Some(rec) = state.requests.iter_mut().rev().find(|r| r.seq == seq) {
            rec.unscripted = true;
        }
    }

    pub(super) fn set_status(&self, seq: u64, status: u16) {
        let mut state = self.lock();
        if let Some(rec) = state.requests.iter_mut().rev().find(|r| r.seq == seq) {
            rec.status = status;
        }
    }

    pub(super) fn fresh_call_id(&self) -> String {
        format!("call_fake_{}", self.next_call_id.fetch_add(1, Ordering::SeqCst))
    }
}

/// Counts a running chat handler; the count drops when the handler future is dropped, which is
/// also what happens when the client hangs up mid-stall.
pub(super) struct InFlight(Arc<Shared>);

impl InFlight {
    pub(super) fn new(shared: &Arc<Shared>) -> InFlight {
        shared.in_flight.send_modify(|n| *n += 1);
        InFlight(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.send_modify(|n| *n -= 1);
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
        .route("/v1/chat/completions", post(super::chat::chat_completions))
        .route("/v1/models", get(list_models))
        .route("/__fake/replies", post(control_push))
        .route("/__fake/requests", get(control_requests))
        .route("/__fake/reset", post(control_reset))
        .fallback(not_found)
        .with_state(shared)
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
        // `?prompt=KEY`: for requests whose first message contains KEY (`push_for_prompt`).
        match query.get("prompt") {
            Some(key) => state.queue.push_for_prompt(key, reply),
            None => state.queue.push(model, reply),
        }
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
