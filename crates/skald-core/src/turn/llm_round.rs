//! One model call for a round: streaming deltas out as events, fallback notices as events.

use std::sync::Arc;

use serde_json::Value;
use skald_llm::{ChatRequest, LlmError, LlmNotice, LlmTurn, Messages, ModelEndpoint, StreamDelta};
use skald_protocol::{DeltaKind, Event};
use skald_store::repo::history::TokenUsage;
use tokio_util::sync::CancellationToken;

use super::TurnCtx;

pub enum RoundResult {
    Turn(LlmTurn),
    Cancelled,
    Failed(String),
    /// The request did not fit a model's context window (`LlmError::ContextOverflow`).
    Overflow(Overflow),
}

/// A request refused as larger than model `model`'s window, with what the server said.
pub struct Overflow {
    /// The client alias that refused it.
    pub model: String,
    pub window: Option<u64>,
    pub requested: Option<u64>,
    /// The whole error, for a turn that cannot recover.
    pub message: String,
}

pub async fn call(
    ctx: &TurnCtx,
    chain: &[ModelEndpoint],
    messages: Messages,
    tools: &Arc<[Value]>,
    answer_only: bool,
    cancel: &CancellationToken,
) -> RoundResult {
    let req = ChatRequest {
        messages,
        tools: Arc::clone(tools),
        temperature: None,
        max_tokens: None,
        stream: true,
        answer_only,
    };
    let emitter = ctx.frame.emitter.clone();
    let mut on_delta = |d: StreamDelta| {
        let (kind, delta) = match d {
            StreamDelta::Content(s) => (DeltaKind::Content, s),
            StreamDelta::Reasoning(s) => (DeltaKind::Reasoning, s),
        };
        emitter.emit(Event::TokenDelta { kind, delta });
    };
    let notices = ctx.frame.emitter.clone();
    let mut on_notice = |n: LlmNotice| match n {
        LlmNotice::ModelFallback { from, to, reason } => {
            notices.emit(Event::ModelFallback { from, to, reason });
        }
        LlmNotice::LlmFailed { tried, last_error } => {
            notices.emit(Event::LlmFailed { tried, last_error });
        }
        LlmNotice::Retrying { model, attempt, reason, .. } => {
            tracing::info!(%model, attempt, %reason, "retrying model request");
            // Clients drop what the failed attempt streamed: the retry streams the reply anew.
            notices.emit(Event::ModelRetry { model, attempt, reason });
        }
    };
    match ctx.deps.llm.complete(chain, &req, cancel.clone(), &mut on_delta, &mut on_notice).await {
        Ok(turn) => RoundResult::Turn(turn),
        Err(LlmError::Cancelled) => RoundResult::Cancelled,
        Err(e @ LlmError::ContextOverflow { .. }) => {
            let message = format!("the model request failed: {e}");
            let LlmError::ContextOverflow { model, window, requested, .. } = e else {
                return RoundResult::Failed(message);
            };
            RoundResult::Overflow(Overflow { model, window, requested, message })
        }
        Err(e) => RoundResult::Failed(format!("the model request failed: {e}")),
    }
}

pub fn usage_of(turn: &LlmTurn) -> Option<TokenUsage> {
    turn.usage.as_ref().map(|u| TokenUsage {
        input_tokens: i64::try_from(u.input_tokens).unwrap_or(i64::MAX),
        output_tokens: i64::try_from(u.output_tokens).unwrap_or(i64::MAX),
        cache_read_tokens: i64::try_from(u.cache_read_tokens).unwrap_or(i64::MAX),
        cache_write_tokens: i64::try_from(u.cache_write_tokens).unwrap_or(i64::MAX),
    })
}
