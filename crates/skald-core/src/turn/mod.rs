//! The agent turn: rounds of (build context → model → tool calls) until a final answer, a stop,
//! the round limit, or a call that waits for a human.
//!
//! Collaborators, one file each: `emitter` (events), `llm_round` (one model call with fallback),
//! `call_flow` (one tool call end to end: gate → run → record), `synthetic` (tools the loop runs
//! itself). Every step commits its rows before it emits.

mod call_flow;
mod emitter;
mod llm_round;
mod synthetic;

pub use emitter::TurnEmitter;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use skald_llm::{LlmClient, ModelEndpoint};
use skald_protocol::{Event, TurnEnd};
use skald_store::Store;
use skald_store::repo::history::NewMessage;
use tokio_util::sync::CancellationToken;

use crate::agents::Agent;
use crate::approval::gate::LoadedRules;
use crate::context::{
    BuildSettings, CompactionError, ContextCache, ContextCompactor, ContextInputs, MessageBuilder,
};
use crate::error::EngineError;
use crate::tools::ToolRegistry;
use skald_protocol::RunContext;

use call_flow::CallFlow;
use llm_round::RoundResult;

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    /// A final answer was produced and stored.
    Final { message_id: i64, content: String },
    /// `/stop` (or a stop from another process).
    Cancelled,
    /// `max_tool_rounds` used up without a final answer.
    Exhausted { rounds: u32 },
    /// A call waits for a human; a decision plus resume continues the turn.
    Parked { tool_call_ids: Vec<i64> },
    /// The model could not be reached (after retries and fallback) or storage failed.
    Failed { message: String },
}

impl TurnOutcome {
    /// The typed end that is stored and sent (`turn_ended`).
    pub fn end(&self) -> TurnEnd {
        match self {
            Self::Final { message_id, .. } => TurnEnd::Final { message_id: *message_id },
            Self::Cancelled => TurnEnd::Cancelled {},
            Self::Exhausted { rounds } => TurnEnd::Exhausted { rounds: *rounds },
            Self::Parked { tool_call_ids } => {
                TurnEnd::Parked { tool_call_ids: tool_call_ids.clone() }
            }
            Self::Failed { message } => TurnEnd::Failed { reason: message.clone() },
        }
    }
}

/// What a call that needs a human does in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParkMode {
    /// Keep the turn alive and wait for the decision (app, `serve`, `skald resume`).
    #[default]
    Wait,
    /// End the turn `Parked`; a later resume settles the decision (`skald chat`).
    Exit,
}

/// Everything one turn needs, resolved at its start.
pub struct TurnCtx {
    pub store: Store,
    pub emitter: TurnEmitter,
    pub llm: LlmClient,
    pub chain: Vec<ModelEndpoint>,
    pub tools: Arc<ToolRegistry>,
    pub rules: LoadedRules,
    pub run_context: RunContext,
    pub park_mode: ParkMode,
    /// Notified whenever this process records a decision (others are polled).
    pub decisions: Arc<tokio::sync::Notify>,
    /// The engine's cache of built histories: each round extends the frame's with what changed.
    pub context_cache: ContextCache,
    pub agent: Agent,
    pub session_id: i64,
    pub source: String,
    pub scratchpad_session_id: i64,
    pub auto_deny: bool,
    pub stack_id: i64,
    pub workdir: PathBuf,
    pub data_dir: PathBuf,
    pub dynamic_fragments: Vec<String>,
    pub build: BuildSettings,
    pub max_rounds: u32,
    /// Keep each round's request in `llm_requests` for the debug view.
    pub request_log: bool,
}

impl TurnCtx {
    /// Unattended sessions that auto-deny (TIC) are never offered questions.
    pub fn questions_available(&self) -> bool {
        !self.auto_deny
    }

    fn builder(&self) -> MessageBuilder {
        MessageBuilder::new(self.store.clone(), self.build.clone())
            .with_cache(self.context_cache.clone())
    }

    fn context_inputs(&self) -> ContextInputs {
        let mut substitutions = BTreeMap::new();
        for key in &self.agent.substitution_keys {
            substitutions.insert(key.clone(), String::new());
        }
        ContextInputs {
            stack_id: self.stack_id,
            scratchpad_session_id: self.scratchpad_session_id,
            agent_prompt: self.agent.prompt.clone(),
            memory: Vec::new(),
            extra_static: None,
            substitutions,
            cache_hints: false,
            dynamic_fragments: self.dynamic_fragments.clone(),
            tail_reminder: None,
            workdir: self.workdir.clone(),
            now: self.store.clock().now(),
        }
    }
}

/// Runs rounds until the turn ends. The user message (if any) is already stored and echoed.
pub async fn run_rounds(
    ctx: &TurnCtx,
    cancel: CancellationToken,
) -> Result<TurnOutcome, EngineError> {
    let tool_defs = call_flow::offered_tools(ctx);
    // Once per turn, before its first round: the summary must be in place before any request.
    compact_if_needed(ctx, &cancel).await?;
    let mut chain_start = 0usize;
    for round in 1..=ctx.max_rounds {
        if cancel.is_cancelled() {
            return Ok(TurnOutcome::Cancelled);
        }
        fold_steers(&ctx.store, &ctx.emitter, ctx.session_id, ctx.stack_id).await?;
        let built = ctx.builder().build_request(&ctx.context_inputs()).await?;
        let chain = &ctx.chain[chain_start.min(ctx.chain.len().saturating_sub(1))..];
        let logged = ctx
            .request_log
            .then(|| serde_json::json!({ "messages": &built.messages, "tools": &tool_defs }));
        let started = std::time::Instant::now();
        let turn = match llm_round::call(ctx, chain, built.messages, &tool_defs, &cancel).await {
            RoundResult::Turn(t) => t,
            RoundResult::Cancelled => return Ok(TurnOutcome::Cancelled),
            RoundResult::Failed(message) => return Ok(TurnOutcome::Failed { message }),
        };
        // Once switched, the fallback model serves the rest of the turn.
        if let Some(i) = ctx.chain.iter().position(|e| e.name == turn.model) {
            chain_start = i;
        }
        let usage = llm_round::usage_of(&turn);
        if turn.tool_calls.is_empty() {
            let message_id = ctx
                .store
                .append_message(&NewMessage {
                    stack_id: ctx.stack_id,
                    role: Some(skald_store::repo::history::Role::Assistant),
                    content: turn.content.clone(),
                    reasoning: turn.reasoning.clone(),
                    usage,
                    model: Some(turn.model.clone()),
                    cost: turn.cost,
                    ..Default::default()
                })
                .await?;
            log_request(ctx, message_id, &turn.model, logged.as_ref(), started).await;
            if turn.finish_reason.as_deref() == Some("length") {
                ctx.emitter
                    .emit(Event::Truncated { output_tokens: usage.map(|u| u.output_tokens) });
            }
            // A steer that arrived while the model was answering extends the turn so it is
            // answered rather than left dangling; this answer is closed for every client.
            if !ctx.store.open_steers(ctx.session_id).await?.is_empty() && round < ctx.max_rounds {
                ctx.emitter.emit(Event::InterimAnswer {
                    message_id,
                    stack_id: ctx.stack_id,
                    content: turn.content.clone(),
                    reasoning: turn.reasoning.clone(),
                    input_tokens: usage.map(|u| u.input_tokens),
                    output_tokens: usage.map(|u| u.output_tokens),
                });
                continue;
            }
            ctx.emitter.emit(Event::Done {
                message_id,
                stack_id: ctx.stack_id,
                content: turn.content.clone(),
                input_tokens: usage.map(|u| u.input_tokens),
                output_tokens: usage.map(|u| u.output_tokens),
            });
            return Ok(TurnOutcome::Final { message_id, content: turn.content });
        }
        let calls: Vec<(String, String, Option<String>)> = turn
            .tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone(), Some(c.id.clone())))
            .collect();
        let (message_id, call_ids) = ctx
            .store
            .append_assistant_with_calls(
                &NewMessage {
                    stack_id: ctx.stack_id,
                    content: turn.content.clone(),
                    reasoning: turn.reasoning.clone(),
                    usage,
                    model: Some(turn.model.clone()),
                    cost: turn.cost,
                    ..Default::default()
                },
                &calls,
            )
            .await?;
        log_request(ctx, message_id, &turn.model, logged.as_ref(), started).await;
        ctx.emitter.emit(Event::Thinking {
            message_id,
            content: turn.content.clone(),
            reasoning: turn.reasoning.clone(),
            input_tokens: usage.map(|u| u.input_tokens),
            output_tokens: usage.map(|u| u.output_tokens),
        });
        let mut parked = Vec::new();
        for (i, (call, id)) in turn.tool_calls.iter().zip(&call_ids).enumerate() {
            if cancel.is_cancelled() {
                call_flow::cancel_unstarted(ctx, &call_ids[i..]).await?;
                return Ok(TurnOutcome::Cancelled);
            }
            match call_flow::handle(ctx, *id, message_id, &call.name, &call.arguments, &cancel)
                .await?
            {
                CallFlow::Continue => {}
                CallFlow::Parked => parked.push(*id),
                CallFlow::Cancelled => {
                    call_flow::cancel_unstarted(ctx, &call_ids[i + 1..]).await?;
                    return Ok(TurnOutcome::Cancelled);
                }
            }
        }
        if !parked.is_empty() {
            return Ok(TurnOutcome::Parked { tool_call_ids: parked });
        }
    }
    Ok(TurnOutcome::Exhausted { rounds: ctx.max_rounds })
}

/// Continues a session's turn without a new user message: settles open calls (decisions, crash
/// leftovers), then runs rounds if the model still owes an answer.
pub async fn resume(ctx: &TurnCtx, cancel: CancellationToken) -> Result<TurnOutcome, EngineError> {
    let open = ctx.store.open_tool_calls_for_stack(ctx.stack_id).await?;
    let mut parked = Vec::new();
    for (i, row) in open.iter().enumerate() {
        if cancel.is_cancelled() {
            let ids: Vec<i64> = open[i..].iter().map(|r| r.id).collect();
            call_flow::cancel_unstarted(ctx, &ids).await?;
            return Ok(TurnOutcome::Cancelled);
        }
        match call_flow::settle(ctx, row, &cancel).await? {
            CallFlow::Continue => {}
            CallFlow::Parked => parked.push(row.id),
            CallFlow::Cancelled => {
                let ids: Vec<i64> = open[i + 1..].iter().map(|r| r.id).collect();
                call_flow::cancel_unstarted(ctx, &ids).await?;
                return Ok(TurnOutcome::Cancelled);
            }
        }
    }
    if !parked.is_empty() {
        return Ok(TurnOutcome::Parked { tool_call_ids: parked });
    }
    // Only the newest live row decides; reading the whole frame made resume linear in its length.
    let last = ctx.store.last_live_message(ctx.stack_id).await?;
    // Steers waiting (queued behind a decision, or left by a crash) are answered by more rounds.
    let steers_wait = !ctx.store.open_steers(ctx.session_id).await?.is_empty();
    match last.as_ref() {
        // The last word is an answer: the turn is complete.
        Some(last) if last.role == "assistant" && open.is_empty() && !steers_wait => {
            let has_calls = ctx
                .store
                .tool_calls_for_stack_after(ctx.stack_id, last.id - 1)
                .await?
                .iter()
                .any(|c| c.message_id == last.id);
            if !has_calls {
                return Ok(TurnOutcome::Final {
                    message_id: last.id,
                    content: last.content.clone(),
                });
            }
            run_rounds(ctx, cancel).await
        }
        None => Ok(TurnOutcome::Failed { message: "the session has no messages to resume".into() }),
        Some(_) => run_rounds(ctx, cancel).await,
    }
}

/// Compacts a root frame whose context is over the trigger, with `compacting` /
/// `compaction_done` events. Sub-agent frames are left alone (their tree may be running).
async fn compact_if_needed(ctx: &TurnCtx, cancel: &CancellationToken) -> Result<(), EngineError> {
    let Some(config) = ctx.build.compaction.filter(|c| c.enabled) else {
        return Ok(());
    };
    if ctx.store.root_frame(ctx.session_id).await?.id != ctx.stack_id {
        return Ok(());
    }
    let compactor = ContextCompactor::new(&ctx.store, &ctx.llm, &ctx.chain, config);
    let emitter = ctx.emitter.clone();
    let on_start = move || emitter.emit(Event::Compacting {});
    let report =
        compactor.maybe_compact(&ctx.builder(), &ctx.context_inputs(), cancel, on_start).await?;
    if let Some(r) = report {
        ctx.emitter.emit(Event::CompactionDone {
            summary_id: r.summary_id,
            covers_up_to_message_id: r.covers_up_to_message_id,
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
        });
    }
    Ok(())
}

/// The size of the frame's next request as compaction counts it (`/context`, the meter).
pub async fn context_size(
    ctx: &TurnCtx,
) -> Result<crate::context::compaction::ContextSize, EngineError> {
    let builder = ctx.builder();
    Ok(crate::context::compaction::context_size(&ctx.store, &builder, &ctx.context_inputs())
        .await?)
}

/// `/compact [focus]`: summarises the root frame now, whatever the trigger says.
pub async fn compact_now(
    ctx: &TurnCtx,
    focus: Option<&str>,
    cancel: &CancellationToken,
) -> Result<Option<crate::context::CompactionReport>, EngineError> {
    let config = ctx.build.compaction.unwrap_or_default();
    let compactor = ContextCompactor::new(&ctx.store, &ctx.llm, &ctx.chain, config);
    let emitter = ctx.emitter.clone();
    let on_start = move || emitter.emit(Event::Compacting {});
    let report = compactor
        .compact_now(&ctx.builder(), &ctx.context_inputs(), focus, cancel, on_start)
        .await
        .map_err(|e| match e {
            CompactionError::Store(e) => EngineError::from(e),
            CompactionError::Summariser(skald_llm::LlmError::Cancelled) => {
                EngineError::Cancelled("compaction stopped before the summary was written".into())
            }
            other => EngineError::Llm(other.to_string()),
        })?;
    if let Some(r) = &report {
        ctx.emitter.emit(Event::CompactionDone {
            summary_id: r.summary_id,
            covers_up_to_message_id: r.covers_up_to_message_id,
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
        });
    }
    Ok(report)
}

/// Keeps the exact request of a round for the debug view (`llm.request_log.enabled`). A failure
/// to log never fails the turn.
async fn log_request(
    ctx: &TurnCtx,
    message_id: i64,
    model: &str,
    request: Option<&serde_json::Value>,
    started: std::time::Instant,
) {
    let Some(request) = request else { return };
    // Log the provider's model id; the client alias is what the events already carry.
    let model = ctx.chain.iter().find(|e| e.name == model).map_or(model, |e| e.model.as_str());
    let ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let stored = ctx
        .store
        .log_llm_request(ctx.session_id, ctx.stack_id, message_id, model, &request.to_string(), ms)
        .await;
    if let Err(e) = stored {
        tracing::warn!("cannot log the model request: {e}");
    }
}

/// Folds messages sent during the turn into the history at this round boundary, telling every
/// client which history row each pending input became.
pub(crate) async fn fold_steers(
    store: &Store,
    emitter: &TurnEmitter,
    session_id: i64,
    stack_id: i64,
) -> Result<(), EngineError> {
    for folded in store.fold_steers(session_id, stack_id).await? {
        emitter.emit(Event::SteerFolded {
            pending_input_id: folded.steer_id,
            message_id: folded.message_id,
            content: folded.content,
        });
    }
    Ok(())
}
