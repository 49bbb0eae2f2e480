//! Sync sub-agents: `execute_task` (mode `sync`, offered to the root) and `execute_subtask`
//! (offered to sub-agents below `llm.max_subagent_depth`). A child frame linked to the spawning
//! call runs inline — same task, processing lock and token — and its end becomes the call's
//! result. Resume settles an interrupted child first, then feeds its result to the parent.
//! `execute_task` mode `async` (an attended root only) starts a background task instead, and
//! mode `cron` (a person's chat only) schedules a job once the person approves exactly it.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;

use serde_json::{Value, json};
use skald_protocol::{
    Event, JobInput, JobSchedule, RunContext, SchedulePreview, TaskState, ToolStatus,
};
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::tasks::{NewTask, TaskRow};
use skald_store::repo::tools::ToolCallRow;

use super::tool_set::OfferedTool;
use super::{TurnCtx, TurnOutcome};
use crate::agents::{self, Agent};
use crate::error::EngineError;
use crate::tools::names::{Delegation, ToolName};

/// How a child frame ended, as its spawning call records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnd {
    /// The child's final answer: the call's result.
    Answer(String),
    /// A tool error for the parent's model (refused, failed, out of rounds).
    Failed(String),
    /// The user's stop ended the child; the parent's call is `cancelled` (decision 46).
    Cancelled,
    /// These calls of the child (or deeper) wait for a human and this process does not wait.
    Parked(Vec<i64>),
}

type FrameFuture<'a> = Pin<Box<dyn Future<Output = Result<TurnOutcome, EngineError>> + Send + 'a>>;

/// The delegation tool this frame would call: `execute_task` at the root of an attended session,
/// `execute_subtask` below it and at the root of an unattended one (sync only: no background
/// lifecycles start from there). `None` when delegation is off.
fn tool_of(ctx: &TurnCtx) -> Option<Delegation> {
    if ctx.policy.max_subagent_depth == 0 {
        return None;
    }
    Some(if offers_async(ctx) { Delegation::Task } else { Delegation::Subtask })
}

/// Only an attended chat's root starts async tasks: unattended roots, task children and
/// sub-agents delegate synchronously, so no background lifecycle starts another.
fn offers_async(ctx: &TurnCtx) -> bool {
    ctx.is_root() && !ctx.policy.auto_deny && !ctx.policy.background
}

/// Only a person's chat schedules jobs: a job runs later with nobody watching, so the one who
/// approves it must be the one it works for (never a job's run, a task, a channel).
fn offers_cron(ctx: &TurnCtx) -> bool {
    offers_async(ctx) && ctx.policy.interactive
}

/// The frame's delegation tool, derived for this level only (never inherited, so no name is
/// offered twice): offered below the depth limit when a task agent other than this one exists.
/// A sub-agent at the depth limit may still call `execute_subtask` (unoffered), so its call gets
/// the limit's error rather than "unknown tool".
pub fn tools(ctx: &TurnCtx) -> Vec<OfferedTool> {
    let Some(delegation) = tool_of(ctx) else { return Vec::new() };
    let unoffered = || vec![OfferedTool::callable_unoffered(ToolName::Delegation(delegation))];
    if ctx.frame.depth >= ctx.policy.max_subagent_depth {
        return unoffered();
    }
    let agents: Vec<Agent> = agents::dispatchable(&ctx.deps.data_dir)
        .into_iter()
        .filter(|a| a.id != ctx.frame.agent.id)
        .collect();
    if agents.is_empty() {
        return unoffered();
    }
    let task = delegation == Delegation::Task;
    let listed: Vec<String> =
        agents.iter().map(|a| format!("- `{}`: {}", a.id, a.meta.description.trim())).collect();
    let mut modes = if task {
        format!(
            " With mode `async` the task runs in the background instead: the call returns at \
             once and the task's report reaches you later as a `[task <label> reported]` \
             message, so keep going (or end your turn) rather than wait for it. One reply may \
             start at most {} async tasks and one turn at most {}: give each task a whole job.",
            ctx.policy.max_async_tasks_per_reply, ctx.policy.max_async_tasks_per_turn
        )
    } else {
        String::new()
    };
    let cron = task && offers_cron(ctx);
    if cron {
        modes.push_str(
            " With mode `cron` and a `schedule` you ask to schedule a job instead: the agent \
             runs the prompt on that schedule, unattended, in this session's working directory. \
             The user always approves the job first; the result names it and its next run. \
             Use it only when the user asks for recurring or later work.",
        );
    }
    let description = format!(
        "Delegate a self-contained task to a sub-agent and wait for its final answer, which \
         becomes this call's result. The sub-agent sees only the prompt you give it (plus the \
         shared scratchpad), so include every fact it needs. Several calls in one reply run at \
         the same time.{modes} Task agents:\n{}",
        listed.join("\n")
    );
    let mut properties = json!({
        "agent_id": { "type": "string", "description": "Id of the task agent to run." },
        "prompt": { "type": "string", "description": "The complete task for the sub-agent." },
        "title": { "type": "string", "description": "A few words naming the task." },
        "description": { "type": "string", "description": "One line shown to the user." }
    });
    // A choice of model only where there is one to make.
    if ctx.policy.models.len() > 1 {
        let names: Vec<&str> = ctx.policy.models.iter().map(|m| m.name.as_str()).collect();
        properties["client"] = json!({
            "type": "string",
            "enum": names,
            "description": "The LLM client to run the sub-agent on; leave it out to let the \
                            agent's own settings choose."
        });
    }
    let mut required = vec!["agent_id", "prompt"];
    if task {
        let mut modes = vec!["sync", "async"];
        let mut said = "`sync`: run now and wait for the answer. `async`: start it in the \
                        background; its report arrives later."
            .to_string();
        if cron {
            modes.push("cron");
            said.push_str(" `cron`: schedule a job (with `schedule`), approved by the user.");
            properties["schedule"] = schedule_schema();
            properties["timezone"] = json!({
                "type": "string",
                "description": "With mode `cron`: the IANA time zone the schedule is read in \
                                (`Europe/Berlin`); leave it out for the user's machine's."
            });
        }
        properties["mode"] = json!({ "type": "string", "enum": modes, "description": said });
        required.insert(0, "mode");
    }
    let def = json!({
        "type": "function",
        "function": {
            "name": delegation.name(),
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false
            }
        }
    });
    vec![OfferedTool::interface(ToolName::Delegation(delegation), def)]
}

/// `schedule` of mode `cron`: the grammar of `skald jobs add`.
fn schedule_schema() -> Value {
    json!({
        "description": "With mode `cron`: when the job runs. `cron`: seven fields `sec min hour \
                        day-of-month month day-of-week year` (Sunday = 0), e.g. `0 0 9 * * 1-5 *` \
                        for weekdays at 09:00. `once`: a local time `2026-12-24T09:00` or an RFC \
                        3339 instant. `every`: an interval in seconds (at least 60).",
        "oneOf": [
            variant("cron", "expr", json!({ "type": "string" })),
            variant("once", "at", json!({ "type": "string" })),
            variant("every", "seconds", json!({ "type": "integer", "minimum": 1 })),
        ]
    })
}

/// One kind of schedule: `{"kind": kind, field: …}`.
fn variant(kind: &str, field: &str, value: Value) -> Value {
    json!({
        "type": "object",
        "properties": { "kind": { "const": kind }, field: value },
        "required": ["kind", field],
        "additionalProperties": false
    })
}

/// What a valid delegation asks for.
struct Request {
    agent: Agent,
    prompt: String,
    title: Option<String>,
    /// The LLM client the call named (a configured one), ahead of the agent's own choice.
    client: Option<String>,
    /// `execute_task` mode `async`: a background task instead of a child frame.
    background: bool,
}

/// The dispatch checks, in order; an `Err` is the tool error the caller's model gets.
fn check(ctx: &TurnCtx, delegation: Delegation, args: &Value) -> Result<Request, String> {
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or("");
    let mut background = false;
    if delegation == Delegation::Task {
        match text("mode") {
            "sync" => {}
            "async" if offers_async(ctx) => background = true,
            "cron" if offers_cron(ctx) => {
                return Err("mode `cron` schedules a job: it starts no sub-agent".into());
            }
            "" => return Err("`mode` is required: use `sync` or `async`".into()),
            other => {
                return Err(format!("mode `{other}` is not available here: use `sync`"));
            }
        }
    }
    let (agent_id, prompt) = (text("agent_id"), text("prompt"));
    if agent_id.is_empty() || prompt.is_empty() {
        return Err("`agent_id` and `prompt` are required (strings)".into());
    }
    if agent_id == ctx.frame.agent.id {
        return Err(format!("`{agent_id}` is the agent making this call: do the task yourself"));
    }
    let depth = ctx.frame.depth + 1;
    let max = ctx.policy.max_subagent_depth;
    if depth > max {
        return Err(format!(
            "cannot start a sub-agent at depth {depth}: the limit is llm.max_subagent_depth = \
             {max}. Do this part of the task yourself."
        ));
    }
    let dispatchable = agents::dispatchable(&ctx.deps.data_dir);
    let Some(agent) = dispatchable.iter().find(|a| a.id == agent_id).cloned() else {
        let ids: Vec<&str> = dispatchable
            .iter()
            .map(|a| a.id.as_str())
            .filter(|id| *id != ctx.frame.agent.id)
            .collect();
        return Err(format!(
            "no task agent `{agent_id}` can be started (only task agents can). Available: {}",
            if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
        ));
    };
    let title = Some(text("title")).filter(|t| !t.is_empty()).map(str::to_string);
    let client = match text("client") {
        "" => None,
        name if ctx.policy.models.iter().any(|m| m.name == name) => Some(name.to_string()),
        name => {
            let names: Vec<&str> = ctx.policy.models.iter().map(|m| m.name.as_str()).collect();
            return Err(format!(
                "no LLM client `{name}` is configured. Available: {}; or leave `client` out",
                names.join(", ")
            ));
        }
    };
    Ok(Request { agent, prompt: prompt.to_string(), title, client, background })
}

/// A job an agent asks to schedule (`execute_task` mode `cron`), checked as `add_job` checks
/// it, with its schedule in words and next fire times: what the person approves.
pub struct CronJob {
    pub input: JobInput,
    pub preview: SchedulePreview,
}

/// Reads and checks a `cron` call; an `Err` is the tool error the model gets (the schedule
/// parser's own words for a bad schedule). The call's choices are made explicit (title, time
/// zone, client) so the job created after the approval is the one the person saw.
pub fn cron_job(ctx: &TurnCtx, args: &Value) -> Result<CronJob, String> {
    if !offers_cron(ctx) {
        return Err("mode `cron` is not available here: only the user's own chat schedules \
                    jobs. Use `sync`."
            .into());
    }
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or("");
    let (agent_id, prompt) = (text("agent_id"), args.get("prompt").and_then(Value::as_str));
    let prompt = prompt.filter(|p| !p.trim().is_empty()).ok_or("`prompt` is required")?;
    if agent_id == ctx.frame.agent.id {
        return Err(format!("`{agent_id}` is the agent making this call: a job runs a task agent"));
    }
    let schedule = args.get("schedule").ok_or(
        "`schedule` is required with mode `cron`: {\"kind\": \"cron\", \"expr\": \"0 0 9 * * 1-5 *\"}, \
         {\"kind\": \"once\", \"at\": \"2026-12-24T09:00\"} or {\"kind\": \"every\", \"seconds\": 3600}",
    )?;
    let schedule: JobSchedule = serde_json::from_value(schedule.clone())
        .map_err(|e| format!("`schedule` is invalid: {e}"))?;
    let zone = Some(text("timezone")).filter(|z| !z.is_empty());
    let timezone = crate::jobs::schedule::parse_timezone(zone).map_err(|e| e.to_string())?;
    let title = match text("title") {
        "" => default_title(prompt),
        t => t.to_string(),
    };
    // The client the call named, else the one this agent runs on.
    let client = match text("client") {
        "" => ctx.frame.chain.first().map(|m| m.name.clone()),
        name => Some(name.to_string()),
    };
    let run_context = RunContext {
        working_directory: Some(ctx.policy.workdir.display().to_string()),
        ..ctx.policy.run_context.clone()
    };
    let input = JobInput {
        title,
        schedule,
        timezone: Some(timezone.name().to_string()),
        agent_id: agent_id.to_string(),
        prompt: prompt.to_string(),
        run_context: Some(run_context),
        client,
        policies: None,
        enabled: Some(true),
    };
    let preview = ctx.deps.jobs.check(&input).map_err(|e| match e {
        EngineError::InvalidInput(m) => m,
        other => format!("cannot check the job: {other}"),
    })?;
    Ok(CronJob { input, preview })
}

/// A title from the prompt's first line when the call gave none.
fn default_title(prompt: &str) -> String {
    const MAX: usize = 60;
    let line = prompt.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("Scheduled job");
    if line.chars().count() > MAX {
        format!("{}…", line.chars().take(MAX - 1).collect::<String>())
    } else {
        line.to_string()
    }
}

/// What the person reviews and what runs once approved: the call with its choices made
/// explicit, the working directory and client, the schedule in words and the next runs.
pub fn review_args(job: &CronJob) -> Value {
    let i = &job.input;
    json!({
        "mode": "cron",
        "title": i.title,
        "agent_id": i.agent_id,
        "prompt": i.prompt,
        "schedule": i.schedule,
        "timezone": i.timezone,
        "client": i.client,
        "working_directory": i.run_context.as_ref().and_then(|r| r.working_directory.clone()),
        // The runs' pre-authorisations and rule group too: they act unattended under them.
        "run_context": i.run_context,
        "schedule_in_words": job.preview.description,
        "next_runs": job.preview.next,
    })
}

/// Creates the job the person approved; the result names it, says its schedule and next run.
async fn schedule_job(ctx: &TurnCtx, args: &Value) -> Result<ChildEnd, EngineError> {
    let job = match cron_job(ctx, args) {
        Ok(job) => job,
        Err(message) => return Ok(ChildEnd::Failed(message)),
    };
    let agent = job.input.agent_id.clone();
    let info = match ctx.deps.jobs.add(job.input).await {
        Ok(info) => info,
        Err(EngineError::InvalidInput(m)) => return Ok(ChildEnd::Failed(m)),
        Err(e) => return Err(e),
    };
    let next = info.next_run_at.as_deref().map_or_else(
        || "none".to_string(),
        |at| local_time(at, &info.timezone).unwrap_or_else(|| at.to_string()),
    );
    Ok(ChildEnd::Answer(format!(
        "Scheduled job {id} \"{title}\": the `{agent}` agent runs it {words}; next run {next}. \
         Each run is its own unattended session; the user manages the job on the Jobs page \
         (`skald jobs`).",
        id = info.id,
        title = info.title,
        words = info.description,
    )))
}

/// A stored UTC time in the job's zone.
fn local_time(at: &str, zone: &str) -> Option<String> {
    let tz: chrono_tz::Tz = zone.parse().ok()?;
    let t = chrono::DateTime::parse_from_rfc3339(at).ok()?;
    Some(t.with_timezone(&tz).to_rfc3339())
}

/// Runs a delegation the gate allowed: checks, opens the child frame (or reopens the one this
/// call opened before a crash), runs it to its end.
pub async fn dispatch(
    ctx: &TurnCtx,
    call_id: i64,
    delegation: Delegation,
    args: &Value,
) -> Result<ChildEnd, EngineError> {
    if ToolName::Delegation(delegation).schedules_job(args) {
        return schedule_job(ctx, args).await;
    }
    let req = match check(ctx, delegation, args) {
        Ok(req) => req,
        Err(message) => return Ok(ChildEnd::Failed(message)),
    };
    if req.background {
        return start_task(ctx, call_id, req).await;
    }
    let store = &ctx.deps.store;
    if let Some(frame) = store.child_frame_of_call(call_id).await? {
        // Opened before a crash: continue it rather than start the task twice.
        return reopen_child(ctx, call_id, frame.id, req.agent, req.client.as_deref(), &req.prompt)
            .await;
    }
    let depth = i64::from(ctx.frame.depth + 1);
    let stack_id = store
        .create_child_frame(ctx.policy.session_id, &req.agent.id, &req.agent.prompt, depth, call_id)
        .await?;
    give_task(ctx, call_id, stack_id, &req.agent.id, &req.prompt).await?;
    run_child(ctx, call_id, stack_id, req.agent, req.client.as_deref(), false).await
}

/// Stores the task as the child frame's first message and shows it.
async fn give_task(
    ctx: &TurnCtx,
    call_id: i64,
    stack_id: i64,
    agent_id: &str,
    prompt: &str,
) -> Result<(), EngineError> {
    let task = NewMessage {
        stack_id,
        role: Some(Role::Agent),
        content: prompt.to_string(),
        ..Default::default()
    };
    let emitter = ctx.frame.emitter.child(stack_id, agent_id, call_id);
    let content = prompt.to_string();
    let message = move |message_id| vec![Event::UserMessage { message_id, content }];
    emitter.commit_created(ctx.deps.store.append_message(&task), message).await?;
    Ok(())
}

/// Continues a child frame a crash left open. A crash between opening the frame and storing its
/// task left it empty: it is given its task and starts, as it would have.
async fn reopen_child(
    ctx: &TurnCtx,
    call_id: i64,
    stack_id: i64,
    agent: Agent,
    client: Option<&str>,
    prompt: &str,
) -> Result<ChildEnd, EngineError> {
    if ctx.deps.store.last_live_message(stack_id).await?.is_some() {
        return run_child(ctx, call_id, stack_id, agent, client, true).await;
    }
    give_task(ctx, call_id, stack_id, &agent.id, prompt).await?;
    run_child(ctx, call_id, stack_id, agent, client, false).await
}

/// Starts an async task: its child session and row (or the ones this call made before a crash),
/// handed to the engine's runner; the call's result says it started. A call past the reply's or
/// the turn's allowance starts nothing and is answered with the limit.
async fn start_task(ctx: &TurnCtx, call_id: i64, req: Request) -> Result<ChildEnd, EngineError> {
    let store = &ctx.deps.store;
    let task = match store.task_of_call(call_id).await? {
        Some(task) => task,
        None => {
            if let Some(refusal) = over_limit(ctx, call_id).await? {
                return Ok(ChildEnd::Failed(refusal));
            }
            let new = NewTask {
                parent_session_id: ctx.policy.session_id,
                parent_tool_call_id: call_id,
                agent_id: &req.agent.id,
                agent_prompt: &req.agent.prompt,
                prompt: &req.prompt,
                title: req.title.as_deref(),
                client: req.client.as_deref(),
            };
            let task = store.create_task(&new).await?;
            ctx.frame.emitter.emit(Event::TaskUpdate {
                task_id: task.id,
                child_session_id: task.child_session_id,
                label: task.label.clone(),
                state: TaskState::Queued,
                report: None,
                message_id: None,
            });
            task
        }
    };
    (ctx.deps.start_task)(task.id);
    Ok(ChildEnd::Answer(format!(
        "Task {label} started in the background (session {sid}). Its report will reach you as a \
         `[task {label} reported]` message; do not wait for it.",
        label = task.label,
        sid = task.child_session_id
    )))
}

/// The async tasks started before call `call_id` by its reply and by its turn, read from
/// stored rows, so a resumed turn counts what it started before a crash. Only the root frame of
/// an attended chat starts tasks (sub-agents and tasks' own sessions delegate synchronously),
/// so the root's count is the whole tree's.
#[derive(Debug, Default)]
struct Started {
    reply: usize,
    turn: usize,
}

async fn started(ctx: &TurnCtx, call_id: i64) -> Result<Started, EngineError> {
    let store = &ctx.deps.store;
    let (per_reply, per_turn) =
        (ctx.policy.max_async_tasks_per_reply, ctx.policy.max_async_tasks_per_turn);
    let stack_id = ctx.frame.stack_id;
    let reply = store.tool_call(call_id).await?.message_id;
    let tasks = store.tasks_of_parent(ctx.policy.session_id).await?;
    let calls = store.tool_calls_for_stack_after(stack_id, reply - 1).await?;
    let of_reply: Vec<&ToolCallRow> = calls.iter().filter(|c| c.message_id == reply).collect();
    let first_of_reply = of_reply.first().map_or(call_id, |c| c.id);
    let earlier = earlier_replies_of_turn(ctx, reply, first_of_reply, &tasks).await?;
    let mut count = Started { reply: 0, turn: earlier };
    // This reply's calls before this one, in call order: a batch's calls run at once, so the
    // ones still open count when they are starts this check lets through; the first ones the
    // model listed start, whichever runs first.
    let with_task: HashSet<i64> = tasks.iter().map(|t| t.parent_tool_call_id).collect();
    let is_task =
        |c: &&&ToolCallRow| ToolName::parse(&c.name) == ToolName::Delegation(Delegation::Task);
    for call in of_reply.iter().filter(|c| c.id < call_id).filter(is_task) {
        if count.reply >= per_reply || count.turn >= per_turn {
            break;
        }
        let open = matches!(call.status(), Ok(ToolStatus::Pending | ToolStatus::Running));
        if with_task.contains(&call.id) || (open && starts_a_task(ctx, call)) {
            count.reply += 1;
            count.turn += 1;
        }
    }
    Ok(count)
}

/// Whether `call` (an `execute_task` call of this frame) asks for a task this frame may start.
fn starts_a_task(ctx: &TurnCtx, call: &ToolCallRow) -> bool {
    let args: Value =
        serde_json::from_str(call.arguments.as_deref().unwrap_or("{}")).unwrap_or(Value::Null);
    check(ctx, Delegation::Task, &args).is_ok_and(|req| req.background)
}

/// The tasks started by the replies of this turn before reply `reply` (whose first call is
/// `first_of_reply`). A turn runs from the person's latest message: the reports that wake the
/// chat, and the replies that answer them, belong to it and do not renew the allowance.
async fn earlier_replies_of_turn(
    ctx: &TurnCtx,
    reply: i64,
    first_of_reply: i64,
    tasks: &[TaskRow],
) -> Result<usize, EngineError> {
    let store = &ctx.deps.store;
    let stack_id = ctx.frame.stack_id;
    let before: Vec<&TaskRow> =
        tasks.iter().filter(|t| t.parent_tool_call_id < first_of_reply).collect();
    // The limit is reached before an older task would count: only the newest are read.
    let recent = &before[before.len().saturating_sub(ctx.policy.max_async_tasks_per_turn)..];
    let Some(oldest) = recent.first() else { return Ok(0) };
    let after = store.tool_call(oldest.parent_tool_call_id).await?.message_id - 1;
    let reply_of: HashMap<i64, i64> = store
        .tool_calls_for_stack_after(stack_id, after)
        .await?
        .into_iter()
        .map(|c| (c.id, c.message_id))
        .collect();
    let turn_start = store
        .messages_for_stack_after(stack_id, after)
        .await?
        .iter()
        .filter(|m| m.id < reply && m.role == Role::User.as_str() && !m.is_synthetic)
        .map(|m| m.id)
        .max()
        .unwrap_or(after);
    Ok(recent
        .iter()
        .filter_map(|t| reply_of.get(&t.parent_tool_call_id))
        .filter(|message| **message > turn_start)
        .count())
}

/// The tool error for a start past `llm.max_async_tasks_per_reply` or
/// `llm.max_async_tasks_per_turn`; `None` when the task may start.
async fn over_limit(ctx: &TurnCtx, call_id: i64) -> Result<Option<String>, EngineError> {
    let n = started(ctx, call_id).await?;
    let (per_reply, per_turn) =
        (ctx.policy.max_async_tasks_per_reply, ctx.policy.max_async_tasks_per_turn);
    let what_now = "This task was not started and is not queued. Wait for the reports of the \
                    tasks already started (each arrives as a `[task … reported]` message), or do \
                    this work in fewer tasks (one task can take several related jobs) or yourself.";
    Ok(if n.turn >= per_turn {
        Some(format!(
            "Refused: a turn may start at most {per_turn} async tasks \
             (llm.max_async_tasks_per_turn), and this turn has already started {turn} ({reply} of \
             them in this reply); no more can start before the user's next message. {what_now}",
            turn = n.turn,
            reply = n.reply,
        ))
    } else if n.reply >= per_reply {
        Some(format!(
            "Refused: a reply may start at most {per_reply} async tasks \
             (llm.max_async_tasks_per_reply), and this reply has already started {reply} (this \
             turn: {turn} of at most {per_turn}). {what_now}",
            reply = n.reply,
            turn = n.turn,
        ))
    } else {
        None
    })
}

/// Runs (or resumes) child frame `stack_id` inline and maps its end. A child that ended is
/// terminated and its stack-scoped grants dropped; a parked one stays open for the resume.
async fn run_child(
    ctx: &TurnCtx,
    call_id: i64,
    stack_id: i64,
    agent: Agent,
    client: Option<&str>,
    resume: bool,
) -> Result<ChildEnd, EngineError> {
    let store = &ctx.deps.store;
    let grants = super::mcp::Grants::new(store.stack_tool_groups(stack_id).await?);
    let child = ctx.child(stack_id, agent, client, grants, call_id);
    let outcome = if resume { resume_boxed(&child) } else { run_boxed(&child) }.await?;
    let end = match outcome {
        TurnOutcome::Final { content, .. } => ChildEnd::Answer(content),
        TurnOutcome::Cancelled => ChildEnd::Cancelled,
        TurnOutcome::Parked { tool_call_ids } => return Ok(ChildEnd::Parked(tool_call_ids)),
        TurnOutcome::Exhausted { rounds } => ChildEnd::Failed(format!(
            "the sub-agent used its {rounds} rounds without a final answer; its work so far is \
             in its own history"
        )),
        TurnOutcome::Failed { message } => {
            ChildEnd::Failed(format!("the sub-agent failed: {message}"))
        }
    };
    store.revoke_stack_tool_groups(stack_id).await?;
    store.terminate_frame(stack_id).await?;
    Ok(end)
}

/// Boxed so a frame's rounds can contain a child's (async recursion).
fn run_boxed(ctx: &TurnCtx) -> FrameFuture<'_> {
    Box::pin(super::run_frame(ctx))
}

fn resume_boxed(ctx: &TurnCtx) -> FrameFuture<'_> {
    Box::pin(super::resume_frame(ctx))
}

/// Resume of a delegation call left open: the deepest frame settles first. `None` when the call
/// never opened a frame (the caller gates and dispatches it as new).
pub async fn settle(ctx: &TurnCtx, row: &ToolCallRow) -> Result<Option<ChildEnd>, EngineError> {
    let store = &ctx.deps.store;
    let Some(frame) = store.child_frame_of_call(row.id).await? else { return Ok(None) };
    if frame.terminated_at.is_some() {
        // The child finished but its result never reached this call: seed it from the child's
        // final answer without asking the model again.
        return Ok(Some(completed_child(ctx, frame.id).await?));
    }
    match agents::load(&ctx.deps.data_dir, &frame.agent_id) {
        Ok(agent) => {
            let args: Value = serde_json::from_str(row.arguments.as_deref().unwrap_or("{}"))
                .unwrap_or(Value::Null);
            let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default();
            // The client the call named, as when it first ran (gone from the config since:
            // the agent's own choice, with a warning).
            let client = args.get("client").and_then(Value::as_str).filter(|c| !c.is_empty());
            Ok(Some(reopen_child(ctx, row.id, frame.id, agent, client, prompt).await?))
        }
        Err(e) => {
            store.terminate_frame(frame.id).await?;
            Ok(Some(ChildEnd::Failed(format!("the sub-agent cannot continue: {e}"))))
        }
    }
}

/// The result a terminated child left: its last answer, if its last word was one.
async fn completed_child(ctx: &TurnCtx, stack_id: i64) -> Result<ChildEnd, EngineError> {
    let store = &ctx.deps.store;
    let Some(last) = store.last_live_message(stack_id).await? else {
        return Ok(ChildEnd::Failed("the sub-agent ended without an answer".into()));
    };
    let has_calls = store
        .tool_calls_for_stack_after(stack_id, last.id - 1)
        .await?
        .iter()
        .any(|c| c.message_id == last.id);
    Ok(if last.role == "assistant" && !has_calls {
        ChildEnd::Answer(last.content)
    } else {
        ChildEnd::Failed("the sub-agent ended without an answer".into())
    })
}
