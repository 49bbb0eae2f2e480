//! The agent turn: rounds of (build context → model → tool calls) until a final answer, a stop,
//! the round limit, or a call that waits for a human.
//!
//! Collaborators, one file each: `ctx` (shared deps, session policy, per-frame context),
//! `emitter` (events), `llm_round` (one model call with fallback), `scheduler` (the calls of one
//! reply), `call_flow` (one tool call end to end: gate → run → record), `synthetic` (tools the
//! loop runs itself). Every step commits its rows before it emits.

mod call_flow;
mod config_tools;
mod ctx;
mod emitter;
mod llm_round;
mod mcp;
pub(crate) mod mcp_results;
mod overflow;
mod scheduler;
mod subagent;
mod synthetic;
pub mod tool_set;

pub use ctx::{
    FrameCtx, JobDesk, JobFuture, McpEditor, TaskStarter, TurnCtx, TurnDeps, TurnPolicy,
};
pub use emitter::TurnEmitter;
pub use mcp::Grants;

use skald_protocol::{Event, TurnEnd};
use skald_store::Store;
use skald_store::repo::history::NewMessage;
use skald_store::repo::root_inbox::FoldedInput;
use tokio_util::sync::CancellationToken;

use crate::context::{CompactionError, ContextCompactor};
use crate::error::EngineError;

use llm_round::RoundResult;
use scheduler::{BatchFlow, PlannedCall};

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

    /// How an unattended run (a job's run, a TIC tick) ended, for its own record; `None` when
    /// it parked on a person, which each kind of run handles its own way.
    pub fn run_end(&self) -> Option<RunEnd> {
        match self {
            Self::Final { .. } => Some(RunEnd::Done),
            Self::Cancelled => Some(RunEnd::Stopped),
            Self::Exhausted { rounds } => Some(RunEnd::Failed {
                reason: format!("used its {rounds} rounds without an answer"),
            }),
            Self::Failed { message } => Some(RunEnd::Failed { reason: message.clone() }),
            Self::Parked { .. } => None,
        }
    }
}

/// The end of an unattended run, shared by job runs and ticks so both say it the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    Done,
    /// `/stop` or a stop from another process.
    Stopped,
    Failed {
        reason: String,
    },
}

impl RunEnd {
    /// What the run's record says about its end (`None` when it simply finished).
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Done => None,
            Self::Stopped => Some("stopped"),
            Self::Failed { reason } => Some(reason),
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

/// Runs rounds until the turn ends. The user message (if any) is already stored and echoed.
pub async fn run_rounds(
    ctx: &TurnCtx,
    cancel: CancellationToken,
) -> Result<TurnOutcome, EngineError> {
    run_frame(&ctx.with_cancel(cancel)).await
}

/// One frame's rounds, as a list of named steps: compact, fold steers, ask the model, then
/// either record the answer or run the calls it asked for.
pub(crate) async fn run_frame(ctx: &TurnCtx) -> Result<TurnOutcome, EngineError> {
    // Once per turn, before its first round: the summary must be in place before any request.
    compact_if_needed(ctx).await?;
    let mut chain_start = 0usize;
    let max_rounds = ctx.policy.max_rounds;
    for round in 1..=max_rounds {
        if ctx.frame.cancel.is_cancelled() {
            return Ok(TurnOutcome::Cancelled);
        }
        fold_root_steers(ctx).await?;
        let reply = match ask_model(ctx, &mut chain_start, false).await? {
            Asked::Reply(reply) => reply,
            Asked::Ended(outcome) => return Ok(outcome),
        };
        if reply.turn.tool_calls.is_empty() {
            match record_answer(ctx, *reply, round).await? {
                Some(outcome) => return Ok(outcome),
                None => continue,
            }
        }
        let (message_id, calls) = record_calls(ctx, &reply).await?;
        match scheduler::run_calls(ctx, message_id, &calls).await? {
            BatchFlow::Continue => {}
            BatchFlow::Parked(ids) => return Ok(TurnOutcome::Parked { tool_call_ids: ids }),
            BatchFlow::Cancelled => return Ok(TurnOutcome::Cancelled),
        }
    }
    answer_at_round_limit(ctx, &mut chain_start).await
}

/// Every round asked for tools. Asked once more with calls forbidden, the model answers with
/// what it found rather than the turn ending on a bare error (a small model that only ever
/// calls tools still says something). A reply that calls tools anyway (a server that ignores
/// `tool_choice`) is dropped and the turn ends exhausted, as it did before.
async fn answer_at_round_limit(
    ctx: &TurnCtx,
    chain_start: &mut usize,
) -> Result<TurnOutcome, EngineError> {
    let rounds = ctx.policy.max_rounds;
    if ctx.frame.cancel.is_cancelled() {
        return Ok(TurnOutcome::Cancelled);
    }
    match ask_model(ctx, chain_start, true).await? {
        Asked::Ended(outcome) => Ok(outcome),
        Asked::Reply(reply) if reply.turn.tool_calls.is_empty() => {
            // At the limit no waiting steer extends the turn: it wakes a turn of its own.
            let outcome = record_answer(ctx, *reply, rounds).await?;
            Ok(outcome.unwrap_or(TurnOutcome::Exhausted { rounds }))
        }
        Asked::Reply(reply) => {
            let calls = reply.turn.tool_calls.len();
            tracing::info!(rounds, calls, "the model called tools after its last round");
            Ok(TurnOutcome::Exhausted { rounds })
        }
    }
}

/// What the request after the last round adds at the very end of the context.
fn round_limit_note(rounds: u32) -> String {
    format!(
        "All {rounds} tool rounds of this turn are used: no tool can be called now. Answer the \
         user with what you have found so far, and say plainly what is left undone."
    )
}

/// A model reply with what is needed to record it.
struct ModelReply {
    turn: skald_llm::LlmTurn,
    usage: Option<skald_store::repo::history::TokenUsage>,
    logged: Option<serde_json::Value>,
    started: std::time::Instant,
}

enum Asked {
    Reply(Box<ModelReply>),
    Ended(TurnOutcome),
}

/// Only the root frame reads its inbox (the user's steers, async tasks' reports): a sub-agent's
/// history is its parent's task, not the conversation.
async fn fold_root_steers(ctx: &TurnCtx) -> Result<(), EngineError> {
    if !ctx.is_root() {
        return Ok(());
    }
    let (store, emitter) = (&ctx.deps.store, &ctx.frame.emitter);
    fold_root_inputs(store, emitter, ctx.policy.session_id, ctx.frame.stack_id).await
}

/// Whether the root frame has input to answer (any kind of its inbox).
async fn root_input_waits(ctx: &TurnCtx) -> Result<bool, EngineError> {
    if !ctx.is_root() {
        return Ok(false);
    }
    Ok(ctx.deps.store.root_input_waits(ctx.policy.session_id).await?)
}

/// Builds the frame's request and asks its models; once switched, the fallback model serves
/// the rest of the frame's rounds.
/// A request refused as larger than the model's window is asked once more after the
/// conversation is summarised (`overflow::recover`). `answer_only`: the request after the last
/// round, which lists the tools but forbids calling them.
async fn ask_model(
    ctx: &TurnCtx,
    chain_start: &mut usize,
    answer_only: bool,
) -> Result<Asked, EngineError> {
    mcp::prepare_round(ctx).await;
    let all = &ctx.frame.chain;
    let chain = &all[(*chain_start).min(all.len().saturating_sub(1))..];
    let cancel = &ctx.frame.cancel;
    let mut recovered = false;
    let (turn, logged, started) = loop {
        // Again on a retry: a window learned from the refusal may leave fewer tools offered.
        let tool_defs = tool_set::ToolSet::resolve(ctx).defs();
        let mut inputs = ctx.context_inputs();
        if answer_only {
            let note = round_limit_note(ctx.policy.max_rounds);
            inputs.tail_reminder = Some(match inputs.tail_reminder.take() {
                Some(reminder) => format!("{reminder}\n\n{note}"),
                None => note,
            });
        }
        let built = ctx.builder().build_request(&inputs).await?;
        let estimated = built.estimated_tokens;
        let logged = ctx
            .policy
            .request_log
            .then(|| serde_json::json!({ "messages": &built.messages, "tools": &tool_defs }));
        let started = std::time::Instant::now();
        let messages = built.messages;
        let failed =
            match llm_round::call(ctx, chain, messages, &tool_defs, answer_only, cancel).await {
                RoundResult::Turn(t) => break (t, logged, started),
                RoundResult::Cancelled => return Ok(Asked::Ended(TurnOutcome::Cancelled)),
                RoundResult::Failed(message) => message,
                RoundResult::Overflow(o) if !recovered => {
                    recovered = true;
                    match overflow::recover(ctx, chain, &o, estimated, tool_defs.len()).await? {
                        overflow::Recovery::Retry => continue,
                        overflow::Recovery::Fail(message) => message,
                        overflow::Recovery::Cancelled => {
                            return Ok(Asked::Ended(TurnOutcome::Cancelled));
                        }
                    }
                }
                RoundResult::Overflow(o) => format!("{} (even after summarising)", o.message),
            };
        return Ok(Asked::Ended(TurnOutcome::Failed { message: failed }));
    };
    if let Some(i) = all.iter().position(|e| e.name == turn.model) {
        *chain_start = i;
    }
    let usage = llm_round::usage_of(&turn);
    Ok(Asked::Reply(Box::new(ModelReply { turn, usage, logged, started })))
}

/// Stores a reply without calls. Returns the frame's outcome, or `None` when a steer that
/// arrived meanwhile extends the (root) turn so it is answered rather than left dangling.
async fn record_answer(
    ctx: &TurnCtx,
    reply: ModelReply,
    round: u32,
) -> Result<Option<TurnOutcome>, EngineError> {
    let ModelReply { turn, usage, logged, started } = reply;
    let (store, emitter, stack_id) = (&ctx.deps.store, &ctx.frame.emitter, ctx.frame.stack_id);
    // A steer already waiting extends the (root) turn: this answer is closed for every client
    // and the turn goes on for the steer. Asked before the answer is stored so its event can
    // ride the same transaction; a steer that arrives after this wakes a turn of its own.
    let interim = round < ctx.policy.max_rounds && root_input_waits(ctx).await?;
    let truncated = turn.finish_reason.as_deref() == Some("length");
    let (content, reasoning, cost) = (turn.content.clone(), turn.reasoning.clone(), turn.cost);
    let (input_tokens, output_tokens) =
        (usage.map(|u| u.input_tokens), usage.map(|u| u.output_tokens));
    let events = move |message_id| {
        let mut events = Vec::with_capacity(2);
        if truncated {
            events.push(Event::Truncated { output_tokens });
        }
        events.push(if interim {
            Event::InterimAnswer {
                message_id,
                stack_id,
                content,
                reasoning,
                input_tokens,
                output_tokens,
                cost_usd: cost,
            }
        } else {
            // A sub-agent's `done` ends its lane, not the turn: it comes from the child's frame.
            Event::Done {
                message_id,
                stack_id,
                content,
                input_tokens,
                output_tokens,
                cost_usd: cost,
            }
        });
        events
    };
    let answer = NewMessage {
        stack_id,
        role: Some(skald_store::repo::history::Role::Assistant),
        content: turn.content.clone(),
        reasoning: turn.reasoning.clone(),
        usage,
        model: Some(turn.model.clone()),
        cost: turn.cost,
        ..Default::default()
    };
    let message_id = emitter.commit_created(store.append_message(&answer), events).await?;
    log_request(ctx, message_id, &turn.model, logged.as_ref(), started).await;
    if interim {
        return Ok(None);
    }
    Ok(Some(TurnOutcome::Final { message_id, content: turn.content }))
}

/// Stores a reply with calls: the message and one `pending` row per call, ids in call order.
async fn record_calls(
    ctx: &TurnCtx,
    reply: &ModelReply,
) -> Result<(i64, Vec<PlannedCall>), EngineError> {
    let turn = &reply.turn;
    let specs: Vec<(String, String, Option<String>)> = turn
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone(), Some(c.id.clone())))
        .collect();
    let (content, reasoning, cost) = (turn.content.clone(), turn.reasoning.clone(), turn.cost);
    let (input_tokens, output_tokens) =
        (reply.usage.map(|u| u.input_tokens), reply.usage.map(|u| u.output_tokens));
    let thinking = move |message_id| {
        vec![Event::Thinking {
            message_id,
            content,
            reasoning,
            input_tokens,
            output_tokens,
            cost_usd: cost,
        }]
    };
    let message = NewMessage {
        stack_id: ctx.frame.stack_id,
        content: turn.content.clone(),
        reasoning: turn.reasoning.clone(),
        usage: reply.usage,
        model: Some(turn.model.clone()),
        cost: turn.cost,
        ..Default::default()
    };
    let (message_id, call_ids) = ctx
        .frame
        .emitter
        .commit_created(ctx.deps.store.append_assistant_with_calls(&message, &specs), thinking)
        .await?;
    log_request(ctx, message_id, &turn.model, reply.logged.as_ref(), reply.started).await;
    let calls = turn
        .tool_calls
        .iter()
        .zip(call_ids)
        .map(|(c, id)| PlannedCall { id, name: c.name.clone(), arguments: c.arguments.clone() })
        .collect();
    Ok((message_id, calls))
}

/// Continues a session's turn without a new user message: settles open calls (decisions, crash
/// leftovers), then runs rounds if the model still owes an answer.
pub async fn resume(ctx: &TurnCtx, cancel: CancellationToken) -> Result<TurnOutcome, EngineError> {
    resume_frame(&ctx.with_cancel(cancel)).await
}

/// Settles a frame's open calls in id order, then runs rounds if its model still owes an answer.
pub(crate) async fn resume_frame(ctx: &TurnCtx) -> Result<TurnOutcome, EngineError> {
    let (store, stack_id) = (&ctx.deps.store, ctx.frame.stack_id);
    let open = store.open_tool_calls_for_stack(stack_id).await?;
    match scheduler::settle_open(ctx, &open).await? {
        BatchFlow::Continue => {}
        BatchFlow::Parked(ids) => return Ok(TurnOutcome::Parked { tool_call_ids: ids }),
        BatchFlow::Cancelled => return Ok(TurnOutcome::Cancelled),
    }
    // Only the newest live row decides; reading the whole frame made resume linear in its length.
    let last = store.last_live_message(stack_id).await?;
    // Steers waiting (queued behind a decision, or left by a crash) are answered by more rounds.
    let steers_wait = root_input_waits(ctx).await?;
    match last.as_ref() {
        // The last word is an answer: the frame is complete.
        Some(last) if last.role == "assistant" && open.is_empty() && !steers_wait => {
            let has_calls = store
                .tool_calls_for_stack_after(stack_id, last.id - 1)
                .await?
                .iter()
                .any(|c| c.message_id == last.id);
            if !has_calls {
                return Ok(TurnOutcome::Final {
                    message_id: last.id,
                    content: last.content.clone(),
                });
            }
            run_frame(ctx).await
        }
        // Input for an empty session (a report, a briefing) is a turn of its own.
        None if !steers_wait => {
            Ok(TurnOutcome::Failed { message: "the session has no messages to resume".into() })
        }
        _ => run_frame(ctx).await,
    }
}

/// Compacts a root frame whose context is over the trigger, with `compacting` /
/// `compaction_done` events. Sub-agent frames are left alone (their tree may be running).
async fn compact_if_needed(ctx: &TurnCtx) -> Result<(), EngineError> {
    let Some(config) = ctx.policy.build.compaction.filter(|c| c.enabled) else {
        return Ok(());
    };
    if !ctx.is_root() {
        return Ok(());
    }
    let cancel = &ctx.frame.cancel;
    let compactor = ContextCompactor::new(&ctx.deps.store, &ctx.deps.llm, &ctx.frame.chain, config);
    let emitter = ctx.frame.emitter.clone();
    let on_start = move || emitter.emit(Event::Compacting {});
    let report =
        compactor.maybe_compact(&ctx.builder(), &ctx.context_inputs(), cancel, on_start).await?;
    if let Some(r) = report {
        ctx.frame.emitter.emit(Event::CompactionDone {
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
    Ok(crate::context::compaction::context_size(&ctx.deps.store, &builder, &ctx.context_inputs())
        .await?)
}

/// `/compact [focus]`: summarises the root frame now, whatever the trigger says.
pub async fn compact_now(
    ctx: &TurnCtx,
    focus: Option<&str>,
    cancel: &CancellationToken,
) -> Result<Option<crate::context::CompactionReport>, EngineError> {
    let config = ctx.policy.build.compaction.unwrap_or_default();
    let compactor = ContextCompactor::new(&ctx.deps.store, &ctx.deps.llm, &ctx.frame.chain, config);
    let emitter = ctx.frame.emitter.clone();
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
        ctx.frame.emitter.emit(Event::CompactionDone {
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
    let model =
        ctx.frame.chain.iter().find(|e| e.name == model).map_or(model, |e| e.model.as_str());
    let ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let stored = ctx
        .deps
        .store
        .log_llm_request(
            ctx.policy.session_id,
            ctx.frame.stack_id,
            message_id,
            model,
            &request.to_string(),
            ms,
        )
        .await;
    if let Err(e) = stored {
        tracing::warn!("cannot log the model request: {e}");
    }
}

/// Reads the root inbox into the history at this round boundary, telling every client what
/// each input became: a steer's history row, a task's report delivered.
pub(crate) async fn fold_root_inputs(
    store: &Store,
    emitter: &TurnEmitter,
    session_id: i64,
    stack_id: i64,
) -> Result<(), EngineError> {
    for folded in store.fold_root_inputs(session_id, stack_id).await? {
        emitter.emit(folded_event(folded));
    }
    Ok(())
}

/// The event that tells clients an input was read.
pub(crate) fn folded_event(folded: FoldedInput) -> Event {
    match folded.task {
        Some(task) => Event::TaskUpdate {
            task_id: task.id,
            child_session_id: task.child_session_id,
            label: task.label.clone(),
            state: skald_protocol::TaskState::Delivered,
            report: task.report.clone(),
            message_id: Some(folded.message_id),
        },
        None => Event::SteerFolded {
            pending_input_id: folded.input_id,
            message_id: folded.message_id,
            content: folded.content,
        },
    }
}
