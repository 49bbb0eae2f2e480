//! The crate's error type and how each failure is classified for retry and fallback.

use std::time::Duration;

/// Everything that can go wrong talking to a model. Messages never contain an API key: request
/// headers are never formatted into errors and provider bodies are truncated.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cancelled")]
    Cancelled,
    #[error("HTTP {status}: {body}")]
    Http { status: u16, body: String, retry_after: Option<Duration> },
    /// The request did not fit model `model`'s (the client alias) context window: an HTTP 400
    /// `context_length_exceeded` or its equivalent, with the numbers when the server gave them.
    #[error("the request is larger than {model}'s context window{}: HTTP {status}: {body}", window_detail(*window, *requested))]
    ContextOverflow {
        model: String,
        window: Option<u64>,
        requested: Option<u64>,
        status: u16,
        body: String,
    },
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    #[error("stream idle for {0:?}")]
    IdleTimeout(Duration),
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("stream error: {0}")]
    Stream(String),
    #[error("malformed response: {0}")]
    Malformed(String),
    #[error("provider error: {0}")]
    Provider(String),
    #[error("empty completion (no text and no tool calls)")]
    Empty,
    #[error("no model configured")]
    NoModels,
    #[error("invalid client configuration: {0}")]
    Config(String),
    #[error("all models failed (tried {}): {last_error}", tried.join(", "))]
    AllFailed { tried: Vec<String>, last_error: String },
}

/// ` (4096 tokens; 5000 requested)`, or less when the server did not say.
fn window_detail(window: Option<u64>, requested: Option<u64>) -> String {
    match (window, requested) {
        (Some(w), Some(r)) => format!(" ({w} tokens; {r} requested)"),
        (Some(w), None) => format!(" ({w} tokens)"),
        (None, Some(r)) => format!(" ({r} tokens requested)"),
        (None, None) => String::new(),
    }
}

/// What the failover loop does after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// Transient: retry the same model after a backoff (with an optional server hint).
    Retry { retry_after: Option<Duration> },
    /// The model is unusable here (e.g. 404 model not found): move to the next one at once.
    NextModel,
    /// The request itself is wrong (400/401/403/422 ...): another model would fail the same way.
    FailFast,
}

impl LlmError {
    pub(crate) fn disposition(&self) -> Disposition {
        match self {
            LlmError::Http { status, retry_after, .. } => match *status {
                408 | 409 | 425 | 429 => Disposition::Retry { retry_after: *retry_after },
                404 => Disposition::NextModel,
                s if s >= 500 => Disposition::Retry { retry_after: *retry_after },
                _ => Disposition::FailFast,
            },
            // Every model of the chain would get the same request: the caller makes it smaller.
            LlmError::ContextOverflow { .. } => Disposition::FailFast,
            LlmError::Timeout(_)
            | LlmError::IdleTimeout(_)
            | LlmError::Connect(_)
            | LlmError::Stream(_)
            | LlmError::Malformed(_)
            | LlmError::Provider(_)
            | LlmError::Empty => Disposition::Retry { retry_after: None },
            LlmError::Config(_) => Disposition::NextModel,
            LlmError::Cancelled | LlmError::NoModels | LlmError::AllFailed { .. } => {
                Disposition::FailFast
            }
        }
    }

    /// Whether this failure says something about the model's health (a bad request of ours or a
    /// cancellation does not).
    pub(crate) fn counts_against_health(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => !matches!(*status, 400 | 413 | 422),
            LlmError::Cancelled
            | LlmError::NoModels
            | LlmError::AllFailed { .. }
            | LlmError::ContextOverflow { .. } => false,
            _ => true,
        }
    }
}
