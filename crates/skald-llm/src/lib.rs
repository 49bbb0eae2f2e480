//! skald-llm: OpenAI-compatible chat completions (streaming SSE, tool-call assembly), model
//! resolution, retry with backoff, fallback along a chain and per-model health.
//!
//! One round: `resolve_chain(models, pinned, scope, strength, client.health())` orders the
//! configured endpoints, then `LlmClient::complete(chain, request, cancel, on_delta, on_notice)`
//! tries them in order and returns the assembled `LlmTurn` (with the alias that answered, which
//! the caller keeps for the rest of the turn). `on_notice` receives `Retrying`, `ModelFallback`
//! and `LlmFailed` for events; `on_delta` receives streamed text and reasoning.

mod assemble;
mod backoff;
mod client;
mod endpoint;
mod error;
mod health;
mod messages;
mod models;
mod overflow;
mod request;
mod resolve;
mod settings;
mod sse;
mod turn;
mod windows;
mod wire;

pub use assemble::TurnAssembler;
pub use backoff::{Sleeper, TokioSleeper, backoff_delay, parse_retry_after};
pub use client::LlmClient;
pub use endpoint::{ModelEndpoint, Strength};
pub use error::LlmError;
pub use health::{DEGRADED_AFTER, DOWN_AFTER, Health, HealthTracker};
pub use messages::Messages;
pub use models::list_models;
pub use overflow::{Overflow, overflow_of};
pub use request::PROMPT_CACHE_HEADER;
pub use resolve::resolve_chain;
pub use settings::LlmSettings;
pub use sse::{SseEvent, SseParser};
pub use tokio_util::sync::CancellationToken;
pub use turn::{ChatRequest, LlmNotice, LlmTurn, StreamDelta, ToolCallOut, Usage};
pub use windows::known_context_window;
