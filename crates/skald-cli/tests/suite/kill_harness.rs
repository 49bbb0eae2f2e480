//! The kill harness (issue 13; DESIGN.md "Crash tests"): a scripted turn runs in child `skald`
//! processes against the strict fake provider over real HTTP, and is SIGKILLed at every step it
//! persists, then recovered by fresh processes.
//!
//! The turn: the user's prompt → the model asks a clarification → the answer comes from another
//! process (`skald answer`) → `skald resume` → the model runs a shell command that appends a line
//! to a side-effect file, writes its pid and sleeps → a sync sub-agent (which activates the real
//! MCP server-everything for itself, calls its read-only `echo`, then runs its command) → a
//! parallel batch of
//! three sub-agents (each child runs a command appending its task's line to `children.log`,
//! writing its pid and running a moment, then answers) → the model writes a file → final answer.
//! `chat --approve-all` grants the session's bypass, so nothing parks on an approval; the
//! recovery still decides any approval it finds, as a user would.
//!
//! Kill points are found, not listed: a counting run sets `SKALD_COUNT_WRITES` and the store
//! records every committed write transaction of each process (`skald_store::kill_point`). Then,
//! for each of them, a fresh data dir runs the turn with `SKALD_KILL_AFTER_WRITES=k` (the
//! process dies as its write k + 1 commits: after everything it did since write k, before
//! anything more is stored; k = 0 is before its first), and the harness recovers as the user would: it sends the prompt again only if it was never stored,
//! answers the question if one is open, runs `skald resume` until the turn has its final answer,
//! and reconciles a call the kill cut off while it ran (decision 3): "it ran" when its side
//! effect is there, "run it again" when it is not. Then it checks that no user message was
//! lost, no completed call ran again (side effects counted in files, the written file's inode
//! kept), each delegation's result is its child's answer in call order, no shell command (the
//! root's or a child's) outlived the kill, the strict fake provider accepted every request and
//! was never asked something unscripted, and the turn reached its final answer exactly once.
//!
//! The fake's replies are keyed by the request's content (the last message and the tool whose
//! result it is, `When`), not by arrival order: a resumed process repeats requests whose answer
//! the kill lost. A child's replies are keyed by its frame's system prompt (`When::in_frame`):
//! each task has its own task agent whose `AGENT.md` is a marker naming the task.
//!
//! `#[ignore]`d so a plain `cargo nextest run` stays quick; `scripts/test.sh` runs it as its own
//! step: `cargo nextest run -p skald-cli --run-ignored only kill_harness --no-capture`.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use serde_json::json;
use skald_protocol::{
    DebugMessage, Event, Inbox, InterruptedCall, SessionDetail, ToolStatus, TurnEnd,
};
use skald_store::{Store, SystemClock};
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall, When};
use tokio::process::Command;

use super::processes::group_members;

/// `skald_store::kill_point`'s switches (the CLI's tests see the store only through `skald`).
const COUNT_WRITES_ENV: &str = "SKALD_COUNT_WRITES";
const KILL_AFTER_WRITES_ENV: &str = "SKALD_KILL_AFTER_WRITES";

const SOURCE: &str = "kill";
const PROMPT: &str = "Record the release, then write the release notes";
const ANSWER: &str = "The short format, please";
const FINAL: &str = "The release is recorded and the notes are written.";
const SIDE_EFFECTS: &str = "side-effects.log";
const PID_FILE: &str = "cmd.pid";
const NOTES: &str = "notes.md";
const NOTES_TEXT: &str = "# Release\n\nShort format.\n";
/// Appends its side effect first, then its pid, then runs long enough for a kill to land.
const COMMAND: &str = "echo ran >> side-effects.log; echo $$ > cmd.pid; sleep 0.2";
/// Each delegated task goes to its own task agent, whose system prompt carries a marker that
/// keys that child's replies (`When::in_frame`), whatever its last message says.
fn helper_of(task: &str) -> String {
    task.to_lowercase()
}

fn marker_of(task: &str) -> String {
    format!("You do the part called {task}.")
}

/// The side effects of the children: each appends its task's name once.
const CHILD_EFFECTS: &str = "children.log";
/// The sync delegation's task, then the parallel batch's three, in call order.
const SYNC_TASK: &str = "TASK-SYNC";
const BATCH_TASKS: [&str; 3] = ["TASK-A", "TASK-B", "TASK-C"];

/// Every delegated task, in call order.
fn tasks() -> impl Iterator<Item = &'static str> {
    std::iter::once(SYNC_TASK).chain(BATCH_TASKS)
}

/// The child's shell command for `task`: appends its line, writes its pid (`{task}.pid`) and
/// runs a moment (the batch's siblings keep writing meanwhile, so kills land while it runs),
/// then says it did.
fn child_command(task: &str) -> String {
    format!("echo {task} >> {CHILD_EFFECTS}; echo $$ > {task}.pid; sleep 0.1; echo did-{task}")
}

/// The child's answer for `task`: its call's result in the parent.
fn child_answer(task: &str) -> String {
    format!("{task} is done.")
}

/// A process of the turn, in the order a user runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `skald chat --approve-all`: ends parked on the question (exit 3).
    Chat,
    /// `skald answer`, from another process.
    Answer,
    /// `skald resume`: the command, the write, the final answer.
    Resume,
}

const PHASES: [Phase; 3] = [Phase::Chat, Phase::Answer, Phase::Resume];

/// The MCP server the sync child activates (server-everything, from SKALD_MCP_EVERYTHING).
const MCP_SERVER: &str = "srv";
const MCP_ECHO: &str = "mcp__srv__echo";

/// What the model says at each point of the conversation. The children's rules come first: the
/// first rule whose key matches answers, and only a child's frame has its helper's marker.
fn script(fake: &FakeLlm) {
    let call = |name: &str, args: serde_json::Value| Reply::tool_call(name, &args.to_string());
    // The sync child first activates the MCP server for its own frame and calls a read-only tool
    // of it (re-run by a resume if a kill cut it off), then runs its command like the others.
    let sync_marker = marker_of(SYNC_TASK);
    fake.on(
        When::user_says(SYNC_TASK).in_frame(&sync_marker),
        call("activate_tools", json!({ "groups": [MCP_SERVER] })),
    );
    fake.on(
        When::result_of_tool("activate_tools").in_frame(&sync_marker),
        call(MCP_ECHO, json!({ "message": SYNC_TASK })),
    );
    fake.on(
        When::result_of_tool(MCP_ECHO).in_frame(&sync_marker),
        call("execute_cmd", json!({ "command": child_command(SYNC_TASK) })),
    );
    let delegate = |task: &str| {
        let args = json!({ "mode": "sync", "agent_id": helper_of(task),
                           "prompt": format!("{task}: do your part") });
        ScriptedToolCall::new("execute_task", &args.to_string())
    };
    for task in tasks() {
        let marker = marker_of(task);
        if task != SYNC_TASK {
            fake.on(
                When::user_says(task).in_frame(&marker),
                call("execute_cmd", json!({ "command": child_command(task) })),
            );
        }
        // Also after a kill cut the command off: the child answers whatever its result says.
        fake.on(
            When::result_of_tool("execute_cmd").in_frame(&marker),
            Reply::text(&child_answer(task)),
        );
    }
    fake.on(
        When::user_says(PROMPT),
        call(
            "ask_user_clarification",
            json!({ "title": "Notes format", "question": "Short or long release notes?",
                    "suggested_answers": ["short", "long"] }),
        ),
    );
    fake.on(
        When::result_of_tool("ask_user_clarification"),
        call("execute_cmd", json!({ "command": COMMAND })),
    );
    fake.on(When::result_of_tool("execute_cmd"), Reply::tool_calls(vec![delegate(SYNC_TASK)]));
    let answered = |task: &str| When {
        last_contains: Some(child_answer(task)),
        ..When::result_of_tool("execute_task")
    };
    fake.on(
        answered(SYNC_TASK),
        Reply::tool_calls(BATCH_TASKS.iter().map(|t| delegate(t)).collect()),
    );
    fake.on(
        answered(BATCH_TASKS[2]),
        call("write_file", json!({ "path": NOTES, "content": NOTES_TEXT })),
    );
    fake.on(When::result_of_tool("write_file"), Reply::text(FINAL));
}

/// One run of the turn: its own data dir (a copy of the migrated template), working dir and
/// fake provider.
struct Run {
    dir: tempfile::TempDir,
    data: PathBuf,
    work: PathBuf,
    fake: FakeLlm,
}

impl Run {
    async fn new(template: &Path) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        copy_tree(template, &data);
        for task in tasks() {
            let helper = data.join("agents").join(helper_of(task));
            std::fs::create_dir_all(&helper).unwrap();
            let meta = json!({ "name": helper_of(task), "description": "does one part of a job",
                               "type": "task" });
            std::fs::write(helper.join("meta.json"), meta.to_string()).unwrap();
            std::fs::write(helper.join("AGENT.md"), marker_of(task)).unwrap();
        }
        let server = std::env::var("SKALD_MCP_EVERYTHING").expect(
            "SKALD_MCP_EVERYTHING: the path of mcp-server-everything (export \
             SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh))",
        );
        let config = format!(
            "mcp:\n  servers:\n    - name: {MCP_SERVER}\n      command: {server}\n      trusted: true\n"
        );
        std::fs::write(data.join("config.yml"), config).unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let work = std::fs::canonicalize(work).unwrap();
        let fake = FakeLlm::start().await.unwrap();
        script(&fake);
        Run { dir, data, work, fake }
    }

    fn skald(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skald"));
        cmd.env_remove("SKALD_DATA_DIR")
            .env_remove("SKALD_LLM_API_KEY")
            .env_remove(COUNT_WRITES_ENV)
            .env_remove(KILL_AFTER_WRITES_ENV)
            .env("SKALD_LLM_BASE_URL", self.fake.base_url())
            .env("SKALD_LLM_MODEL", "fake-model")
            .current_dir(&self.work)
            .arg("--json")
            .arg("--data-dir")
            .arg(&self.data)
            .args(args)
            .kill_on_drop(true);
        cmd
    }

    /// Runs `skald args` to its end; stdout on success (exit 0 or 3), else an error naming it.
    async fn ok(&self, args: &[&str]) -> Result<String, String> {
        let (status, stdout, stderr) = output(self.skald(args)).await;
        match status.code() {
            Some(0 | 3) => Ok(stdout),
            _ => {
                Err(format!("`skald {}` ended {status}: {stderr}{}", args.join(" "), tail(&stdout)))
            }
        }
    }

    fn count_file(&self, phase: Phase) -> PathBuf {
        self.dir.path().join(format!("writes-{phase:?}"))
    }

    /// Runs one phase, counting its writes and (with `kill_after`) killing it after that many.
    async fn phase(&self, phase: Phase, kill_after: Option<u64>) -> Result<ExitStatus, String> {
        let mut cmd = match phase {
            Phase::Chat => {
                let work = self.work.to_str().unwrap();
                self.skald(&[
                    "chat",
                    "--source",
                    SOURCE,
                    "--approve-all",
                    "--workdir",
                    work,
                    PROMPT,
                ])
            }
            Phase::Answer => {
                let question = self.open_question().await?.ok_or("no question to answer")?;
                self.skald(&["answer", &question.to_string(), ANSWER])
            }
            Phase::Resume => {
                let session = self.session_id().await?.ok_or("no session to resume")?;
                self.skald(&["resume", "--session", &session.to_string()])
            }
        };
        cmd.env(COUNT_WRITES_ENV, self.count_file(phase));
        if let Some(k) = kill_after {
            cmd.env(KILL_AFTER_WRITES_ENV, k.to_string());
        }
        let (status, stdout, stderr) = output(cmd).await;
        match (status.code(), status.signal()) {
            (Some(0 | 3), _) | (None, Some(9)) => Ok(status),
            _ => Err(format!("{phase:?} ended {status}: {stderr}{}", tail(&stdout))),
        }
    }

    /// The lines the store recorded for a phase: one per committed write.
    fn writes(&self, phase: Phase) -> Vec<String> {
        std::fs::read_to_string(self.count_file(phase))
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// The source's newest session, if one was created.
    async fn session_id(&self) -> Result<Option<i64>, String> {
        let list = self.ok(&["sessions", "list", "--source", SOURCE]).await?;
        let list: serde_json::Value = serde_json::from_str(&list).map_err(|e| e.to_string())?;
        Ok(list["items"].as_array().and_then(|items| items.first()).and_then(|s| s["id"].as_i64()))
    }

    async fn detail(&self, session: i64) -> Result<SessionDetail, String> {
        let text = self.ok(&["sessions", "show", &session.to_string()]).await?;
        serde_json::from_str(&text).map_err(|e| format!("sessions show: {e}: {text}"))
    }

    async fn inbox(&self) -> Result<Inbox, String> {
        let text = self.ok(&["inbox"]).await?;
        serde_json::from_str(&text).map_err(|e| format!("inbox: {e}: {text}"))
    }

    async fn open_question(&self) -> Result<Option<i64>, String> {
        Ok(self.inbox().await?.questions.first().map(|q| q.tool_call_id))
    }

    fn side_effect_lines(&self) -> usize {
        std::fs::read_to_string(self.work.join(SIDE_EFFECTS)).map_or(0, |t| t.lines().count())
    }

    /// How many times each delegated task's child appended its line, in call order.
    fn child_effects(&self) -> Vec<usize> {
        let text = std::fs::read_to_string(self.work.join(CHILD_EFFECTS)).unwrap_or_default();
        tasks().map(|t| text.lines().filter(|l| *l == t).count()).collect()
    }

    /// The written file's inode: a write that runs again replaces it (written atomically).
    fn notes_inode(&self) -> Option<u64> {
        std::fs::metadata(self.work.join(NOTES)).ok().map(|m| m.ino())
    }

    fn notes_written(&self) -> bool {
        std::fs::read_to_string(self.work.join(NOTES)).is_ok_and(|t| t == NOTES_TEXT)
    }

    fn command_pid(&self) -> Option<i64> {
        self.pid_in(PID_FILE)
    }

    /// The shells of the children's commands that started, in call order.
    fn child_command_pids(&self) -> Vec<i64> {
        tasks().filter_map(|t| self.pid_in(&format!("{t}.pid"))).collect()
    }

    fn pid_in(&self, file: &str) -> Option<i64> {
        std::fs::read_to_string(self.work.join(file)).ok()?.trim().parse().ok()
    }

    /// Recovers as a user would, with fresh processes, until the turn has its final answer.
    async fn recover(&self) -> Result<i64, String> {
        for _ in 0..8 {
            let Some(session) = self.session_id().await? else {
                // Killed before the session existed: the message was never stored; send it again.
                self.phase(Phase::Chat, None).await?;
                continue;
            };
            let detail = self.detail(session).await?;
            if user_prompts(&detail).is_empty() {
                self.phase(Phase::Chat, None).await?;
                continue;
            }
            let inbox = self.inbox().await?;
            for q in inbox.questions.iter().filter(|q| q.session_id == session) {
                self.ok(&["answer", &q.tool_call_id.to_string(), ANSWER]).await?;
            }
            for a in inbox.items.iter().filter(|a| a.session_id == session) {
                self.ok(&["approve", &a.tool_call_id.to_string()]).await?;
            }
            if finished(&detail) {
                return Ok(session);
            }
            self.ok(&["resume", "--session", &session.to_string()]).await?;
        }
        Err("the turn did not reach its final answer in 8 recovery steps".into())
    }

    /// Settles every call the kill cut off while it ran by what its side effect shows.
    async fn reconcile(&self, session: i64) -> Result<Vec<String>, String> {
        let params = json!({ "session_id": session }).to_string();
        let text = self.ok(&["api", "interrupted_calls", &params]).await?;
        let calls: Vec<InterruptedCall> =
            serde_json::from_str(&text).map_err(|e| format!("interrupted_calls: {e}: {text}"))?;
        let mut said = Vec::new();
        for call in calls.into_iter().filter(|c| c.choice.is_none()) {
            let child_task = tasks().find(|t| call.label.contains(t));
            let ran = match (call.tool_name.as_str(), child_task) {
                ("execute_cmd", Some(task)) => {
                    let text =
                        std::fs::read_to_string(self.work.join(CHILD_EFFECTS)).unwrap_or_default();
                    text.lines().any(|l| l == task)
                }
                ("execute_cmd", None) => self.side_effect_lines() > 0,
                ("write_file", _) => self.notes_written(),
                (other, _) => return Err(format!("unexpected interrupted call of {other}")),
            };
            let choice = if ran { "ran" } else { "run_again" };
            let params = json!({ "tool_call_id": call.tool_call_id, "choice": choice });
            self.ok(&["api", "reconcile_call", &params.to_string()]).await?;
            said.push(format!("{} {choice}", call.tool_name));
        }
        Ok(said)
    }
}

pub(super) async fn output(mut cmd: Command) -> (ExitStatus, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("skald hung")
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status, text(&out.stdout), text(&out.stderr))
}

/// The last lines of `--json` output (the turn's end and errors are there).
fn tail(stdout: &str) -> String {
    let lines: Vec<&str> = stdout.lines().collect();
    lines[lines.len().saturating_sub(4)..].join("\n")
}

fn user_prompts(detail: &SessionDetail) -> Vec<(&str, bool)> {
    detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::User { content, is_synthetic: false, failed, depth: 0, .. } => {
                Some((content.as_str(), *failed))
            }
            _ => None,
        })
        .collect()
}

/// The turn's last recorded end is its final answer.
fn finished(detail: &SessionDetail) -> bool {
    detail.turn_ends.last().is_some_and(|t| matches!(t.outcome, TurnEnd::Final { .. }))
}

/// (name, status, result) of each call of the root frame (`depth` 0) or of the children (1).
fn calls(detail: &SessionDetail, at: u32) -> Vec<(&str, ToolStatus, Option<&str>)> {
    detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::Tool { name, status, result, depth, .. } if *depth == at => {
                Some((name.as_str(), *status, result.as_deref()))
            }
            _ => None,
        })
        .collect()
}

fn status_of(detail: Option<&SessionDetail>, tool: &str) -> Option<ToolStatus> {
    calls(detail?, 0).into_iter().find(|(n, ..)| *n == tool).map(|(_, s, _)| s)
}

/// The state a kill left, read before anything recovers.
struct AtKill {
    cmd_done: bool,
    write_done: bool,
    notes_inode: Option<u64>,
    side_effect_lines: usize,
    child_effects: Vec<usize>,
}

/// Every promise of the durability contract this turn can break, checked after recovery.
fn check_recovered(
    run: &Run,
    at_kill: &AtKill,
    detail: &SessionDetail,
    sessions: usize,
) -> Result<(), String> {
    let prompts = user_prompts(detail);
    if prompts != [(PROMPT, false)] || sessions > 2 {
        return Err(format!("the user's message was lost or doubled: {prompts:?}"));
    }
    let root = calls(detail, 0);
    let names: Vec<&str> = root.iter().map(|(n, ..)| *n).collect();
    let delegations = ["execute_task"; 4];
    let want: Vec<&str> = ["ask_user_clarification", "execute_cmd"]
        .into_iter()
        .chain(delegations)
        .chain(["write_file"])
        .collect();
    if names != want {
        return Err(format!("the calls are not the script's: {names:?}"));
    }
    if root[0].1 != ToolStatus::Done || root[0].2 != Some(ANSWER) {
        return Err(format!("the question's call did not get the answer: {:?}", root[0]));
    }
    // The children's answers are their calls' results, in call order.
    let answers: Vec<_> = root[2..6].iter().map(|(_, s, r)| (*s, r.map(str::to_string))).collect();
    let want: Vec<_> = tasks().map(|t| (ToolStatus::Done, Some(child_answer(t)))).collect();
    if answers != want {
        return Err(format!(
            "the delegations' results are not the children's answers: {answers:?}"
        ));
    }
    // The sync child's MCP calls: each recorded once, done, the server's own answer kept.
    let mcp: Vec<_> = calls(detail, 1)
        .into_iter()
        .filter(|(n, ..)| *n == "activate_tools" || *n == MCP_ECHO)
        .collect();
    let echoed = format!("Echo: {SYNC_TASK}");
    let activated =
        mcp.first().is_some_and(|(n, s, _)| *n == "activate_tools" && *s == ToolStatus::Done);
    let called = mcp.get(1).is_some_and(|(n, s, r)| {
        *n == MCP_ECHO && *s == ToolStatus::Done && *r == Some(echoed.as_str())
    });
    if mcp.len() != 2 || !activated || !called {
        return Err(format!("the sync child's MCP calls are not the script's: {mcp:?}"));
    }
    if run.child_effects() != [1; 4] {
        return Err(format!(
            "the children's commands ran {:?} times (at the kill: {:?})",
            run.child_effects(),
            at_kill.child_effects
        ));
    }
    let finals = detail
        .messages
        .iter()
        .filter(|m| matches!(m, DebugMessage::Assistant { content, .. } if content == FINAL))
        .count();
    if finals != 1 || !finished(detail) {
        return Err(format!(
            "the final answer is there {finals} times; ends {:?}",
            detail.turn_ends
        ));
    }
    if run.side_effect_lines() != 1 {
        return Err(format!(
            "the command ran {} times (done at the kill: {}, lines then: {})",
            run.side_effect_lines(),
            at_kill.cmd_done,
            at_kill.side_effect_lines
        ));
    }
    if !run.notes_written() {
        return Err("the notes were not written".into());
    }
    if at_kill.write_done && run.notes_inode() != at_kill.notes_inode {
        return Err("write_file was done at the kill and ran again".into());
    }
    if !detail.pending_inputs.is_empty() {
        return Err(format!("messages left unfolded: {:?}", detail.pending_inputs));
    }
    if let Some(report) = run.fake.script_report() {
        return Err(report);
    }
    Ok(())
}

/// Every change a client is told about has its event in the outbox, whenever the process died:
/// each message of the user, a model or a delegating agent (`user_message`, `thinking`, `done`,
/// `interim_answer`) and each call that ended (`tool_done`, `tool_error`, `tool_cancelled`,
/// `tool_rejected`). An event appended after its change committed, as a separate write, is
/// missing at the kill points between the two.
async fn events_ride_their_changes(data: &Path) -> Result<(), String> {
    let store = Store::open(&data.join(skald_store::DB_FILE_NAME), Arc::new(SystemClock))
        .await
        .map_err(|e| e.to_string())?;
    let (mut said_messages, mut said_calls) = (BTreeSet::new(), BTreeSet::new());
    for row in store.outbox_after(0, i64::MAX).await.map_err(|e| e.to_string())? {
        match row.envelope().map_err(|e| e.to_string())?.event {
            Event::UserMessage { message_id, .. }
            | Event::Thinking { message_id, .. }
            | Event::Done { message_id, .. }
            | Event::InterimAnswer { message_id, .. } => {
                said_messages.insert(message_id);
            }
            Event::ToolDone { tool_call_id, .. }
            | Event::ToolError { tool_call_id, .. }
            | Event::ToolCancelled { tool_call_id }
            | Event::ToolRejected { tool_call_id, .. } => {
                said_calls.insert(tool_call_id);
            }
            _ => {}
        }
    }
    let (mut unsaid_messages, mut unsaid_calls) = (Vec::new(), Vec::new());
    // Session ids are small and dense in a fresh data dir.
    for session_id in 1..=32 {
        let Ok(frames) = store.frames(session_id).await else { continue };
        for frame in frames {
            for m in store.messages_for_stack(frame.id).await.map_err(|e| e.to_string())? {
                let told = matches!(m.role.as_str(), "user" | "assistant" | "agent");
                if told && !m.is_synthetic && !said_messages.contains(&m.id) {
                    unsaid_messages.push((m.id, m.role));
                }
            }
        }
        for call in store.tool_calls_for_session(session_id).await.map_err(|e| e.to_string())? {
            let ended =
                matches!(call.status.as_str(), "done" | "failed" | "cancelled" | "rejected");
            if ended && !said_calls.contains(&call.id) {
                unsaid_calls.push((call.id, call.name, call.status));
            }
        }
    }
    if unsaid_messages.is_empty() && unsaid_calls.is_empty() {
        return Ok(());
    }
    Err(format!(
        "changes stored without their events: messages {unsaid_messages:?}, calls {unsaid_calls:?}"
    ))
}

/// Kills the run's `phase` after its `k`-th write, as the next one commits (the phases before
/// it run whole), recovers and checks. Returns what happened, or why this kill point failed.
async fn kill_and_recover(template: &Path, phase: Phase, k: u64) -> Result<String, String> {
    let run = Run::new(template).await;
    // The checks read the script report themselves; the drop must not fail the test again.
    let settle = |run: &Run| {
        run.fake.allow_leftover_replies();
        run.fake.allow_unscripted_requests();
        run.fake.allow_rejected_requests();
    };
    let result = async {
        for before in PHASES.iter().take_while(|p| **p != phase) {
            run.phase(*before, None).await?;
        }
        let status = run.phase(phase, Some(k)).await?;
        let written = run.writes(phase);
        if status.signal() != Some(9) {
            return Err(format!("not killed: only {} writes this time", written.len()));
        }
        let killed_after = written.last().cloned().unwrap_or_else(|| "nothing".into());
        // Before anything opens the data dir again: what the dead process stored, it said.
        events_ride_their_changes(&run.data).await?;
        let at_kill_pid = run.command_pid();
        // Every command's shell, the root's and the children's, dies with the engine's process
        // (parent-death signal), before anyone opens.
        let shells: Vec<i64> = at_kill_pid.into_iter().chain(run.child_command_pids()).collect();
        for &pid in &shells {
            let shell_gone = wait_until(|| !group_members(pid).contains(&pid)).await;
            if !shell_gone {
                return Err(format!("the shell {pid} outlived the kill"));
            }
        }
        let session = run.session_id().await?;
        let detail = match session {
            Some(s) => Some(run.detail(s).await?),
            None => None,
        };
        let at_kill = AtKill {
            cmd_done: status_of(detail.as_ref(), "execute_cmd") == Some(ToolStatus::Done),
            write_done: status_of(detail.as_ref(), "write_file") == Some(ToolStatus::Done),
            notes_inode: run.notes_inode(),
            side_effect_lines: run.side_effect_lines(),
            child_effects: run.child_effects(),
        };
        // Opening the engine (`sessions list` above) kills what the dead one left running.
        for &pid in &shells {
            if !wait_until(|| group_members(pid).is_empty()).await {
                return Err(format!("the command's group {pid} still runs after the next open"));
            }
        }
        let session = run.recover().await?;
        let reconciled = run.reconcile(session).await?;
        let detail = run.detail(session).await?;
        let sessions = {
            let list = run.ok(&["sessions", "list", "--source", SOURCE]).await?;
            let list: serde_json::Value = serde_json::from_str(&list).map_err(|e| e.to_string())?;
            list["items"].as_array().map_or(0, Vec::len)
        };
        check_recovered(&run, &at_kill, &detail, sessions)?;
        Ok(format!("after [{killed_after}]; reconciled: {reconciled:?}"))
    }
    .await;
    let result = result.map_err(|e| match run.fake.script_report() {
        Some(report) => format!("{e}\n    the fake provider: {report}"),
        None => e,
    });
    settle(&run);
    result
}

/// How many kill points run at once (the CI machine has 2 cores).
const KILL_POINTS_AT_ONCE: usize = 2;

/// Polls `done` for up to 5 s.
async fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done()
}

/// A data dir with the config written and the database migrated, copied for every run so the
/// runs' kill points are the turn's writes, not the schema's.
async fn template(root: &Path) -> PathBuf {
    let data = root.join("template");
    let fake = FakeLlm::start().await.unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skald"));
    cmd.env_remove("SKALD_DATA_DIR")
        .env("SKALD_LLM_BASE_URL", fake.base_url())
        .env("SKALD_LLM_MODEL", "fake-model")
        .arg("--data-dir")
        .arg(&data)
        .args(["sessions", "list"]);
    let (status, _, stderr) = output(cmd).await;
    assert!(status.success(), "{stderr}");
    data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a few hundred processes: run by scripts/test.sh as its own step"]
async fn kill_harness_every_persisted_step_of_a_turn_recovers() {
    let root = tempfile::tempdir().unwrap();
    let template = template(root.path()).await;

    // The counting run: the whole turn once, every phase's writes recorded.
    let run = Run::new(&template).await;
    for phase in PHASES {
        run.phase(phase, None).await.unwrap();
    }
    let session = run.session_id().await.unwrap().unwrap();
    let detail = run.detail(session).await.unwrap();
    let at_end = AtKill {
        cmd_done: true,
        write_done: true,
        notes_inode: run.notes_inode(),
        side_effect_lines: 1,
        child_effects: run.child_effects(),
    };
    check_recovered(&run, &at_end, &detail, 1).unwrap();
    // Kill point (phase, k): the phase's process dies after k writes, as write k + 1 commits.
    let points: Vec<(Phase, u64, String)> = PHASES
        .iter()
        .flat_map(|p| run.writes(*p).into_iter().enumerate().map(|(k, w)| (*p, k as u64, w)))
        .collect();
    for (phase, k, next) in &points {
        eprintln!("kill point {phase:?} after {k} writes, before [{next}]");
    }
    drop(run);
    assert!(points.len() >= 10, "too few kill points found: {points:?}");

    let mut recovered = 0;
    let mut failures = Vec::new();
    // `KILL_HARNESS_ONLY=Resume:10,Resume:23` runs only those points (while debugging one).
    let only = std::env::var("KILL_HARNESS_ONLY").unwrap_or_default();
    let chosen = points
        .iter()
        .filter(|(phase, k, _)| {
            only.is_empty() || only.split(',').any(|p| p == format!("{phase:?}:{k}"))
        })
        .map(|(phase, k, _)| (*phase, *k));
    // Two points at a time: each runs in its own data dir against its own fake provider, and
    // most of a point's time is spent waiting on its processes. Reported in order.
    let mut runs = futures::stream::iter(chosen)
        .map(|(phase, k)| {
            let template = &template;
            async move { (phase, k, kill_and_recover(template, phase, k).await) }
        })
        .buffered(KILL_POINTS_AT_ONCE);
    while let Some((phase, k, result)) = runs.next().await {
        match result {
            Ok(note) => {
                recovered += 1;
                eprintln!("  {phase:?} after {k}: recovered, killed {note}");
            }
            Err(e) => {
                eprintln!("  {phase:?} after {k}: FAILED {e}");
                failures.push(format!("{phase:?} after {k} writes: {e}"));
            }
        }
    }
    let line = format!("kill points: {}, recovered: {recovered}", points.len());
    eprintln!("{line}");
    println!("{line}");
    assert!(failures.is_empty(), "{line}\n{}", failures.join("\n"));
}

/// Copies the directory `from` into `to`, folders (the data dir's `memory/`, `logs/`) included.
pub(super) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
