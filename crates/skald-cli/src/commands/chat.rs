//! `skald chat` and `skald resume` (they stream events), and `skald stop`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use skald_api::{
    ActiveBypassesParams, Caller, CompactSessionParams, NewSessionParams, ResetToolGroupsParams,
    SendMessageParams, SessionBypassesParams, SessionUsageParams, StopTurnParams, ops,
};
use skald_core::Engine;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{
    ApiError, BypassView, DeltaKind, ErrorCode, Event, EventEnvelope, SessionUsage, TaskInfo,
    TaskState, TurnEnd,
};
use tokio::sync::broadcast::error::RecvError;

use super::prompt::Prompt;
use super::show::{self, Review};
use super::slash::{self, Input, Slash};
use crate::exit;
use crate::output::{Output, one_line};

pub struct ChatArgs {
    pub source: String,
    pub agent: Option<String>,
    pub workdir: Option<PathBuf>,
    pub new: bool,
    pub approve_all: bool,
    pub no_wait: bool,
    pub message: Prompt,
}

/// The session `skald new` / `/new` / `chat --new` starts.
pub struct NewArgs {
    pub source: String,
    pub agent: Option<String>,
    pub workdir: Option<PathBuf>,
}

pub async fn run(engine: &Engine, args: ChatArgs, out: &Output) -> Result<u8, ApiError> {
    let explicit = args.workdir.as_deref().map(canonical_workdir).transpose()?;
    let cwd = std::env::current_dir().ok();
    let opts = ChatOptions {
        agent_id: args.agent.clone(),
        workdir: explicit.clone().or_else(|| cwd.clone()),
        workdir_explicit: explicit.is_some(),
        approve_all: args.approve_all,
        granted_by: "cli",
        // A one-shot command cannot wait for a human: it ends parked (exit 3) and `skald
        // resume` settles the decision later.
        park_mode: ParkMode::Exit,
    };
    let new = NewArgs { source: args.source.clone(), agent: args.agent.clone(), workdir: explicit };
    let input = if args.message.typed {
        slash::parse(&args.message.text)?
    } else {
        Input::Message(&args.message.text)
    };
    let message = match input {
        Input::Command(command, rest) => {
            if args.approve_all || args.new {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    "--approve-all and --new go with a message, not with a / command",
                ));
            }
            return session_command(engine, command, rest, new, &opts, out).await;
        }
        Input::Message(text) => text,
    };
    if args.new {
        new_session(engine, new, out).await?;
    }
    let mut events = engine.subscribe();
    // Through the operation table, as the app and `serve` send: one way in for everyone.
    let path = |p: &Path| p.display().to_string();
    let params = SendMessageParams {
        source: args.source.clone(),
        text: message.to_string(),
        agent_id: args.agent.clone(),
        workdir: opts.workdir.as_deref().filter(|_| opts.workdir_explicit).map(path),
        new_session_workdir: cwd.as_deref().map(path),
        approve_all: Some(args.approve_all),
    };
    let receipt = ops::send_message(engine, &Caller::Cli, params).await?;
    let session_id = receipt.session_id;
    circumstances(engine, session_id, &opts, cwd.as_deref(), out).await?;
    if receipt.steered {
        drain(&mut events, session_id, out);
        return queued(engine, session_id, &receipt.waiting_for, out).await;
    }
    let waits = if args.no_wait { Tasks::Leave } else { Tasks::Wait };
    follow(engine, session_id, events, waits, Idle::Unexpected, out).await
}

fn canonical_workdir(dir: &Path) -> Result<PathBuf, ApiError> {
    std::fs::canonicalize(dir).map_err(|e| {
        ApiError::new(ErrorCode::InvalidInput, format!("--workdir {}: {e}", dir.display()))
    })
}

/// What the person should know before the turn's output: every bypass in force in the session
/// (calls it covers run without asking), and — when they did not name a directory — that the
/// session works somewhere else than where they are.
async fn circumstances(
    engine: &Engine,
    session_id: i64,
    opts: &ChatOptions,
    cwd: Option<&Path>,
    out: &Output,
) -> Result<(), ApiError> {
    bypasses_in_force(engine, session_id, out).await?;
    if opts.workdir_explicit {
        return Ok(());
    }
    let works_in = engine.working_directory(session_id).await?;
    let same = |a: &Path, b: &Path| {
        std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).map(|(a, b)| a == b)
    };
    if let Some(cwd) = cwd
        && same(&works_in, cwd) == Some(false)
    {
        out.note(&format!(
            "session {session_id} works in {}, not here: `skald new` starts a session here (or \
             `skald chat --new …`)",
            one_line(&works_in.display().to_string())
        ));
    }
    Ok(())
}

/// One line per bypass in force in the session: the calls it covers run without asking.
async fn bypasses_in_force(engine: &Engine, session_id: i64, out: &Output) -> Result<(), ApiError> {
    let params = SessionBypassesParams { session_id };
    for b in ops::session_bypasses(engine, &Caller::Cli, params).await? {
        out.note(&super::bypasses::in_force(&b));
    }
    Ok(())
}

/// `/new`, `/stop`, `/compact [focus]`, `/resettools`, `/context`, `/cost`: the operations the
/// app's composer runs for them, on the source's active session.
async fn session_command(
    engine: &Engine,
    command: Slash,
    rest: &str,
    new: NewArgs,
    opts: &ChatOptions,
    out: &Output,
) -> Result<u8, ApiError> {
    if command == Slash::New {
        new_session(engine, new, out).await?;
        return Ok(exit::OK);
    }
    let session_id = engine.active_session(&new.source, opts).await?;
    match command {
        Slash::New => {}
        Slash::Stop => return stop(engine, session_id, out).await,
        Slash::Compact => return compact(engine, session_id, rest, out).await,
        Slash::ResetTools => {
            let params = ResetToolGroupsParams { session_id };
            let reset = ops::reset_tool_groups(engine, &Caller::Cli, params).await?;
            if out.is_json() {
                out.json(&reset)?;
            } else {
                out.line(&format!(
                    "session {session_id}: {} activated tool group{} revoked; the agents \
                     activate them again when they need them",
                    reset.revoked,
                    if reset.revoked == 1 { "" } else { "s" }
                ));
            }
        }
        Slash::Context | Slash::Cost => {
            let usage =
                ops::session_usage(engine, &Caller::Cli, SessionUsageParams { session_id }).await?;
            if out.is_json() {
                out.json(&usage)?;
            } else if command == Slash::Context {
                out.line(&context_line(&usage));
            } else {
                out.line(&cost_line(&usage));
            }
        }
    }
    Ok(exit::OK)
}

/// `skald new`, `/new`, `chat --new`: a fresh session for the source, working in the named
/// directory or the current one; the bypasses of the session it replaces end.
pub async fn new_session(engine: &Engine, args: NewArgs, out: &Output) -> Result<i64, ApiError> {
    let workdir = match args.workdir {
        Some(dir) => Some(canonical_workdir(&dir)?),
        None => std::env::current_dir().ok(),
    };
    let of_source = |list: Vec<BypassView>| -> Vec<BypassView> {
        list.into_iter().filter(|b| b.source == args.source).collect()
    };
    let before =
        of_source(ops::active_bypasses(engine, &Caller::Cli, ActiveBypassesParams {}).await?);
    let params = NewSessionParams {
        source: args.source.clone(),
        agent_id: args.agent.clone(),
        workdir: workdir.as_ref().map(|w| w.display().to_string()),
    };
    let created = ops::new_session(engine, &Caller::Cli, params).await?;
    let after =
        of_source(ops::active_bypasses(engine, &Caller::Cli, ActiveBypassesParams {}).await?);
    let ended: Vec<BypassView> =
        before.into_iter().filter(|b| !after.iter().any(|a| a.id == b.id)).collect();
    let session_id = created.session_id;
    if out.is_json() {
        out.json(&serde_json::json!({
            "session_id": session_id,
            "ended_bypasses": ended.iter().map(|b| b.id).collect::<Vec<_>>(),
        }))?;
        return Ok(session_id);
    }
    let works_in = engine.working_directory(session_id).await?;
    let agent = args.agent.as_deref().unwrap_or("main");
    out.line(&format!(
        "session {session_id} is now the active session of source {} (agent {agent}, working in \
         {})",
        args.source,
        one_line(&works_in.display().to_string())
    ));
    for b in &ended {
        out.line(&format!(
            "  bypass {} ended with session {}: {} ask again",
            b.id, b.session_id, b.label
        ));
    }
    Ok(session_id)
}

fn context_line(u: &SessionUsage) -> String {
    let model = u.model.as_deref().map(|m| format!(" · model {m}")).unwrap_or_default();
    let estimated = if u.context_estimated { " (estimated)" } else { "" };
    match (u.context_tokens, u.context_window) {
        (None, _) => format!("session {}: no model reply yet{model}", u.session_id),
        (Some(tokens), Some(window)) if window > 0 => format!(
            "session {}: the next request carries {tokens} tokens{estimated} of a {window}-token \
             window ({}%){model}",
            u.session_id,
            (tokens.max(0) as u64 * 100) / window
        ),
        (Some(tokens), _) => format!(
            "session {}: the next request carries {tokens} tokens{estimated} (window \
             unknown){model}",
            u.session_id
        ),
    }
}

fn cost_line(u: &SessionUsage) -> String {
    let tokens = format!("{} tokens in, {} out", u.input_tokens_total, u.output_tokens_total);
    match u.cost_usd {
        Some(cost) => format!(
            "session {}: ${cost:.4} over {} of {} model replies that reported a cost · {tokens}",
            u.session_id, u.priced_replies, u.replies
        ),
        None => format!(
            "session {}: no cost reported ({} model replies) · {tokens}",
            u.session_id, u.replies
        ),
    }
}

/// Whether `follow` says so when the turn it followed had nothing to do (a `resume` of a session
/// whose last turn already answered and has nothing waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Idle {
    Say,
    /// A turn `chat` started always has its message to answer.
    Unexpected,
}

/// What `follow` does with the background tasks the turn started when the turn has answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tasks {
    /// Waits for them and for the answer to their reports (they run in this process).
    Wait,
    /// Exits; they continue the next time the app or `serve` runs.
    Leave,
}

/// Reports a message stored as a steer. Queued behind calls that wait for a human, it exits 3
/// like a parked `chat` (decision 44): nothing reaches the model until they are decided.
async fn queued(
    engine: &Engine,
    session_id: i64,
    waiting_for: &[i64],
    out: &Output,
) -> Result<u8, ApiError> {
    if waiting_for.is_empty() {
        if !out.is_json() {
            out.line(&format!(
                "session {session_id} is running a turn: the message was queued and will be \
                 folded into it"
            ));
        }
        return Ok(exit::OK);
    }
    if !out.is_json() {
        let calls: Vec<String> = waiting_for.iter().map(i64::to_string).collect();
        let calls = calls.join(", ");
        // A turn that waits in another process (the app, `serve`) goes on by itself.
        let then = if engine.is_running(session_id).await? {
            "the running turn reads it once they are decided".to_string()
        } else {
            format!("decide them, then `skald resume {session_id}`")
        };
        out.line(&format!(
            "queued: session {session_id} waits for your decision on call {calls} (skald inbox); \
             the message reaches the model after that — {then}"
        ));
    }
    Ok(exit::PARKED)
}

/// `skald resume`: settles decisions and continues; with `ParkMode::Wait` (`--wait`) it waits
/// for decisions still open, otherwise it ends parked (exit 3) like `chat`.
pub async fn resume(
    engine: &Engine,
    session_id: i64,
    mode: ParkMode,
    out: &Output,
) -> Result<u8, ApiError> {
    let events = engine.subscribe();
    engine.start_resume(session_id, mode).await?;
    bypasses_in_force(engine, session_id, out).await?;
    if !out.is_json() && mode == ParkMode::Wait {
        out.line(&format!("resuming session {session_id}; approve or deny from another terminal with `skald approve` / `skald deny`"));
    }
    follow(engine, session_id, events, Tasks::Wait, Idle::Say, out).await
}

/// Prints the session's events until the engine's turn ends (Ctrl-C stops it, then waits for
/// it to record that it was stopped), then — once it answered — until the background tasks it
/// started have reported and been answered (`tasks`); the exit code says how the last turn
/// ended.
async fn follow(
    engine: &Engine,
    session_id: i64,
    mut events: tokio::sync::broadcast::Receiver<EventEnvelope>,
    tasks: Tasks,
    idle: Idle,
    out: &Output,
) -> Result<u8, ApiError> {
    let mut printer = Printer::default();
    let ended = engine.wait_turn(session_id);
    tokio::pin!(ended);
    let outcome = loop {
        tokio::select! {
            outcome = &mut ended => break outcome,
            ev = events.recv() => match ev {
                Ok(ev) if ev.session_id == Some(session_id) => printer.print(&ev, out)?,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => {}
            },
            _ = tokio::signal::ctrl_c() => {
                let _ = engine.stop(session_id).await;
            }
        }
    };
    // Events already sent before the turn ended.
    while let Ok(ev) = events.try_recv() {
        if ev.session_id == Some(session_id) {
            printer.print(&ev, out)?;
        }
    }
    let mut outcome = outcome.ok_or_else(|| {
        ApiError::new(ErrorCode::Internal, format!("no turn of session {session_id} ran here"))
    })?;
    let mut waited = false;
    if matches!(outcome, TurnOutcome::Final { .. }) {
        let after_tasks =
            follow_tasks(engine, session_id, &mut events, &mut printer, tasks, out).await?;
        waited = after_tasks.is_some();
        outcome = after_tasks.unwrap_or(outcome);
    }
    printer.finish(out);
    // The answer was there before: without a line the person cannot tell that nothing ran.
    if let TurnOutcome::Final { content, .. } = &outcome
        && idle == Idle::Say
        && !printer.saw_work
        && !waited
    {
        out.note(&format!(
            "session {session_id}: nothing to resume (the last turn ended with its answer: {})",
            first_line(content)
        ));
    }
    Ok(match outcome {
        TurnOutcome::Final { .. } => exit::OK,
        TurnOutcome::Parked { .. } => {
            if !out.is_json() {
                out.line(&format!(
                    "waiting for your decision in session {session_id} (skald inbox); then \
                     `skald resume {session_id}`"
                ));
            }
            exit::PARKED
        }
        TurnOutcome::Cancelled | TurnOutcome::Exhausted { .. } | TurnOutcome::Failed { .. } => {
            exit::ERROR
        }
    })
}

/// After an answer: waits (printing their progress) for the background tasks the session
/// started to end and for the turns that answer their reports, and returns how the last of those
/// ended (`None` when nothing was waited for). Ctrl-C leaves the tasks for later.
async fn follow_tasks(
    engine: &Engine,
    session_id: i64,
    events: &mut tokio::sync::broadcast::Receiver<EventEnvelope>,
    printer: &mut Printer,
    tasks: Tasks,
    out: &Output,
) -> Result<Option<TurnOutcome>, ApiError> {
    let running: Vec<TaskInfo> = engine
        .list_tasks(session_id)
        .await?
        .into_iter()
        .filter(|t| matches!(t.state, TaskState::Queued | TaskState::Running))
        .collect();
    if running.is_empty() {
        return Ok(None);
    }
    // The tasks' own sessions, whose waits for a human are shown here (nobody else would).
    let mut children: HashMap<i64, String> =
        running.iter().map(|t| (t.child_session_id, t.label.clone())).collect();
    let open: Vec<String> = running.into_iter().map(|t| t.label).collect();
    // What they wait for already (asked while the turn still ran), then what they ask next.
    let mut asked = HashSet::new();
    if !out.is_json() {
        let inbox = engine.inbox().await?;
        for item in inbox.items.iter().filter(|i| children.contains_key(&i.session_id)) {
            let label = &children[&item.session_id];
            asked.insert(item.tool_call_id);
            printer.aside(approval_line(label, item.tool_call_id, &show::inbox_item(item)), out);
        }
        for q in inbox.questions.iter().filter(|q| children.contains_key(&q.session_id)) {
            let label = &children[&q.session_id];
            asked.insert(q.tool_call_id);
            let (title, details) = show::question(&q.title, &q.question, &q.suggested_answers);
            printer.aside(question_line(label, q.tool_call_id, &title, &details), out);
        }
    }
    let (open, them) =
        (open.join(", "), if open.len() == 1 { "it continues" } else { "they continue" });
    let later = format!(
        "{them} the next time the app or `skald serve` runs, or now with `skald tasks continue` \
         and its session (skald tasks list {session_id})"
    );
    if tasks == Tasks::Leave {
        if !out.is_json() {
            out.line(&format!("background task {open} left for later: {later}"));
        }
        return Ok(None);
    }
    if !out.is_json() {
        out.line(&format!("waiting for background task {open} (Ctrl-C stops waiting; {later})"));
    }
    let done = engine.wait_tasks(session_id);
    tokio::pin!(done);
    loop {
        tokio::select! {
            () = &mut done => break,
            ev = events.recv() => match ev {
                Ok(ev) if ev.session_id == Some(session_id) => {
                    // A woken turn may start more tasks.
                    if let Event::TaskUpdate { child_session_id, label, .. } = &ev.event {
                        children.insert(*child_session_id, label.clone());
                    }
                    printer.print(&ev, out)?;
                }
                Ok(ev) => {
                    if let Some(label) = ev.session_id.and_then(|s| children.get(&s)) {
                        print_task_wait(label, &ev, &mut asked, printer, out)?;
                    }
                }
                Err(RecvError::Lagged(_) | RecvError::Closed) => {}
            },
            _ = tokio::signal::ctrl_c() => {
                if !out.is_json() {
                    out.line(&format!("stopped waiting for background task {open}: {later}"));
                }
                return Ok(None);
            }
        }
    }
    while let Ok(ev) = events.try_recv() {
        if ev.session_id == Some(session_id) {
            printer.print(&ev, out)?;
        }
    }
    Ok(engine.wait_turn(session_id).await)
}

/// What a background task waits for, which only a human can give: its approvals and questions
/// (decided from another terminal, the app or the API), each once; the rest of its run stays in
/// its own session.
fn print_task_wait(
    label: &str,
    ev: &EventEnvelope,
    asked: &mut HashSet<i64>,
    printer: &mut Printer,
    out: &Output,
) -> Result<(), ApiError> {
    let (call, line) = match &ev.event {
        Event::ApprovalRequested { tool_call_id, tool_name, arguments, request, .. } => {
            let review = show::request(tool_name, arguments, request);
            (*tool_call_id, approval_line(label, *tool_call_id, &review))
        }
        Event::AgentQuestion { tool_call_id, title, question, suggested_answers, .. } => {
            let (title, details) = show::question(title, question, suggested_answers);
            (*tool_call_id, question_line(label, *tool_call_id, &title, &details))
        }
        _ => return Ok(()),
    };
    if out.is_json() {
        return out.json(ev);
    }
    if asked.insert(call) {
        printer.aside(line, out);
    }
    Ok(())
}

/// A background task's call waiting for approval, with all there is to review under it.
fn approval_line(label: &str, call: i64, review: &Review) -> String {
    with_details(
        format!(
            "[task {label}] ⏸ {} needs approval (call {call}): skald approve {call} | skald deny \
             {call} --note \"why\"",
            review.what
        ),
        &review.details,
    )
}

fn question_line(label: &str, call: i64, title: &str, details: &[String]) -> String {
    with_details(
        format!("[task {label}] ? {title} (call {call}): skald answer {call} TEXT"),
        details,
    )
}

/// `head`, then each of `details` on its own line, indented under it.
fn with_details(head: String, details: &[String]) -> String {
    let mut lines = vec![head];
    lines.extend(details.iter().map(|d| format!("    {d}")));
    lines.join("\n")
}

/// `/compact [focus]` in the source's active session.
async fn compact(
    engine: &Engine,
    session_id: i64,
    focus: &str,
    out: &Output,
) -> Result<u8, ApiError> {
    let params = CompactSessionParams { session_id, focus: Some(focus.to_string()) };
    let r = ops::compact_session(engine, &Caller::Cli, params).await?;
    if out.is_json() {
        let mut json = serde_json::to_value(&r)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        json["session_id"] = session_id.into();
        out.json(&json)?;
    } else {
        match (r.compacted, r.summary_id, r.summary) {
            // The summary is all the model keeps of the older history: show it.
            (true, Some(id), Some(summary)) => out.line(&format!(
                "compacted session {session_id}: {} → {} tokens (summary {id})\n{summary}",
                r.tokens_before.unwrap_or_default(),
                r.tokens_after.unwrap_or_default(),
            )),
            _ => out.line(&format!("session {session_id}: nothing to compact yet")),
        }
    }
    Ok(exit::OK)
}

pub async fn stop(engine: &Engine, session_id: i64, out: &Output) -> Result<u8, ApiError> {
    let result = ops::stop_turn(engine, &Caller::Cli, StopTurnParams { session_id }).await?;
    if out.is_json() {
        out.json(&result)?;
    } else if result.stopped {
        out.line(&format!("stop requested for session {session_id}"));
    } else {
        out.line(&format!("session {session_id} has no running turn"));
    }
    Ok(exit::OK)
}

fn drain(
    events: &mut tokio::sync::broadcast::Receiver<EventEnvelope>,
    session_id: i64,
    out: &Output,
) {
    let mut printer = Printer::default();
    while let Ok(ev) = events.try_recv() {
        if ev.session_id == Some(session_id) {
            let _ = printer.print(&ev, out);
        }
    }
}

/// Text rendering of the event stream (or one JSON line per event with `--json`).
#[derive(Default)]
struct Printer {
    mid_line: bool,
    /// Whether the session did anything but start and end a turn (a resume may find nothing).
    saw_work: bool,
    /// Lines from outside the answer being streamed (background tasks' progress), held until
    /// its line ends so they never cut a word in two.
    deferred: Vec<String>,
}

impl Printer {
    /// Prints a line that does not belong to the streamed answer: now, or once its line ends.
    fn aside(&mut self, line: String, out: &Output) {
        if self.mid_line {
            self.deferred.push(line);
        } else {
            out.line(&line);
        }
    }

    /// Ends the output: the streamed line closed and every held line printed.
    fn finish(&mut self, out: &Output) {
        if self.mid_line {
            out.line("");
            self.mid_line = false;
        }
        self.flush_deferred(out);
    }

    fn flush_deferred(&mut self, out: &Output) {
        for line in self.deferred.drain(..) {
            out.line(&line);
        }
    }

    fn print(&mut self, ev: &EventEnvelope, out: &Output) -> Result<(), ApiError> {
        if !matches!(ev.event, Event::TurnRunning { .. } | Event::TurnEnded { .. }) {
            self.saw_work = true;
        }
        if out.is_json() {
            return out.json(ev);
        }
        // A sub-agent's lines are labelled with its origin and its text is not streamed: it
        // would interleave with the parent's; its answer is shown once, as one line.
        let label = ev.frame.as_ref().filter(|f| f.depth > 0).and_then(|f| f.label.clone());
        match &ev.event {
            Event::TokenDelta { .. } if label.is_some() => return Ok(()),
            Event::TokenDelta { kind: DeltaKind::Content, delta } => {
                if delta.is_empty() {
                    return Ok(());
                }
                // Held lines go in where the answer's line ends, even inside a piece.
                match delta.rfind('\n') {
                    Some(end) if !self.deferred.is_empty() => {
                        out.raw(&delta[..=end]);
                        self.flush_deferred(out);
                        out.raw(&delta[end + 1..]);
                    }
                    _ => out.raw(delta),
                }
                self.mid_line = !delta.ends_with('\n');
                return Ok(());
            }
            Event::TokenDelta { .. } | Event::TurnRunning { .. } | Event::UserMessage { .. } => {
                return Ok(());
            }
            // A task runs beside the turn: its progress may come while the answer streams.
            Event::TaskUpdate { label, state, report, .. } => {
                if let Some(line) = task_line(label, *state, report) {
                    self.aside(line, out);
                }
                return Ok(());
            }
            _ => {}
        }
        if self.mid_line {
            out.line("");
            self.mid_line = false;
        }
        self.flush_deferred(out);
        let line = match &ev.event {
            Event::ToolStart { label_full, .. } => Some(format!("→ {}", one_line(label_full))),
            Event::ToolDone { result, .. } => Some(format!("  ✓ {}", first_line(result))),
            Event::ToolError { error, .. } => Some(format!("  ✗ {}", first_line(error))),
            Event::ToolRejected { reason, .. } => Some(format!("  ⊘ {}", first_line(reason))),
            Event::ToolCancelled { .. } => Some("  ⊘ cancelled".to_string()),
            // Everything the person decides on, whole: the turn ends parked right after.
            Event::ApprovalRequested { tool_call_id, tool_name, arguments, request, .. } => {
                let review = show::request(tool_name, arguments, request);
                Some(with_details(
                    format!("  ⏸ {} needs approval (call {tool_call_id})", review.what),
                    &review.details,
                ))
            }
            Event::AgentQuestion { tool_call_id, title, question, suggested_answers, .. } => {
                let (title, details) = show::question(title, question, suggested_answers);
                Some(with_details(
                    format!(
                        "  ? {title} (question {tool_call_id}): skald answer {tool_call_id} TEXT"
                    ),
                    &details,
                ))
            }
            Event::FileChanged { diff, .. } => {
                // The diff names the file relative to the working directory when inside it.
                let shown = one_line(&diff.path);
                let mut lines = vec![format!("  ✎ {shown} (+{} −{})", diff.added, diff.removed)];
                lines.extend(diff_preview(diff, DIFF_PREVIEW_LINES));
                Some(lines.join("\n"))
            }
            Event::ModelRetry { model, reason, .. } => {
                // The text printed above was cut off; the answer follows in full.
                Some(format!("  ↻ model {} failed ({reason}); asking again", model_name(model)))
            }
            Event::ModelFallback { from, to, reason } => Some(format!(
                "  ↪ model {} failed ({reason}); using {}",
                model_name(from),
                model_name(to)
            )),
            Event::LlmFailed { tried, last_error } => {
                let tried: Vec<String> = tried.iter().map(|m| model_name(m)).collect();
                Some(format!("  ✗ every model failed ({}): {last_error}", tried.join(", ")))
            }
            Event::Truncated { .. } => Some("  … the answer hit the output length limit".into()),
            // A queued message enters the conversation (the model reads it next).
            Event::SteerFolded { content, .. } => Some(format!("» {}", first_line(content))),
            Event::TurnEnded { outcome } => ended(outcome),
            Event::Done { content, .. } if label.is_some() => {
                Some(format!("⏎ {}", first_line(content)))
            }
            _ => None,
        };
        if let Some(l) = line {
            match &label {
                Some(label) => out.line(&format!("[{label}] {l}")),
                None => out.line(&l),
            }
        }
        Ok(())
    }
}

/// A background task's progress: "task scout#2 running", "task scout#2 done: 42 files".
fn task_line(label: &str, state: TaskState, report: &Option<String>) -> Option<String> {
    let state = match state {
        TaskState::Queued => "waiting for a slot",
        TaskState::Running => "running",
        TaskState::Done => "finished",
        TaskState::Failed => "failed",
        TaskState::Cancelled => "stopped",
        // The parent reads the report: its answer follows.
        TaskState::Delivered | TaskState::DeliveryDropped => return None,
    };
    Some(match report {
        Some(r) => format!("⚑ task {label} {state}: {}", first_line(r)),
        None => format!("⚑ task {label} {state}"),
    })
}

/// The line for a turn that ended without an answer (a final one was printed as it streamed; a
/// parked one is explained once the turn is over).
fn ended(outcome: &TurnEnd) -> Option<String> {
    match outcome {
        TurnEnd::Final { .. } | TurnEnd::Parked { .. } => None,
        TurnEnd::Cancelled {} => Some("stopped".to_string()),
        TurnEnd::Exhausted { rounds } => {
            Some(format!("error: stopped after {rounds} tool rounds without a final answer"))
        }
        TurnEnd::Failed { reason } => Some(format!("error: {reason}")),
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut cut: String = line.chars().take(160).collect();
    if cut.len() < line.len() || s.lines().count() > 1 {
        cut.push_str(" …");
    }
    cut
}

/// How many lines of an applied write's diff `skald chat` prints under it (the rest is
/// counted). A write waiting for approval is shown whole.
const DIFF_PREVIEW_LINES: usize = 40;

/// The hunks of an applied change (its summary is the `✎` line), indented, at most `max` lines
/// and then how many were left out.
fn diff_preview(diff: &skald_protocol::FileDiff, max: usize) -> Vec<String> {
    let body = show::diff_lines(diff).split_off(1);
    let mut out: Vec<String> = body.iter().take(max).map(|l| format!("    {l}")).collect();
    if body.len() > max {
        out.push(format!("    … {} more lines", body.len() - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use skald_protocol::{DiffHunk, DiffKind, DiffLine, DiffLineTag, FileDiff};

    use super::diff_preview;

    #[test]
    fn a_long_applied_diff_is_cut_and_says_how_much_is_left() {
        let line = |tag, text: &str| DiffLine {
            tag,
            old_line: None,
            new_line: None,
            text: text.into(),
            spans: Vec::new(),
        };
        let diff = FileDiff {
            path: "x".into(),
            kind: DiffKind::Modify,
            hunks: vec![DiffHunk {
                old_start: 1,
                old_lines: 2,
                new_start: 1,
                new_lines: 2,
                lines: vec![
                    line(DiffLineTag::Delete, "a"),
                    line(DiffLineTag::Insert, "b"),
                    line(DiffLineTag::Context, "c"),
                ],
            }],
            added: 1,
            removed: 1,
            unified: String::new(),
            summary: "+1 −1".into(),
            crlf: false,
            old_missing_newline: false,
            new_missing_newline: false,
        };
        assert_eq!(diff_preview(&diff, 10), ["    @@ -1,2 +1,2 @@", "    -a", "    +b", "     c"]);
        assert_eq!(diff_preview(&diff, 2), ["    @@ -1,2 +1,2 @@", "    -a", "    … 2 more lines"]);
    }
}

#[cfg(test)]
mod printer_tests {
    #![allow(clippy::unwrap_used)]

    use skald_protocol::FrameOrigin;

    use super::*;

    fn root(event: Event) -> EventEnvelope {
        let frame = FrameOrigin { stack_id: 1, depth: 0, label: None, parent_tool_call_id: None };
        EventEnvelope {
            seq: None,
            session_id: Some(1),
            source: Some("cli".into()),
            frame: Some(frame),
            event,
        }
    }

    fn delta(text: &str) -> EventEnvelope {
        root(Event::TokenDelta { kind: DeltaKind::Content, delta: text.into() })
    }

    fn update(state: TaskState, report: Option<&str>) -> EventEnvelope {
        root(Event::TaskUpdate {
            task_id: 3,
            child_session_id: 2,
            label: "scout#2".into(),
            state,
            report: report.map(str::to_string),
            message_id: None,
        })
    }

    /// Found in CI: a task's progress arriving while the answer streamed cut it mid-word.
    #[test]
    fn a_task_update_during_a_streamed_answer_waits_for_the_end_of_its_line() {
        let (out, text) = Output::in_memory(false);
        let mut printer = Printer::default();
        for ev in [
            delta("Star"),
            update(TaskState::Running, None),
            delta("ted the scout.\nIt "),
            update(TaskState::Done, Some("42 files")),
            delta("counts."),
            root(Event::TurnEnded { outcome: TurnEnd::Final { message_id: 5 } }),
        ] {
            printer.print(&ev, &out).unwrap();
        }
        printer.finish(&out);
        assert_eq!(
            text.lock().unwrap().as_str(),
            "Started the scout.\n⚑ task scout#2 running\nIt counts.\n⚑ task scout#2 finished: 42 files\n"
        );
    }

    #[test]
    fn a_task_update_between_lines_prints_at_once() {
        let (out, text) = Output::in_memory(false);
        let mut printer = Printer::default();
        printer.print(&update(TaskState::Queued, None), &out).unwrap();
        assert_eq!(text.lock().unwrap().as_str(), "⚑ task scout#2 waiting for a slot\n");
    }
}

/// A client as a person reads it: the one the environment defines is named for its variables.
fn model_name(name: &str) -> String {
    if name == skald_core::config::ENV_CLIENT_NAME {
        format!("{name} (SKALD_LLM_BASE_URL / SKALD_LLM_MODEL)")
    } else {
        name.to_string()
    }
}
