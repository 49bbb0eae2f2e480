//! skald-llm: OpenAI-compatible chat completions (streaming SSE, tool-call assembly), model
//! resolution, retry with backoff, fallback along a chain and per-model health.

mod assemble;
mod backoff;
mod client;
mod endpoint;
mod error;
mod health;
mod request;
mod resolve;
mod settings;
mod sse;
mod turn;
mod wire;

pub use assemble::TurnAssembler;
pub use backoff::{Sleeper, TokioSleeper, backoff_delay, parse_retry_after};
pub use client::LlmClient;
pub use endpoint::{ModelEndpoint, Strength};
pub use error::LlmError;
pub use health::{DEGRADED_AFTER, DOWN_AFTER, Health, HealthTracker};
pub use request::{PROMPT_CACHE_HEADER, build_body};
pub use resolve::resolve_chain;
pub use settings::LlmSettings;
pub use sse::{SseEvent, SseParser};
pub use tokio_util::sync::CancellationToken;
pub use turn::{ChatRequest, LlmNotice, LlmTurn, StreamDelta, ToolCallOut, Usage};
