//! The calls of one reply (or the calls a resume finds open): one after another by default; a
//! stop leaves the calls that never started `cancelled`.

use skald_store::repo::tools::ToolCallRow;

use super::TurnCtx;
use super::call_flow::{self, CallFlow};
use crate::error::EngineError;

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

/// Runs the calls of one reply in call order.
pub async fn run_calls(
    ctx: &TurnCtx,
    message_id: i64,
    calls: &[PlannedCall],
) -> Result<BatchFlow, EngineError> {
    let ids: Vec<i64> = calls.iter().map(|c| c.id).collect();
    let mut parked = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let flow = if ctx.frame.cancel.is_cancelled() {
            CallFlow::Cancelled
        } else {
            call_flow::handle(ctx, call.id, message_id, &call.name, &call.arguments).await?
        };
        match flow {
            CallFlow::Continue => {}
            CallFlow::Parked => parked.push(call.id),
            CallFlow::Cancelled => {
                call_flow::cancel_unstarted(ctx, &ids[i..]).await?;
                return Ok(BatchFlow::Cancelled);
            }
        }
    }
    Ok(if parked.is_empty() { BatchFlow::Continue } else { BatchFlow::Parked(parked) })
}

/// Settles calls an earlier run left open (decisions, crash leftovers), in id order.
pub async fn settle_open(ctx: &TurnCtx, open: &[ToolCallRow]) -> Result<BatchFlow, EngineError> {
    let ids: Vec<i64> = open.iter().map(|r| r.id).collect();
    let mut parked = Vec::new();
    for (i, row) in open.iter().enumerate() {
        let flow = if ctx.frame.cancel.is_cancelled() {
            CallFlow::Cancelled
        } else {
            call_flow::settle(ctx, row).await?
        };
        match flow {
            CallFlow::Continue => {}
            CallFlow::Parked => parked.push(row.id),
            CallFlow::Cancelled => {
                call_flow::cancel_unstarted(ctx, &ids[i..]).await?;
                return Ok(BatchFlow::Cancelled);
            }
        }
    }
    Ok(if parked.is_empty() { BatchFlow::Continue } else { BatchFlow::Parked(parked) })
}
