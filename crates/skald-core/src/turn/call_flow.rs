//! One tool call end to end: validate → gate → run → record, each transition committed.

use std::path::PathBuf;

use serde_json::Value;
use skald_protocol::{Event, ResultType, ToolStatus};
use tokio_util::sync::CancellationToken;

use super::{TurnCtx, synthetic};
use crate::approval::rules::CallFacts;
use crate::approval::{Action, Verdict};
use crate::error::EngineError;
use crate::tools::{ToolCategory, ToolContext, ToolError, paths};

/// What the loop does after a call.
pub enum CallFlow {
    Continue,
    /// Waiting for a human; the turn stops after the remaining calls of the batch are settled.
    Parked,
    Cancelled,
}

/// Tool definitions offered this turn, in a deterministic order (sorted by name), minus tools
/// the policy denies outright.
pub fn offered_tools(ctx: &TurnCtx) -> Vec<Value> {
    let mut defs: Vec<(String, Value)> = ctx
        .tools
        .defs()
        .into_iter()
        .map(|d| (d.name.to_string(), d.to_openai()))
        .chain(synthetic::definitions(ctx.restart_available))
        .filter(|(name, _)| !ctx.rules.hides_tool(name))
        .collect();
    defs.sort_by(|a, b| a.0.cmp(&b.0));
    defs.into_iter().map(|(_, d)| d).collect()
}

pub async fn handle(
    ctx: &TurnCtx,
    id: i64,
    message_id: i64,
    name: &str,
    raw_args: &str,
    cancel: &CancellationToken,
) -> Result<CallFlow, EngineError> {
    let parsed: Result<Value, String> = match serde_json::from_str::<Value>(raw_args) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("the arguments must be a JSON object".to_string()),
        Err(e) if raw_args.trim().is_empty() => Err(format!("the arguments are empty ({e})")),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    };
    let tool = ctx.tools.get(name);
    let shown_args = parsed.clone().unwrap_or_else(|_| Value::String(raw_args.to_string()));
    let (label_short, label_full, path) = match (&tool, &parsed) {
        (Some(t), Ok(a)) => (
            t.describe(a, false),
            t.describe(a, true),
            t.target_path(a, &ctx.workdir).map(|p| p.display().to_string()),
        ),
        _ => (name.to_string(), name.to_string(), None),
    };
    ctx.emitter.emit(Event::ToolStart {
        tool_call_id: id,
        message_id,
        name: name.to_string(),
        arguments: shown_args,
        label_short,
        label_full,
        path,
    });

    let known = tool.is_some() || synthetic::is_synthetic(name, ctx.restart_available);
    if !known || ctx.rules.hides_tool(name) {
        let mut available: Vec<String> = offered_tools(ctx)
            .iter()
            .filter_map(|d| d["function"]["name"].as_str().map(str::to_string))
            .collect();
        available.sort();
        let msg = format!("unknown tool `{name}`. Available tools: {}", available.join(", "));
        return fail(ctx, id, &msg).await;
    }
    let args = match parsed {
        Ok(a) => a,
        Err(e) => {
            return fail(ctx, id, &format!("{e}. Call `{name}` again with a JSON object.")).await;
        }
    };

    let target: Option<PathBuf> = tool.as_ref().and_then(|t| t.target_path(&args, &ctx.workdir));
    let category = tool.as_ref().map(|t| t.def().category).or(Some(ToolCategory::Session));
    match verdict(ctx, name, target.as_deref(), category) {
        Verdict::Allow => {}
        Verdict::Deny(reason) => {
            ctx.store.set_tool_status(id, ToolStatus::Rejected, Some(&reason)).await?;
            ctx.emitter.emit(Event::ToolRejected { tool_call_id: id, reason });
            return Ok(CallFlow::Continue);
        }
        Verdict::Require if ctx.auto_deny => {
            let reason = "Rejected automatically: this unattended session cannot ask for approval."
                .to_string();
            ctx.store.set_tool_status(id, ToolStatus::Rejected, Some(&reason)).await?;
            ctx.emitter.emit(Event::ToolRejected { tool_call_id: id, reason });
            return Ok(CallFlow::Continue);
        }
        Verdict::Require => {
            // The row stays `pending`; the event tells every client a decision is needed.
            ctx.emitter.emit(Event::ApprovalRequired {
                request_id: id,
                tool_call_id: id,
                tool_name: name.to_string(),
                arguments: args,
            });
            return Ok(CallFlow::Parked);
        }
    }

    ctx.store.set_tool_status(id, ToolStatus::Running, None).await?;
    let outcome = match tool {
        Some(t) => {
            let tctx = ToolContext::new(ctx.workdir.clone(), cancel.clone());
            t.run(&args, &tctx).await
        }
        None => synthetic::run(ctx, name, &args).await,
    };
    match outcome {
        Ok(out) => {
            ctx.store.set_tool_status(id, ToolStatus::Done, Some(&out.text)).await?;
            ctx.emitter.emit(Event::ToolDone {
                tool_call_id: id,
                result: out.text,
                result_type: ResultType::String,
            });
            if let Some(p) = out.changed_path {
                ctx.emitter.emit(Event::FileChanged { path: p.display().to_string() });
            }
            Ok(CallFlow::Continue)
        }
        Err(ToolError::Cancelled) => {
            ctx.store.set_tool_status(id, ToolStatus::Cancelled, Some(CANCELLED_NOTE)).await?;
            ctx.emitter.emit(Event::ToolCancelled { tool_call_id: id });
            Ok(CallFlow::Cancelled)
        }
        Err(e) => fail(ctx, id, &e.to_string()).await,
    }
}

const CANCELLED_NOTE: &str = "Cancelled by the user (/stop) before it finished.";

/// Calls of a batch that never started when the turn stopped become `cancelled`, so they are
/// terminal and read as such in every later request.
pub async fn cancel_unstarted(ctx: &TurnCtx, ids: &[i64]) -> Result<(), EngineError> {
    for id in ids {
        let row = ctx.store.tool_call(*id).await?;
        if row.status()? == ToolStatus::Pending {
            ctx.store
                .set_tool_status(*id, ToolStatus::Cancelled, Some("Not run: the turn was stopped."))
                .await?;
            ctx.emitter.emit(Event::ToolCancelled { tool_call_id: *id });
        }
    }
    Ok(())
}

async fn fail(ctx: &TurnCtx, id: i64, error: &str) -> Result<CallFlow, EngineError> {
    ctx.store.set_tool_status(id, ToolStatus::Failed, Some(error)).await?;
    ctx.emitter.emit(Event::ToolError { tool_call_id: id, error: error.to_string() });
    Ok(CallFlow::Continue)
}

fn verdict(
    ctx: &TurnCtx,
    name: &str,
    target: Option<&std::path::Path>,
    category: Option<ToolCategory>,
) -> Verdict {
    let canonical =
        target.and_then(|t| paths::resolve_path(&ctx.workdir, &t.to_string_lossy()).ok());
    let roots: Vec<PathBuf> = [ctx.data_dir.clone(), ctx.workdir.clone()]
        .into_iter()
        .map(|r| std::fs::canonicalize(&r).unwrap_or(r))
        .collect();
    let facts = CallFacts {
        tool: name,
        agent_id: &ctx.agent.id,
        source: &ctx.source,
        path: canonical.as_deref(),
        roots: &roots,
    };
    let action = ctx.rules.evaluate(&facts).map(|r| (r.action, r.note.clone()));
    match action {
        None | Some((Action::Allow, _)) => Verdict::Allow,
        Some((Action::Deny, _)) => {
            Verdict::Deny(format!("Denied by policy: `{name}` is not allowed on this path."))
        }
        Some((Action::Require, _)) => {
            let now = ctx.store.clock().now();
            if ctx.bypass.covers(ctx.session_id, name, category, now) {
                Verdict::Allow
            } else {
                Verdict::Require
            }
        }
    }
}
