//! What one model round hands back: the request shape, the assembled turn and live deltas.

use std::time::Duration;

/// One chat-completions request, provider-neutral. `messages` and `tools` are OpenAI-style JSON.
/// The tool list is shared (a frame offers the same list every round), never copied per request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub messages: crate::Messages,
    pub tools: std::sync::Arc<[serde_json::Value]>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    pub stream: bool,
    /// The tools stay listed (so a cached prompt prefix still holds) but the model may not call
    /// them (`tool_choice: "none"`): a request that must end in words.
    pub answer_only: bool,
}

/// A tool call as the model produced it. `arguments` is the raw text, which may be invalid JSON:
/// the turn loop answers that to the model as a correctable tool error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCallOut {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Token accounting for one completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

/// The assembled answer of one round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmTurn {
    pub content: String,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ToolCallOut>,
    pub usage: Option<Usage>,
    /// As reported (`stop`, `tool_calls`, `length`, ...); `length` means truncated.
    pub finish_reason: Option<String>,
    /// `usage.cost` when a gateway reports it (OpenRouter style).
    pub cost: Option<f64>,
    /// Alias of the endpoint that answered; the turn loop pins it for the rest of the turn.
    pub model: String,
}

/// Text arriving while a reply streams. After a `LlmNotice::Retrying` or `ModelFallback` the
/// deltas start over: a UI must discard what the failed attempt streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamDelta {
    Content(String),
    Reasoning(String),
}

/// Progress of the retry / failover loop, for events and the UI.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmNotice {
    /// A transient failure; the same model is tried again after `delay`. `attempt` is the number
    /// of the attempt that failed (1-based).
    Retrying { model: String, attempt: u32, reason: String, delay: Duration },
    /// `from` is given up for this round; `to` is tried next.
    ModelFallback { from: String, to: String, reason: String },
    /// Nothing answered; the round fails.
    LlmFailed { tried: Vec<String>, last_error: String },
}
