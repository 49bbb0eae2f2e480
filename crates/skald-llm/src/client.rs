//! The HTTP client: one attempt against one endpoint, and the retry / fallback loop over a chain.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use tokio_util::sync::CancellationToken;

use crate::assemble::TurnAssembler;
use crate::backoff::{Sleeper, TokioSleeper, backoff_delay, parse_retry_after};
use crate::endpoint::ModelEndpoint;
use crate::error::{Disposition, LlmError};
use crate::health::HealthTracker;
use crate::request::{PROMPT_CACHE_HEADER, body_bytes};
use crate::settings::LlmSettings;
use crate::sse::{SseEvent, SseParser};
use crate::turn::{ChatRequest, LlmNotice, LlmTurn, StreamDelta};

/// Longest provider error body kept in an error message.
const MAX_ERROR_BODY: usize = 2000;

/// OpenAI-compatible chat-completions client. Cheap to clone; clones share the connection pool,
/// the health tracker and what was learnt about servers' quirks.
#[derive(Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    settings: LlmSettings,
    health: Arc<HealthTracker>,
    sleeper: Arc<dyn Sleeper>,
    /// Aliases whose server failed a streamed request with tools (refused it, or broke the stream
    /// before any part of the reply) but answered a plain one; they get non-streaming requests
    /// whenever tools are sent.
    no_stream_tools: Arc<Mutex<HashSet<String>>>,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl LlmClient {
    pub fn new(settings: LlmSettings) -> Result<Self, LlmError> {
        Self::with_parts(settings, Arc::new(HealthTracker::new()), Arc::new(TokioSleeper))
    }

    /// With a shared health tracker and a custom sleeper (tests record or skip the waits).
    pub fn with_parts(
        settings: LlmSettings,
        health: Arc<HealthTracker>,
        sleeper: Arc<dyn Sleeper>,
    ) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            // Streamed tokens are tiny writes; Nagle would batch them behind delayed ACKs.
            .tcp_nodelay(true)
            .user_agent(concat!("skald/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(e.without_url().to_string()))?;
        Ok(LlmClient {
            http,
            settings,
            health,
            sleeper,
            no_stream_tools: Arc::new(Mutex::new(HashSet::new())),
        })
    }

    /// The same client (connection pool, health, learnt quirks) with other timeouts: the
    /// engine keeps one client for its whole life and applies the current configuration per turn,
    /// so connections (and their TLS sessions) and model health survive from turn to turn.
    pub fn with_settings(&self, settings: LlmSettings) -> Self {
        Self { settings, ..self.clone() }
    }

    pub fn health(&self) -> &HealthTracker {
        &self.health
    }

    pub fn health_handle(&self) -> Arc<HealthTracker> {
        Arc::clone(&self.health)
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// One round: try `chain[0]` with retries, then fall back along `chain`. The returned turn
    /// names the alias that answered (`LlmTurn::model`) so the caller can stay on it.
    ///
    /// Transient failures (429, 5xx, connect errors, timeouts, dropped or malformed streams,
    /// empty completions) are retried with backoff up to `max_retries`; then the next model is
    /// tried (`ModelFallback`). A 404 moves to the next model at once. 400, 401, 403, 422 and
    /// other client errors fail the round immediately: another model would be sent the same
    /// request. Exhaustion and fail-fast both emit `LlmFailed`. Cancellation wins everywhere,
    /// including backoff sleeps, and drops the HTTP request.
    pub async fn complete(
        &self,
        chain: &[ModelEndpoint],
        req: &ChatRequest,
        cancel: CancellationToken,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
        on_notice: &mut (dyn FnMut(LlmNotice) + Send),
    ) -> Result<LlmTurn, LlmError> {
        if chain.is_empty() {
            on_notice(LlmNotice::LlmFailed {
                tried: Vec::new(),
                last_error: LlmError::NoModels.to_string(),
            });
            return Err(LlmError::NoModels);
        }
        let mut tried: Vec<String> = Vec::new();
        let mut last_error = String::new();
        for endpoint in chain {
            if tried.contains(&endpoint.name) {
                continue;
            }
            if let Some(prev) = tried.last() {
                tracing::warn!(from = %prev, to = %endpoint.name, reason = %last_error, "model fallback");
                on_notice(LlmNotice::ModelFallback {
                    from: prev.clone(),
                    to: endpoint.name.clone(),
                    reason: last_error.clone(),
                });
            }
            tried.push(endpoint.name.clone());
            match self.with_retries(endpoint, req, &cancel, on_delta, on_notice).await {
                Ok(turn) => return Ok(turn),
                Err(Outcome::Cancelled) => return Err(LlmError::Cancelled),
                Err(Outcome::NextModel(e)) => last_error = e.to_string(),
                Err(Outcome::FailFast(e)) => {
                    // An overflow is the caller's to fix (it compacts and asks again): no failure yet.
                    if !matches!(e, LlmError::ContextOverflow { .. }) {
                        on_notice(LlmNotice::LlmFailed { tried, last_error: e.to_string() });
                    }
                    return Err(e);
                }
            }
        }
        on_notice(LlmNotice::LlmFailed { tried: tried.clone(), last_error: last_error.clone() });
        Err(LlmError::AllFailed { tried, last_error })
    }

    async fn with_retries(
        &self,
        endpoint: &ModelEndpoint,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
        on_notice: &mut (dyn FnMut(LlmNotice) + Send),
    ) -> Result<LlmTurn, Outcome> {
        let mut retry: u32 = 0;
        let mut forced_plain = false;
        loop {
            let stream = req.stream
                && endpoint.stream
                && !forced_plain
                && !self.streams_without_tools(endpoint, req);
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Outcome::Cancelled),
                r = self.attempt(endpoint, req, stream, on_delta) => r,
            };
            let failed = match result {
                Ok(turn) => {
                    self.health.record_success(&endpoint.name);
                    if forced_plain {
                        self.lock_quirks().insert(endpoint.name.clone());
                    }
                    return Ok(turn);
                }
                Err(Failed { error: LlmError::Cancelled, .. }) => return Err(Outcome::Cancelled),
                Err(f) => f,
            };
            let err = &failed.error;
            if err.counts_against_health() {
                self.health.record_failure(&endpoint.name);
            }
            tracing::warn!(model = %endpoint.name, error = %err, attempt = retry + 1, "llm attempt failed");
            if stream && !forced_plain && !req.tools.is_empty() && failed.fails_streamed_tools() {
                // Some servers cannot stream tool calls: ask the same model once without streaming.
                forced_plain = true;
                continue;
            }
            let err = failed.error;
            match err.disposition() {
                Disposition::Retry { retry_after } if retry < self.settings.max_retries => {
                    let delay = backoff_delay(
                        retry,
                        self.settings.backoff_base,
                        self.settings.backoff_cap,
                        retry_after,
                    );
                    retry += 1;
                    on_notice(LlmNotice::Retrying {
                        model: endpoint.name.clone(),
                        attempt: retry,
                        reason: err.to_string(),
                        delay,
                    });
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Err(Outcome::Cancelled),
                        () = self.sleeper.sleep(delay) => {}
                    }
                }
                Disposition::Retry { .. } | Disposition::NextModel => {
                    return Err(Outcome::NextModel(err));
                }
                Disposition::FailFast => return Err(Outcome::FailFast(err)),
            }
        }
    }

    fn streams_without_tools(&self, endpoint: &ModelEndpoint, req: &ChatRequest) -> bool {
        !req.tools.is_empty() && self.lock_quirks().contains(&endpoint.name)
    }

    fn lock_quirks(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.no_stream_tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One HTTP request to one endpoint, streamed or not.
    async fn attempt(
        &self,
        endpoint: &ModelEndpoint,
        req: &ChatRequest,
        stream: bool,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<LlmTurn, Failed> {
        let body = body_bytes(endpoint, req, stream).map_err(|e| {
            Failed::from(LlmError::Config(format!("the request body could not be written: {e}")))
        })?;
        let mut rb = self
            .http
            .post(endpoint.chat_url())
            .header(ACCEPT, if stream { "text/event-stream" } else { "application/json" })
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = endpoint.api_key.as_deref().filter(|k| !k.is_empty()) {
            rb = rb.bearer_auth(key);
        }
        if endpoint.prompt_cache {
            rb = rb.header(PROMPT_CACHE_HEADER.0, PROMPT_CACHE_HEADER.1);
        }

        let timeout = self.settings.request_timeout;
        let started = tokio::time::Instant::now();
        let resp = match tokio::time::timeout(timeout, rb.send()).await {
            Err(_) => return Err(LlmError::Timeout(timeout).into()),
            Ok(Err(e)) => return Err(map_send_error(e, timeout, endpoint).into()),
            Ok(Ok(r)) => r,
        };

        let status = resp.status();
        if !status.is_success() {
            let retry_after = resp
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let text = tokio::time::timeout(self.settings.idle_timeout, resp.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            let (status, body) = (status.as_u16(), truncate(text.trim(), MAX_ERROR_BODY));
            if let Some(o) = crate::overflow::overflow_of(status, &body) {
                let model = endpoint.name.clone();
                let (window, requested) = (o.window, o.requested);
                return Err(
                    LlmError::ContextOverflow { model, window, requested, status, body }.into()
                );
            }
            return Err(LlmError::Http { status, body, retry_after }.into());
        }

        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        // The reply's content type decides, not what we asked for: servers that cannot stream
        // (or cannot stream tool calls) answer a streaming request with plain JSON.
        let sse_reply = if content_type.contains("event-stream") {
            true
        } else if content_type.contains("json") {
            false
        } else {
            stream
        };
        let mut asm = TurnAssembler::new();

        if !sse_reply {
            let remaining = timeout.saturating_sub(started.elapsed());
            let bytes = match tokio::time::timeout(remaining, resp.bytes()).await {
                Err(_) => return Err(LlmError::Timeout(timeout).into()),
                Ok(Err(e)) => return Err(map_body_error(e, timeout).into()),
                Ok(Ok(b)) => b,
            };
            let text = String::from_utf8_lossy(&bytes);
            asm.on_json(&text, on_delta)?;
            return Ok(asm.finish(&endpoint.name, false)?);
        }

        let read = self.read_sse(resp, &mut asm, on_delta).await;
        let before_output = !asm.has_output();
        read.and_then(|()| asm.finish(&endpoint.name, true))
            .map_err(|error| Failed { error, before_output })
    }

    /// Folds an event-stream body into `asm` until `[DONE]`, the body's end or a failure.
    async fn read_sse(
        &self,
        resp: reqwest::Response,
        asm: &mut TurnAssembler,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        let idle = self.settings.idle_timeout;
        let mut body = resp.bytes_stream();
        let mut parser = SseParser::new();
        let mut failed: Option<LlmError> = None;
        loop {
            match tokio::time::timeout(idle, body.next()).await {
                Err(_) => return Err(LlmError::IdleTimeout(idle)),
                Ok(None) => {
                    parser.finish(&mut |ev| on_event(asm, &mut failed, on_delta, ev));
                    break;
                }
                Ok(Some(Err(e))) => {
                    return Err(LlmError::Stream(format!(
                        "connection dropped mid-stream: {}",
                        error_chain(&e.without_url())
                    )));
                }
                Ok(Some(Ok(chunk))) => {
                    parser.feed(&chunk, &mut |ev| on_event(asm, &mut failed, on_delta, ev));
                    if failed.is_some() {
                        break;
                    }
                    if asm.is_done() {
                        // `[DONE]` ends the reply; do not wait for the server to close the body.
                        // If the body's end is already buffered, consume it so the connection
                        // goes back to the pool instead of being dropped.
                        let _ = body.next().now_or_never();
                        break;
                    }
                }
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

/// A failed attempt; `before_output` when a stream broke before any part of the reply arrived.
struct Failed {
    error: LlmError,
    before_output: bool,
}

impl From<LlmError> for Failed {
    fn from(error: LlmError) -> Self {
        Failed { error, before_output: false }
    }
}

impl Failed {
    /// Whether a server failed a streamed request with tools in a way a plain request may not:
    /// it refused it (400/422, or a 5xx that names streaming), or it answered 200 and then ended
    /// or broke the stream before the first delta (llama-cpp-python's "Automatic streaming tool
    /// choice is not supported").
    fn fails_streamed_tools(&self) -> bool {
        match &self.error {
            LlmError::Http { status: 400 | 422, .. } => true,
            LlmError::Http { status, body, .. } if *status >= 500 => {
                body.to_ascii_lowercase().contains("stream")
            }
            LlmError::Stream(_) | LlmError::Provider(_) | LlmError::Malformed(_) => {
                self.before_output
            }
            _ => false,
        }
    }
}

/// Why one endpoint gave up.
enum Outcome {
    Cancelled,
    NextModel(LlmError),
    FailFast(LlmError),
}

/// Folds one SSE event into the turn; the first failure is kept and later events are ignored.
fn on_event(
    asm: &mut TurnAssembler,
    failed: &mut Option<LlmError>,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ev: SseEvent<'_>,
) {
    if failed.is_some() || asm.is_done() {
        return;
    }
    let res = if ev.event == "error" {
        Err(LlmError::Provider(truncate(ev.data, MAX_ERROR_BODY)))
    } else {
        asm.on_data(ev.data, on_delta)
    };
    if let Err(e) = res {
        *failed = Some(e);
    }
}

/// A request that never got an answer. A connection failure names the server it tried (scheme,
/// host and port only: a path or query could carry a key), so "connection refused" says where.
fn map_send_error(e: reqwest::Error, timeout: Duration, endpoint: &ModelEndpoint) -> LlmError {
    if e.is_timeout() {
        return LlmError::Timeout(timeout);
    }
    let cause = error_chain(&e.without_url());
    match endpoint.origin() {
        Some(origin) => LlmError::Connect(format!("{origin}: {cause}")),
        None => LlmError::Connect(cause),
    }
}

fn map_body_error(e: reqwest::Error, timeout: Duration) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout(timeout)
    } else {
        LlmError::Stream(format!("reading reply failed: {}", error_chain(&e.without_url())))
    }
}

/// reqwest's own message is terse ("error sending request"); the cause says what happened.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
