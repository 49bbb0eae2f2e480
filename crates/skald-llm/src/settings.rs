//! Timeouts and retry policy for the client.

use std::time::Duration;

/// Client-wide timing and retry policy.
///
/// `request_timeout` bounds the wait for response headers (and, for a non-streaming reply, the
/// whole body); once a stream has started only `idle_timeout` applies, between received chunks,
/// so a long but lively stream is never cut off.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmSettings {
    pub request_timeout: Duration,
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
    /// Retries per model after the first attempt (3 → up to 4 requests per model).
    pub max_retries: u32,
    pub backoff_base: Duration,
    /// Upper bound for one backoff delay, including a server's `Retry-After`.
    pub backoff_cap: Duration,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            request_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(90),
            connect_timeout: Duration::from_secs(10),
            max_retries: 3,
            backoff_base: Duration::from_secs(1),
            backoff_cap: Duration::from_secs(30),
        }
    }
}
