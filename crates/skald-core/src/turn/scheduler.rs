//! The calls of one reply (or the calls a resume finds open): one after another by default;
//! two or more sync sub-agent calls alone in a reply run at once, bounded by
//! `llm.max_parallel_subagents`, their results recorded in call order. A stop leaves the calls
//! that never started `cancelled`.

use futures::StreamExt;
use futures::future::BoxFuture;
use skald_store::repo::tools::ToolCallRow;

use super::TurnCtx;
use super::call_flow::{self, CallFlow, Gate};
use super::subagent::{self, ChildEnd};
use super::tool_set::ToolSet;
use crate::error::EngineError;
use crate::tools::names::{Delegation, ToolName};

/// A call the model asked for, its row already stored.
#[derive(Debug, Clone)]
pub struct PlannedCall {
    pub id: i64,
    pub name: String,
    pub arguments: String,
}

/// What the frame does after its calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchFlow {
    /// Every call is settled: the next round sees their results.
    Continue,
    /// These calls wait for a human and this process does not wait.
    Parked(Vec<i64>),
    Cancelled,
}

/// Runs the calls of one reply: a batch of sub-agents concurrently, anything else in order.
pub async fn run_calls(
    ctx: &TurnCtx,
    message_id: i64,
    calls: &[PlannedCall],
) -> Result<BatchFlow, EngineError> {
    if let Some(delegations) = batch_of(calls.iter().map(|c| c.name.as_str()), ctx) {
        return run_batch(ctx, message_id, calls, &delegations).await;
    }
    let ids: Vec<i64> = calls.iter().map(|c| c.id).collect();
    one_by_one(ctx, &ids, calls, |call| {
        Box::pin(call_flow::handle(ctx, call.id, message_id, &call.name, &call.arguments))
    })
    .await
}

/// Settles calls an earlier run left open (decisions, crash leftovers), in id order; the
/// children of an interrupted sub-agent batch resume side by side.
pub async fn settle_open(ctx: &TurnCtx, open: &[ToolCallRow]) -> Result<BatchFlow, EngineError> {
    if batch_of(open.iter().map(|r| r.name.as_str()), ctx).is_some() {
        return settle_batch(ctx, open).await;
    }
    let ids: Vec<i64> = open.iter().map(|r| r.id).collect();
    one_by_one(ctx, &ids, open, |row| Box::pin(call_flow::settle(ctx, row))).await
}

/// Runs `step` on each of `items` (whose call ids are `ids`) in order, gathering the calls
/// that park; a stop marks the ones not started `cancelled`.
async fn one_by_one<'a, T>(
    ctx: &TurnCtx,
    ids: &[i64],
    items: &'a [T],
    step: impl Fn(&'a T) -> BoxFuture<'a, Result<CallFlow, EngineError>>,
) -> Result<BatchFlow, EngineError> {
    let mut parked = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let flow =
            if ctx.frame.cancel.is_cancelled() { CallFlow::Cancelled } else { step(item).await? };
        match flow {
            CallFlow::Continue => {}
            CallFlow::Parked(ids) => parked.extend(ids),
            CallFlow::Cancelled => {
                call_flow::cancel_unstarted(ctx, &ids[i..]).await?;
                return Ok(BatchFlow::Cancelled);
            }
        }
    }
    Ok(if parked.is_empty() { BatchFlow::Continue } else { BatchFlow::Parked(parked) })
}

/// Two or more calls, all delegations, with concurrency allowed: their delegation tools.
fn batch_of<'a>(
    names: impl ExactSizeIterator<Item = &'a str>,
    ctx: &TurnCtx,
) -> Option<Vec<Delegation>> {
    if ctx.policy.max_parallel_subagents <= 1 || names.len() < 2 {
        return None;
    }
    names
        .map(|name| match ToolName::parse(name) {
            ToolName::Delegation(delegation) => Some(delegation),
            _ => None,
        })
        .collect()
}

/// One sibling's work, tagged with its place in the batch.
type Indexed<'a, T> = BoxFuture<'a, (usize, Result<T, EngineError>)>;

/// What a call of a batch came to before it is recorded.
enum Deferred {
    /// Recorded while it ran (a gate's verdict, a decision's wait).
    Recorded(CallFlow),
    /// A child that ended: recorded in phase 3, in call order.
    Child(ChildEnd),
    /// The stop came first.
    Unstarted,
}

/// Phase 1 in call order (announce, gate), phase 2 concurrent (the children, in the same task:
/// same lock and token), phase 3 in call order (record). Row ids were allocated in call order
/// with the reply, so the history reads in call order whichever child finishes first.
async fn run_batch(
    ctx: &TurnCtx,
    message_id: i64,
    calls: &[PlannedCall],
    delegations: &[Delegation],
) -> Result<BatchFlow, EngineError> {
    let set = ToolSet::resolve(ctx);
    let set = &*set;
    let mut gated = Vec::with_capacity(calls.len());
    for call in calls {
        let (id, name) = (call.id, call.name.as_str());
        let parsed = call_flow::announce(ctx, set, id, message_id, name, &call.arguments);
        gated.push(call_flow::gate(ctx, set, id, name, parsed).await?);
    }
    let limit = ctx.policy.max_parallel_subagents;
    // Boxed before they enter the stream: a stream of closures over borrowed calls trips the
    // compiler's `Send` check of the turn's future (rust-lang/rust#102211).
    let runs: Vec<Indexed<'_, Deferred>> = calls
        .iter()
        .zip(gated)
        .zip(delegations)
        .enumerate()
        .map(|(i, ((call, gate), delegation))| -> BoxFuture<'_, _> {
            Box::pin(async move { (i, run_gated(ctx, set, call, gate, *delegation).await) })
        })
        .collect();
    let mut done: Vec<_> = futures::stream::iter(runs).buffer_unordered(limit).collect().await;
    done.sort_by_key(|(i, _)| *i);
    let mut results = Vec::with_capacity(done.len());
    for (i, result) in done {
        results.push((calls[i].id, result?));
    }
    record_in_order(ctx, results).await
}

async fn run_gated(
    ctx: &TurnCtx,
    set: &ToolSet,
    call: &PlannedCall,
    gate: Gate,
    delegation: Delegation,
) -> Result<Deferred, EngineError> {
    let cancel = &ctx.frame.cancel;
    match gate {
        Gate::Recorded(flow) => Ok(Deferred::Recorded(flow)),
        _ if cancel.is_cancelled() => Ok(Deferred::Unstarted),
        Gate::Allowed(_, args, _) => {
            ctx.deps.store.start_tool_call(call.id).await?;
            Ok(Deferred::Child(subagent::dispatch(ctx, call.id, delegation, &args).await?))
        }
        Gate::Parked(args) => Ok(Deferred::Recorded(
            call_flow::await_decision_and_run(ctx, set, call.id, &call.name, &args, cancel).await?,
        )),
    }
}

/// Resume of an interrupted batch: the open children continue side by side; calls that never
/// opened a child are gated and run in phase 3, in order.
async fn settle_batch(ctx: &TurnCtx, open: &[ToolCallRow]) -> Result<BatchFlow, EngineError> {
    let limit = ctx.policy.max_parallel_subagents;
    let runs: Vec<Indexed<'_, Option<ChildEnd>>> = open
        .iter()
        .enumerate()
        .map(|(i, row)| -> BoxFuture<'_, _> {
            Box::pin(async move { (i, subagent::settle(ctx, row).await) })
        })
        .collect();
    let mut done: Vec<_> = futures::stream::iter(runs).buffer_unordered(limit).collect().await;
    done.sort_by_key(|(i, _)| *i);
    let mut results = Vec::with_capacity(done.len());
    for (i, result) in done {
        let row = &open[i];
        let deferred = match result? {
            Some(end) => Deferred::Child(end),
            None if ctx.frame.cancel.is_cancelled() => Deferred::Unstarted,
            None => Deferred::Recorded(call_flow::settle(ctx, row).await?),
        };
        results.push((row.id, deferred));
    }
    record_in_order(ctx, results).await
}

/// Phase 3: each result in call order; the batch is cancelled if any call was.
async fn record_in_order(
    ctx: &TurnCtx,
    results: Vec<(i64, Deferred)>,
) -> Result<BatchFlow, EngineError> {
    let mut parked = Vec::new();
    let mut cancelled = false;
    for (id, deferred) in results {
        let flow = match deferred {
            Deferred::Recorded(flow) => flow,
            Deferred::Child(end) => call_flow::record_child_end(ctx, id, end).await?,
            Deferred::Unstarted => {
                call_flow::cancel_unstarted(ctx, &[id]).await?;
                CallFlow::Cancelled
            }
        };
        match flow {
            CallFlow::Continue => {}
            CallFlow::Parked(ids) => parked.extend(ids),
            CallFlow::Cancelled => cancelled = true,
        }
    }
    Ok(if cancelled {
        BatchFlow::Cancelled
    } else if parked.is_empty() {
        BatchFlow::Continue
    } else {
        BatchFlow::Parked(parked)
    })
}
