//! Scripted reply types and their shorthand constructors.

use serde::{Deserialize, Serialize};

/// One scripted answer of the fake provider (or a fault to inject).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// A plain assistant message, optionally with reasoning text.
    Text {
        content: String,
        #[serde(default)]
        reasoning: Option<String>,
        #[serde(default)]
        usage: Option<Usage>,
    },
    /// An assistant message with one or more tool calls (indices 0, 1, .. when streamed).
    ToolCalls {
        #[serde(default)]
        content: Option<String>,
        calls: Vec<ScriptedToolCall>,
        #[serde(default)]
        usage: Option<Usage>,
    },
    /// Answer with this HTTP status `times` times (each request consumes one), optional Retry-After
    /// seconds header and body, then the entry is used up and the next reply serves. A body that
    /// is a JSON object goes out as `application/json` (a 200 with `{"error": ...}` is a provider
    /// error in disguise), any other as plain text.
    Status {
        code: u16,
        #[serde(default = "one")]
        times: u32,
        #[serde(default)]
        retry_after: Option<u64>,
        #[serde(default)]
        body: Option<String>,
    },
    /// Hold the request open for `ms` milliseconds before answering with the NEXT queued reply
    /// (or never answering at all if `then_hang` is true).
    Stall {
        ms: u64,
        #[serde(default)]
        then_hang: bool,
    },
    /// Streaming only: send this text as content deltas, then close the connection without finish
    /// reason, usage or [DONE].
    DropMidStream { partial: String },
    /// Streaming only: send this text as content deltas, then keep the connection open without
    /// sending anything more (a stalled stream; the client's idle timeout must end it).
    HangMidStream { partial: String },
    /// Streaming only: send a `data:` line that is not valid JSON, then close.
    MalformedSse,
    /// Streaming only: answer 200 with an event stream that ends cleanly before any delta: a
    /// `: ping` comment, then (when `error` is set) one `data:` event carrying an OpenAI-style
    /// error object. Without `error` this is what llama-cpp-python's server sends for a streamed
    /// request with tools it cannot stream (the error only reaches its log). A plain request that
    /// takes this entry gets HTTP 500, so a script that expected streaming fails.
    StreamEndsBeforeDelta {
        #[serde(default)]
        error: Option<String>,
    },
    /// An assistant reply with empty content and no tool calls.
    Empty,
}

fn one() -> u32 {
    1
}

impl Reply {
    /// A text reply with default usage.
    pub fn text(s: &str) -> Reply {
        Reply::Text { content: s.to_owned(), reasoning: None, usage: None }
    }

    /// A reply with a single tool call; `args_json` is sent verbatim (it may be invalid JSON).
    pub fn tool_call(name: &str, args_json: &str) -> Reply {
        Reply::tool_calls(vec![ScriptedToolCall::new(name, args_json)])
    }

    /// A reply with several tool calls in one assistant message.
    pub fn tool_calls(calls: Vec<ScriptedToolCall>) -> Reply {
        Reply::ToolCalls { content: None, calls, usage: None }
    }

    /// Answer `times` requests with HTTP `code`.
    pub fn status(code: u16, times: u32) -> Reply {
        Reply::Status { code, times, retry_after: None, body: None }
    }
}

/// One tool call of a scripted reply. Without `id` the server generates a unique `call_fake_N`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ScriptedToolCall {
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    /// Raw text; may be invalid JSON on purpose.
    pub arguments: String,
}

impl ScriptedToolCall {
    pub fn new(name: &str, arguments: &str) -> ScriptedToolCall {
        ScriptedToolCall { id: None, name: name.to_owned(), arguments: arguments.to_owned() }
    }

    pub fn with_id(id: &str, name: &str, arguments: &str) -> ScriptedToolCall {
        ScriptedToolCall { id: Some(id.to_owned()), ..ScriptedToolCall::new(name, arguments) }
    }
}

/// Token usage reported with a reply (`total_tokens` is derived).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// What the provider charged in USD (`usage.cost`, as OpenRouter reports it); absent when
    /// `None`, as most providers leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// What the server answers when no scripted reply is queued. Either way the request is recorded
/// as unscripted, which fails the test when the [`FakeLlm`](super::FakeLlm) handle is dropped.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WhenEmpty {
    /// HTTP 500 "no scripted reply".
    #[default]
    Error,
    /// Reply "fake reply to: <last user text>": only for trying a UI by hand with the binary.
    Echo,
}
