//! The record of one chat-completions request, kept for test assertions.

use serde::{Deserialize, Serialize};

/// A `/v1/chat/completions` request as the fake provider saw it, and how it answered.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// 1-based arrival order since start (or the last reset).
    pub seq: u64,
    pub path: String,
    pub model: Option<String>,
    pub stream: bool,
    /// The parsed JSON body; the raw text as a JSON string when it was not valid JSON.
    pub body: serde_json::Value,
    /// Header names are lower-case.
    pub headers: Vec<(String, String)>,
    /// Why the request was rejected with HTTP 400, if it was.
    pub validation_error: Option<String>,
    /// The HTTP status sent; 0 while the request is still stalled and no response has started.
    pub status: u16,
    /// No scripted reply was queued for it (it got the `WhenEmpty` answer).
    #[serde(default)]
    pub unscripted: bool,
}
