//! One tool call end to end: validate → gate → (park and wait for a human) → run → record.
//! Each transition is committed before its event is emitted. Resume settles calls through the
//! same functions, so a live turn and a resume gate and record identically.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use skald_protocol::{ApprovalKind, ApprovalRequest, Event, FileDiff, ResultType, ToolStatus};
use skald_store::repo::approvals::NewApprovalRequest;
use skald_store::repo::tools::ToolCallRow;
use tokio_util::sync::CancellationToken;

use super::subagent::{self, ChildEnd};
use super::tool_set::{OfferedTool, ToolSet, labels_of};
use super::{TurnCtx, config_tools, mcp, synthetic};
use crate::approval::gate::{self, GateInput, verdict};
use crate::approval::protected::Protection;
use crate::approval::read_filter::ReadScope;
use crate::approval::{Verdict, diff, rejection_message};
use crate::context::call_results::{
    CANCELLED_AWAITING_ANSWER, CANCELLED_AWAITING_APPROVAL, CANCELLED_RUNNING, CANCELLED_SUBAGENT,
    CANCELLED_UNSTARTED,
};
use crate::error::EngineError;
use crate::tools::names::{SessionTool, ToolName};
use crate::tools::{self, ArgsError, ToolContext, ToolError, ToolOutput, parse_args, paths};

/// What the loop does after a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFlow {
    Continue,
    /// These calls (this one, or a sub-agent's) wait for a human and this process does not wait
    /// (CLI `chat`): the turn ends parked.
    Parked(Vec<i64>),
    Cancelled,
}

/// A call after its gate: recorded already, allowed to run (with the path the gate judged), or
/// parked for a human.
pub enum Gate {
    Recorded(CallFlow),
    Allowed(Arc<OfferedTool>, Value, Option<PathBuf>),
    Parked(Value),
}

/// What the gate or a person let through. The call runs only while it still does exactly that:
/// its path resolves where it did when judged (no link planted since), and a write still makes
/// the diff the person saw.
#[derive(Debug, Default)]
struct Cleared {
    target: Option<PathBuf>,
    diff: Option<FileDiff>,
}

/// A live call the model just asked for.
pub async fn handle(
    ctx: &TurnCtx,
    id: i64,
    message_id: i64,
    name: &str,
    raw_args: &str,
) -> Result<CallFlow, EngineError> {
    let set = ToolSet::resolve(ctx);
    let parsed = announce(ctx, &set, id, message_id, name, raw_args);
    gate_and_run(ctx, &set, id, name, parsed, &ctx.frame.cancel).await
}

/// Tells every client the call starts (`tool_start`, with its labels); returns its arguments.
pub fn announce(
    ctx: &TurnCtx,
    set: &ToolSet,
    id: i64,
    message_id: i64,
    name: &str,
    raw_args: &str,
) -> Result<Value, ArgsError> {
    let parsed = parse_args(raw_args);
    let shown_args = parsed.clone().unwrap_or_else(|_| Value::String(raw_args.to_string()));
    let ((label_short, label_full), path) = match (set.get(name), &parsed) {
        (Some(t), Ok(a)) => {
            (t.labels(a), t.target_path(a, &ctx.policy.workdir).map(|p| p.display().to_string()))
        }
        (None, Ok(a)) => (labels_of(name, a), None),
        _ => ((name.to_string(), name.to_string()), None),
    };
    ctx.frame.emitter.emit(Event::ToolStart {
        tool_call_id: id,
        message_id,
        name: name.to_string(),
        arguments: shown_args,
        label_short,
        label_full,
        path,
    });
    parsed
}

/// Settles a call left open by an earlier run (resume).
pub async fn settle(ctx: &TurnCtx, row: &ToolCallRow) -> Result<CallFlow, EngineError> {
    let cancel = &ctx.frame.cancel;
    let name = row.name.as_str();
    let raw = row.arguments.clone().unwrap_or_default();
    let typed = ToolName::parse(name);
    // A delegation whose child frame exists: the child settles first, its end is the result.
    if matches!(typed, ToolName::Delegation(_))
        && let Some(end) = subagent::settle(ctx, row).await?
    {
        return record_child_end(ctx, row.id, end).await;
    }
    // A fresh process has not started the frame's servers yet: an MCP call, open or cut off,
    // is gated and judged by what its server lists (found by the kill harness: a call stored
    // just before a kill was refused as unknown on resume).
    if matches!(typed, ToolName::Mcp { .. }) {
        mcp::prepare_round(ctx).await;
    }
    let set = ToolSet::resolve(ctx);
    match row.status()? {
        ToolStatus::Running => {
            // It may have had effects: re-run only what is safe to repeat.
            let args = parse_args(&raw).unwrap_or(Value::Null);
            if let Some(tool) = set.get(name).filter(|t| t.safe_to_rerun(&args)) {
                return execute(ctx, tool, row.id, &args, cancel).await;
            }
            // Any other gets the interrupted result and is flagged for the user to reconcile.
            let (store, tools, emitter) = (&ctx.deps.store, &ctx.deps.tools, &ctx.frame.emitter);
            crate::session::interrupted::flag(store, tools, emitter, ctx.policy.session_id, row)
                .await?;
            Ok(CallFlow::Continue)
        }
        ToolStatus::Pending => match ctx.deps.store.approval_request(row.id).await? {
            // A question: settle its answer (or keep waiting for it).
            None if ctx.deps.store.question(row.id).await?.is_some() => {
                await_answer(ctx, row.id).await
            }
            // Parked before: settle the human's decision (or keep waiting for it).
            Some(request) => {
                let args = parse_args(&request.arguments).unwrap_or(Value::Null);
                await_decision_and_run(ctx, &set, row.id, name, &args, cancel).await
            }
            // Never reached the gate (later call of a batch, or a crash before gating).
            None => gate_and_run(ctx, &set, row.id, name, parse_args(&raw), cancel).await,
        },
        _ => Ok(CallFlow::Continue),
    }
}

async fn gate_and_run(
    ctx: &TurnCtx,
    set: &ToolSet,
    id: i64,
    name: &str,
    parsed: Result<Value, ArgsError>,
    cancel: &CancellationToken,
) -> Result<CallFlow, EngineError> {
    match gate(ctx, set, id, name, parsed).await? {
        Gate::Recorded(flow) => Ok(flow),
        Gate::Allowed(tool, args, target) => {
            let cleared = Cleared { target, diff: None };
            execute_cleared(ctx, &tool, id, &args, cancel, cleared).await
        }
        Gate::Parked(args) => await_decision_and_run(ctx, set, id, name, &args, cancel).await,
    }
}

/// Validates the call and asks the approval gate; a call that needs a human is parked (its
/// request recorded and announced). Questions are asked and answered here.
pub async fn gate(
    ctx: &TurnCtx,
    set: &ToolSet,
    id: i64,
    name: &str,
    parsed: Result<Value, ArgsError>,
) -> Result<Gate, EngineError> {
    let cancel = &ctx.frame.cancel;
    let recorded = |flow| Ok(Gate::Recorded(flow));
    let Some(tool) = set.get(name) else {
        let msg = mcp::unknown_call(name, ctx).unwrap_or_else(|| {
            format!("unknown tool `{name}`. Available tools: {}", set.offered_names().join(", "))
        });
        return recorded(fail(ctx, id, &msg).await?);
    };
    let args = match parsed {
        Ok(a) => a,
        Err(e) => {
            let msg = format!("{e}. Call `{name}` again with a JSON object.");
            return recorded(fail(ctx, id, &msg).await?);
        }
    };
    if let Some(schema) = tool.schema()
        && let Err(e) = tools::check_args(schema, &args)
    {
        let msg = format!("invalid arguments: {e}. Call `{name}` again.");
        return recorded(fail(ctx, id, &msg).await?);
    }
    if tool.name == ToolName::Session(SessionTool::Question) {
        return recorded(ask(ctx, id, &args).await?);
    }
    // A job is checked before anyone is asked: a schedule that cannot run is the model's to fix
    // (with the parser's words). What the person reviews, and what runs once they approve, is
    // the call with its choices made explicit and its schedule in words.
    let args = if tool.schedules_job(&args) {
        match subagent::cron_job(ctx, &args) {
            Ok(job) => subagent::review_args(&job),
            Err(m) => return recorded(fail(ctx, id, &m).await?),
        }
    } else {
        args
    };
    let target: Option<PathBuf> = tool.target_path(&args, &ctx.policy.workdir);
    let input = GateInput {
        session_id: ctx.policy.session_id,
        tool: name,
        category: tool.category,
        read_only: tool.read_only,
        target: target.as_deref(),
        args: &args,
        agent_id: &ctx.frame.agent.id,
        source: &ctx.policy.source,
        workdir: &ctx.policy.workdir,
        data_dir: &ctx.deps.data_dir,
        home: ctx.deps.home_dir.as_deref(),
        run_context: &ctx.policy.run_context,
    };
    match verdict(&ctx.deps.store, &ctx.policy.rules, &input).await {
        Verdict::Allow => Ok(Gate::Allowed(tool.clone(), args, target)),
        Verdict::Deny(reason) => recorded(reject(ctx, id, &reason).await?),
        Verdict::Require if ctx.policy.auto_deny => {
            let reason = "Rejected automatically: this unattended session cannot ask for approval.";
            recorded(reject(ctx, id, reason).await?)
        }
        Verdict::Require => {
            // The write's outcome, predicted once: the human reviews it as a diff, and an edit
            // that cannot apply (text not found, binary file, ...) is the model's to fix —
            // asking a human to approve it would only waste their attention.
            let tctx = ToolContext::new(ctx.policy.workdir.clone(), cancel.clone());
            let predicted = match tool.predict_write(&args, &tctx) {
                Some(Err(e)) => return recorded(fail(ctx, id, &e.to_string()).await?),
                Some(Ok(write)) => Some(write),
                None => None,
            };
            let protected = gate::protection(&input);
            park(ctx, tool, id, &args, predicted, target, protected).await?;
            Ok(Gate::Parked(args))
        }
    }
}

/// Records what the human reviews and tells every client a decision is needed. `predicted` is a
/// write tool's (current, new) content.
async fn park(
    ctx: &TurnCtx,
    tool: &OfferedTool,
    id: i64,
    args: &Value,
    predicted: Option<(Option<String>, String)>,
    target: Option<PathBuf>,
    protected: Option<(PathBuf, Protection)>,
) -> Result<(), EngineError> {
    let name = tool.wire();
    let mut kind = ApprovalKind::Tool;
    let mut review = None;
    if let Some((old, new)) = predicted {
        let shown = target.as_ref().map_or_else(|| name.to_string(), |p| p.display().to_string());
        let label =
            target.as_deref().map_or_else(|| shown.clone(), |p| diff_label(p, &ctx.policy.workdir));
        let d = diff::file_diff(&label, old.as_deref().map(str::as_bytes), Some(new.as_bytes()));
        kind = ApprovalKind::Write;
        review = Some((shown, d));
    }
    let command = tool.command(args).map(str::to_string);
    let workdir = command.as_ref().map(|_| {
        args.get("workdir")
            .and_then(Value::as_str)
            .map_or_else(|| ctx.policy.workdir.clone(), |w| ctx.policy.workdir.join(w))
            .display()
            .to_string()
    });
    if command.is_some() {
        kind = ApprovalKind::Command;
    }
    // The file a call acts on is shown as the path it resolves to: `../x` or a link inside the
    // project must not pass for a file in it.
    let target_shown = target.as_ref().map(|t| t.display().to_string());
    let summary = match (&review, &command, &target_shown) {
        _ if tool.schedules_job(args) => job_summary(args),
        (Some((path, d)), _, _) => format!("{name} {path} ({})", d.summary),
        (None, Some(c), _) => format!("run `{c}`"),
        (None, None, Some(path)) => format!("{name} {path} {}", compact_json(args)),
        _ => format!("{name} {}", compact_json(args)),
    };
    // Why it asks although a bypass may be in force: the person should know what it touches.
    let summary = match &protected {
        Some((path, why)) => {
            format!("{summary} · protected: {} is {}", path.display(), why.describe())
        }
        None => summary,
    };
    let diff_json = review
        .as_ref()
        .map(|(_, d)| serde_json::to_string(d))
        .transpose()
        .map_err(|e| EngineError::Internal(format!("cannot encode a file diff: {e}")))?;
    let new_request = NewApprovalRequest {
        tool_call_id: id,
        session_id: ctx.policy.session_id,
        stack_id: ctx.frame.stack_id,
        kind,
        tool_name: name.to_string(),
        arguments: args.to_string(),
        path: review.as_ref().map(|(p, ..)| p.clone()).or(target_shown.clone()),
        command: command.clone(),
        workdir: workdir.clone(),
        diff: diff_json,
        summary,
    };
    let request = match (review, command.zip(workdir), tool.mcp_tool()) {
        (Some((path, diff)), ..) => ApprovalRequest::Write { path, diff },
        (None, Some((command, workdir)), _) => ApprovalRequest::Command { command, workdir },
        (None, None, Some((server, tool))) => {
            ApprovalRequest::McpCall { server: server.to_string(), tool: tool.to_string() }
        }
        (None, None, None) => ApprovalRequest::Other { path: target_shown },
    };
    let requested = Event::ApprovalRequested {
        request_id: id,
        tool_call_id: id,
        tool_name: name.to_string(),
        arguments: args.clone(),
        request,
    };
    let store = &ctx.deps.store;
    ctx.frame.emitter.commit(vec![requested], store.create_approval_request(&new_request)).await?;
    Ok(())
}

/// Waits for the decision row (written by this or any other process), then settles the call.
pub async fn await_decision_and_run(
    ctx: &TurnCtx,
    set: &ToolSet,
    id: i64,
    name: &str,
    args: &Value,
    cancel: &CancellationToken,
) -> Result<CallFlow, EngineError> {
    let decision = || ctx.deps.store.decision(id);
    let d = match wait_for_human(ctx, id, CANCELLED_AWAITING_APPROVAL, decision).await? {
        Waited::Got(d) => d,
        Waited::Ended(flow) => return Ok(flow),
    };
    if !d.approved {
        return reject(ctx, id, &rejection_message(d.note.as_deref())).await;
    }
    let Some(tool) = set.get(name) else {
        return fail(ctx, id, &format!("`{name}` is no longer available here")).await;
    };
    // What the human saw: the call runs only while it still acts on that path and a write
    // still makes exactly that change.
    let request = ctx.deps.store.approval_request(id).await?;
    let cleared = Cleared {
        target: request.as_ref().and_then(|r| r.path.as_deref()).map(PathBuf::from),
        diff: request.and_then(|r| r.diff).and_then(|d| serde_json::from_str::<FileDiff>(&d).ok()),
    };
    execute_cleared(ctx, tool, id, args, cancel, cleared).await
}

/// What looking for a human's row (a decision or an answer) came to.
enum Waited<T> {
    Got(T),
    /// Not there yet: the call stays parked and the run ends; the row, when written, queues the
    /// turn's continuation.
    Ended(CallFlow),
}

/// The human's row (written by this or any other process), or the call parked. Nothing waits
/// inside a run: a parked run lets go of its session and writes nothing until the decision.
/// A run that was stopped (a `/stop` of a parked turn settles it with a cancelled token) cancels
/// the call instead, with `cancelled_note` telling the model what it was waiting for.
async fn wait_for_human<T, F, Fut>(
    ctx: &TurnCtx,
    id: i64,
    cancelled_note: &str,
    read: F,
) -> Result<Waited<T>, EngineError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, skald_store::StoreError>>,
{
    if let Some(row) = read().await? {
        return Ok(Waited::Got(row));
    }
    if ctx.frame.cancel.is_cancelled() {
        let cancelled = vec![Event::ToolCancelled { tool_call_id: id }];
        end_call(ctx, id, ToolStatus::Cancelled, Some(cancelled_note), cancelled).await?;
        return Ok(Waited::Ended(CallFlow::Cancelled));
    }
    Ok(Waited::Ended(CallFlow::Parked(vec![id])))
}

/// Records the question and tells every client; the answer, when written, continues the turn.
async fn ask(ctx: &TurnCtx, id: i64, args: &Value) -> Result<CallFlow, EngineError> {
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or("");
    let (title, question) = (text("title"), text("question"));
    if question.is_empty() {
        return fail(ctx, id, "`question` is required (string)").await;
    }
    let title = if title.is_empty() { "Question" } else { title };
    let suggested: Vec<String> = args
        .get("suggested_answers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let suggested_json = serde_json::to_string(&suggested).unwrap_or_else(|_| "[]".into());
    let asked = Event::AgentQuestion {
        request_id: id,
        tool_call_id: id,
        title: title.to_string(),
        question: question.to_string(),
        suggested_answers: suggested,
    };
    let (session_id, stack_id) = (ctx.policy.session_id, ctx.frame.stack_id);
    let create =
        ctx.deps.store.create_question(id, session_id, stack_id, title, question, &suggested_json);
    ctx.frame.emitter.commit(vec![asked], create).await?;
    await_answer(ctx, id).await
}

async fn await_answer(ctx: &TurnCtx, id: i64) -> Result<CallFlow, EngineError> {
    let answer = || ctx.deps.store.answer(id);
    let answer = match wait_for_human(ctx, id, CANCELLED_AWAITING_ANSWER, answer).await? {
        Waited::Got(a) => a,
        Waited::Ended(flow) => return Ok(flow),
    };
    let done = done_event(id, answer.clone());
    end_call(ctx, id, ToolStatus::Done, Some(&answer), vec![done]).await?;
    Ok(CallFlow::Continue)
}

/// Runs a call judged earlier (a read-only one re-run after a crash).
async fn execute(
    ctx: &TurnCtx,
    tool: &OfferedTool,
    id: i64,
    args: &Value,
    cancel: &CancellationToken,
) -> Result<CallFlow, EngineError> {
    execute_cleared(ctx, tool, id, args, cancel, Cleared::default()).await
}

/// Runs the call as `cleared` let it through.
async fn execute_cleared(
    ctx: &TurnCtx,
    tool: &OfferedTool,
    id: i64,
    args: &Value,
    cancel: &CancellationToken,
    cleared: Cleared,
) -> Result<CallFlow, EngineError> {
    ctx.deps.store.start_tool_call(id).await?;
    if let ToolName::Delegation(delegation) = &tool.name {
        let end = subagent::dispatch(ctx, id, *delegation, args).await?;
        return record_child_end(ctx, id, end).await;
    }
    // Boxed: a tool's future is large, and this one is polled deep inside a frame's (itself
    // nested in a parent's, for a sub-agent): kept out of this state, it is off the stack.
    let outcome = Box::pin(run_tool(ctx, tool, id, args, cancel, cleared)).await;
    end_as(ctx, id, outcome).await
}

/// Runs the (non-delegation) tool of call `id` as `cleared` let it through.
async fn run_tool(
    ctx: &TurnCtx,
    tool: &OfferedTool,
    id: i64,
    args: &Value,
    cancel: &CancellationToken,
    cleared: Cleared,
) -> Result<ToolOutput, ToolError> {
    match (&tool.name, tool.registered()) {
        (_, Some(t)) => {
            let now = t.target_path(args, &ctx.policy.workdir);
            match paths::moved_since_cleared(cleared.target.as_deref(), now.as_deref()) {
                Some(e) => Err(e),
                None => {
                    let tctx = ToolContext::new(ctx.policy.workdir.clone(), cancel.clone())
                        .with_read_filter(read_filter(ctx, tool.wire()))
                        .with_approved_diff(cleared.diff)
                        .with_expected_target(cleared.target)
                        .for_call(id);
                    t.run(args, &tctx).await
                }
            }
        }
        (ToolName::Session(session_tool), None) => synthetic::run(ctx, *session_tool, args).await,
        (ToolName::Activate, None) => mcp::activate(ctx, args).await,
        (ToolName::Config(config_tool), None) => config_tools::run(ctx, *config_tool, args).await,
        (ToolName::Mcp { server, tool: mcp_tool }, None) => {
            mcp::call(ctx, id, server, mcp_tool, args).await
        }
        (ToolName::Registered(name), None) => {
            Err(ToolError::Failed(format!("`{name}` is not registered in this engine")))
        }
        // Answered by `execute_cleared` before a tool is run.
        (ToolName::Delegation(_), None) => {
            Err(ToolError::Failed("a delegation is not a tool to run".into()))
        }
    }
}

/// Ends call `id` as its tool's `outcome` says, with the events that tell every client.
async fn end_as(
    ctx: &TurnCtx,
    id: i64,
    outcome: Result<ToolOutput, ToolError>,
) -> Result<CallFlow, EngineError> {
    let failed = |error: String, media| Event::ToolError { tool_call_id: id, error, media };
    let (status, result, events, flow) = match outcome {
        // The tool ran and says it failed: what it returned besides its error goes with it.
        Ok(out) if out.failed => {
            let event = failed(out.text.clone(), out.media);
            (ToolStatus::Failed, out.text, vec![event], CallFlow::Continue)
        }
        Ok(out) => {
            // The change is recorded before the call is done, so a reader that sees it done
            // also sees what it changed.
            let changed = out.change.map(|change| {
                let path = change.path.display().to_string();
                let old = change.old.as_deref().map(str::as_bytes);
                let label = diff_label(&change.path, &ctx.policy.workdir);
                let diff = diff::file_diff(&label, old, Some(change.new.as_bytes()));
                (path, diff)
            });
            if let Some((_, diff)) = &changed {
                let json = serde_json::to_string(diff).map_err(|e| {
                    EngineError::Internal(format!("cannot encode a file diff: {e}"))
                })?;
                ctx.deps.store.record_file_diff(id, &json).await?;
            }
            let mut events = vec![Event::ToolDone {
                tool_call_id: id,
                result: out.text.clone(),
                result_type: ResultType::String,
                media: out.media,
            }];
            if let Some((path, diff)) = changed {
                events.push(Event::FileChanged { path, tool_call_id: id, diff });
            }
            (ToolStatus::Done, out.text, events, CallFlow::Continue)
        }
        Err(ToolError::Cancelled) => {
            let events = vec![Event::ToolCancelled { tool_call_id: id }];
            (ToolStatus::Cancelled, CANCELLED_RUNNING.to_string(), events, CallFlow::Cancelled)
        }
        Err(e) => {
            let error = e.to_string();
            let events = vec![failed(error.clone(), Default::default())];
            (ToolStatus::Failed, error, events, CallFlow::Continue)
        }
    };
    end_call(ctx, id, status, Some(&result), events).await?;
    Ok(flow)
}

/// What a search may show of the trees it walks: what `read_file` could read without asking.
fn read_filter(ctx: &TurnCtx, tool: &str) -> tools::ReadFilter {
    let scope = ReadScope {
        tool,
        agent_id: &ctx.frame.agent.id,
        source: &ctx.policy.source,
        workdir: &ctx.policy.workdir,
        data_dir: &ctx.deps.data_dir,
        home: ctx.deps.home_dir.as_deref(),
    };
    crate::approval::read_filter::read_filter(&ctx.policy.rules, &scope)
}

/// Records how a delegation's child ended as the spawning call's result. A parked child leaves
/// the call `running` (its frame open) for the resume.
pub async fn record_child_end(
    ctx: &TurnCtx,
    id: i64,
    end: ChildEnd,
) -> Result<CallFlow, EngineError> {
    match end {
        ChildEnd::Answer(text) => {
            let done = done_event(id, text.clone());
            end_call(ctx, id, ToolStatus::Done, Some(&text), vec![done]).await?;
            Ok(CallFlow::Continue)
        }
        ChildEnd::Failed(message) => fail(ctx, id, &message).await,
        ChildEnd::Cancelled => {
            let cancelled = vec![Event::ToolCancelled { tool_call_id: id }];
            end_call(ctx, id, ToolStatus::Cancelled, Some(CANCELLED_SUBAGENT), cancelled).await?;
            Ok(CallFlow::Cancelled)
        }
        ChildEnd::Parked(ids) => Ok(CallFlow::Parked(ids)),
    }
}

/// How a diff names its file: relative to the turn's working directory when inside it (what the
/// user asked about), absolute otherwise, so a write elsewhere stands out.
fn diff_label(path: &Path, workdir: &Path) -> String {
    let relative = |base: &Path| {
        path.strip_prefix(base)
            .ok()
            .filter(|rel| !rel.as_os_str().is_empty())
            .map(|rel| rel.display().to_string())
    };
    // Targets are canonical; the workdir may have been given through a symlink.
    relative(workdir)
        .or_else(|| std::fs::canonicalize(workdir).ok().and_then(|w| relative(&w)))
        .unwrap_or_else(|| path.display().to_string())
}

/// Calls of a batch that never started when the turn stopped become `cancelled`, so they are
/// terminal and read as such in every later request.
pub async fn cancel_unstarted(ctx: &TurnCtx, ids: &[i64]) -> Result<(), EngineError> {
    for id in ids {
        let row = ctx.deps.store.tool_call(*id).await?;
        if row.status()? == ToolStatus::Pending {
            let cancelled = vec![Event::ToolCancelled { tool_call_id: *id }];
            end_call(ctx, *id, ToolStatus::Cancelled, Some(CANCELLED_UNSTARTED), cancelled).await?;
        }
    }
    Ok(())
}

async fn reject(ctx: &TurnCtx, id: i64, reason: &str) -> Result<CallFlow, EngineError> {
    let rejected = vec![Event::ToolRejected { tool_call_id: id, reason: reason.to_string() }];
    end_call(ctx, id, ToolStatus::Rejected, Some(reason), rejected).await?;
    Ok(CallFlow::Continue)
}

async fn fail(ctx: &TurnCtx, id: i64, error: &str) -> Result<CallFlow, EngineError> {
    let failed = vec![Event::ToolError {
        tool_call_id: id,
        error: error.to_string(),
        media: Default::default(),
    }];
    end_call(ctx, id, ToolStatus::Failed, Some(error), failed).await?;
    Ok(CallFlow::Continue)
}

/// Moves call `id` to its end `status` with `result`; `events` ride the same transaction.
async fn end_call(
    ctx: &TurnCtx,
    id: i64,
    status: ToolStatus,
    result: Option<&str>,
    events: Vec<Event>,
) -> Result<(), EngineError> {
    ctx.frame.emitter.commit(events, ctx.deps.store.set_tool_status(id, status, result)).await?;
    Ok(())
}

fn done_event(tool_call_id: i64, result: String) -> Event {
    Event::ToolDone {
        tool_call_id,
        result,
        result_type: ResultType::String,
        media: Default::default(),
    }
}

/// A job to schedule in one line: its title (quoted and escaped: the model chose it), agent,
/// schedule in words and next run.
fn job_summary(args: &Value) -> String {
    let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("?");
    let next = args.get("next_runs").and_then(|n| n.get(0)).and_then(Value::as_str);
    format!(
        "schedule the job {}: agent {}, {}{}",
        Value::from(text("title")),
        text("agent_id"),
        text("schedule_in_words"),
        next.map(|n| format!(", next {n}")).unwrap_or_default()
    )
}

fn compact_json(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(119).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::diff_label;

    #[test]
    fn a_diff_names_files_in_the_workdir_relatively_and_others_in_full() {
        let work = Path::new("/home/me/project");
        assert_eq!(diff_label(Path::new("/home/me/project/src/main.rs"), work), "src/main.rs");
        assert_eq!(diff_label(Path::new("/etc/hosts"), work), "/etc/hosts");
        assert_eq!(diff_label(Path::new("/home/me/project"), work), "/home/me/project");
    }
}
