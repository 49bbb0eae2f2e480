//! Two `skald serve` processes on one data dir share its work queue. Before they start, twenty
//! sessions wait parked on an approved `execute_cmd` (decided by `skald approve`) and twenty
//! async tasks are queued. One serve is SIGKILLed while it holds claimed work — commands running,
//! model requests stalled at the provider — and the other takes that work back and finishes it.
//! Every item runs exactly once: each command's line is in its file once, each session and task
//! got one answered model request per step (a request the kill cut off is repeated, nothing
//! more), each report was delivered and answered once, no work item is left claimed or queued,
//! and none of the killed serve's commands outlived it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use skald_core::config::{EnvOverrides, MemorySecrets};
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_core::{Engine, EngineOptions};
use skald_protocol::TurnEnd;
use skald_store::Store;
use skald_store::repo::sessions::NewSession;
use skald_store::repo::tasks::{NewTask, TaskRow};
use skald_testkit::{FakeLlm, Reply};

use super::{Serve, processes, processes_in, skald_cmd};

const N: usize = 20;
/// An even session's command keeps running this long after writing its line (the kill finds it
/// running); an odd session's model reply after its command stalls about as long (the kill finds
/// it in flight at the provider).
const COMMAND_SECS: u64 = 6;
const REPLY_STALL_MS: u64 = 4_000;
/// The first tasks claimed (two slots per serve) stall long enough to be in flight at the kill;
/// the rest stall briefly.
const FIRST_TASKS: usize = 6;
const FIRST_TASK_STALL_MS: u64 = 2_500;
const TASK_STALL_MS: u64 = 150;
/// Everything must be done within this after the kill (the reclaim runs every 5 s).
const FINISH_WITHIN: Duration = Duration::from_secs(40);

fn run_key(i: usize) -> String {
    format!("RUN-{i:02}")
}

fn task_key(i: usize) -> String {
    format!("TASK-{i:02}")
}

/// What task `i` reports: the key of its parent's requests (the report is the parent's first
/// message).
fn report_key(i: usize) -> String {
    format!("REPORT-{i:02}")
}

struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    work: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let (data, work) = (root.join("data"), root.join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let agent = data.join("agents").join("scout");
    std::fs::create_dir_all(&agent).unwrap();
    let meta = json!({ "name": "scout", "description": "the scout", "type": "task" });
    std::fs::write(agent.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(agent.join("AGENT.md"), "You are the scout.").unwrap();
    Setup { _tmp: tmp, root, data, work }
}

/// An engine of the test's own on the data dir, without the background (a `skald chat`).
async fn cli_engine(s: &Setup, fake: &FakeLlm) -> Engine {
    let env = EnvOverrides {
        base_url: Some(fake.base_url()),
        model: Some("fake-model".into()),
        api_key: None,
    };
    let options = EngineOptions {
        data_dir: Some(s.data.clone()),
        env: Some(env),
        secrets: Some(Arc::new(MemorySecrets::default())),
        ..Default::default()
    };
    Engine::open(options).await.unwrap()
}

/// Sends `key` as a new session of `source` whose model asks to run a command: the turn parks
/// on the approval, as `skald chat` leaves it. Returns the session.
async fn park(engine: &Engine, s: &Setup, source: &str, key: &str) -> i64 {
    let opts = ChatOptions {
        park_mode: ParkMode::Exit,
        workdir: Some(s.work.clone()),
        ..Default::default()
    };
    let receipt = engine.send_message(source, key, opts).await.unwrap();
    let outcome = engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{key}: {outcome:?}");
    receipt.session_id
}

/// The model's call of `execute_cmd` running `command`.
fn run_command(command: &str) -> Reply {
    Reply::tool_call("execute_cmd", &json!({ "command": command }).to_string())
}

/// Parks twenty sessions on their `execute_cmd` and returns their ids and the parked calls.
async fn park_sessions(s: &Setup, fake: &FakeLlm) -> (Vec<i64>, Vec<i64>) {
    let engine = cli_engine(s, fake).await;
    let mut sessions = Vec::new();
    for i in 0..N {
        let key = run_key(i);
        let command = if i % 2 == 0 {
            format!("echo ran >> log-{i:02}.txt && exec sleep {COMMAND_SECS}")
        } else {
            format!("echo ran >> log-{i:02}.txt")
        };
        fake.push_for_prompt(&key, run_command(&command));
        if i % 2 == 1 {
            fake.push_for_prompt(&key, Reply::Stall { ms: REPLY_STALL_MS, then_hang: false });
        }
        fake.push_for_prompt(&key, Reply::text(&format!("{key} done")));
        sessions.push(park(&engine, s, &format!("s{i:02}"), &key).await);
    }
    let calls: Vec<i64> =
        engine.inbox().await.unwrap().items.iter().map(|i| i.tool_call_id).collect();
    assert_eq!(calls.len(), N);
    engine.shutdown(Duration::from_secs(5)).await;
    (sessions, calls)
}

/// `skald approve` for every call, four processes at a time.
async fn approve_all(s: &Setup, fake: &FakeLlm, calls: &[i64]) {
    for batch in calls.chunks(4) {
        let runs = batch.iter().map(|id| {
            let mut cmd = tokio::process::Command::from(skald_cmd(&s.data, fake));
            cmd.args(["approve", &id.to_string()]).kill_on_drop(true);
            async move {
                let out = tokio::time::timeout(Duration::from_secs(30), cmd.output()).await;
                let out = out.expect("skald approve hung").unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(0), "skald approve {id}: {err}");
            }
        });
        futures::future::join_all(runs).await;
    }
}

/// Twenty queued async tasks of twenty parents, none run (what a stopped app leaves).
async fn queue_tasks(store: &Store, fake: &FakeLlm) -> Vec<TaskRow> {
    let mut tasks = Vec::new();
    for i in 0..N {
        let parent =
            store.create_session(&NewSession::interactive(&format!("p{i:02}"))).await.unwrap();
        let prompt = format!("{}: count the files", task_key(i));
        let task = store
            .create_task(&NewTask {
                parent_session_id: parent.session_id,
                parent_tool_call_id: 1000 + i as i64,
                agent_id: "scout",
                agent_prompt: "You are the scout.",
                prompt: &prompt,
                title: None,
                client: None,
            })
            .await
            .unwrap();
        store.enqueue_task_run(task.child_session_id).await.unwrap();
        let stall = if i < FIRST_TASKS { FIRST_TASK_STALL_MS } else { TASK_STALL_MS };
        fake.push_for_prompt(&task_key(i), Reply::Stall { ms: stall, then_hang: false });
        let report = format!("{}: found 3 files", report_key(i));
        fake.push_for_prompt(&task_key(i), Reply::text(&report));
        fake.push_for_prompt(&report_key(i), Reply::text(&format!("Noted {i:02}.")));
        tasks.push(task);
    }
    tasks
}

/// The requests whose first user message holds `key` (the session's own requests): how many
/// were answered and how many were cut off before an answer (the serve sending them was killed).
fn requests_for(fake: &FakeLlm, key: &str) -> (usize, usize) {
    let mine: Vec<u16> = fake
        .requests()
        .iter()
        .filter(|r| {
            let messages = r.body["messages"].as_array().cloned().unwrap_or_default();
            let first = messages.iter().find(|m| m["role"] == "user").cloned();
            first.and_then(|m| m["content"].as_str().map(|c| c.contains(key))).unwrap_or(false)
        })
        .map(|r| r.status)
        .collect();
    let answered = mine.iter().filter(|&&s| s == 200).count();
    let cut = mine.iter().filter(|&&s| s == 0).count();
    assert_eq!(answered + cut, mine.len(), "{key}: a request failed: {mine:?}");
    (answered, cut)
}

/// The final answers stored in a session (assistant rows of its root frame), as the API shows.
async fn answers(serve: &Serve, session_id: i64) -> Vec<String> {
    let (status, detail) = serve.call("session_detail", json!({ "session_id": session_id })).await;
    assert_eq!(status, 200, "{detail}");
    detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "assistant" && m["depth"] == 0)
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

fn finals(ends: &[skald_protocol::EndedTurn]) -> usize {
    ends.iter().filter(|e| matches!(e.outcome, TurnEnd::Final { .. })).count()
}

/// Whether every session answered and every task's report was delivered and answered.
async fn all_done(store: &Store, sessions: &[i64], tasks: &[TaskRow]) -> bool {
    for &sid in sessions {
        if finals(&store.turn_ends(sid).await.unwrap()) == 0 {
            return false;
        }
    }
    for t in tasks {
        let row = store.task(t.id).await.unwrap();
        let parent = store.turn_ends(t.parent_session_id).await.unwrap();
        if row.delivered_message_id.is_none() || finals(&parent) == 0 {
            return false;
        }
    }
    true
}

/// The process groups of the commands serve `pid` had running, as recorded for the reaping.
async fn command_groups(store: &Store, pid: u32) -> Vec<i64> {
    let rows = store.tool_processes().await.unwrap();
    rows.iter().filter(|p| p.group.owner_pid == i64::from(pid)).map(|p| p.group.pgid).collect()
}

/// Whether the session's work was taken back from the killed serve: claimed again, or given
/// back and merged into the item queued for the session meanwhile.
fn taken_back(items: &[skald_store::repo::work::WorkRecord]) -> bool {
    items.iter().any(|w| w.attempts > 1 || w.outcome.as_deref() == Some("merged"))
}

/// Checks that a run's model was asked again at most once, and only when the run was the
/// killed serve's and taken back: `answered` requests were answered in full where `expected`
/// are the run's own, and `cut` were cut off mid-reply. A reply the killed serve read in full
/// but died before storing counts as answered, and the survivor asks the same again (at least
/// once: a request has no effect of its own).
fn asked_again(
    key: &str,
    answered: usize,
    expected: usize,
    cut: usize,
    items: &[skald_store::repo::work::WorkRecord],
) {
    assert!(answered >= expected, "{key}: {answered} answered, {expected} expected");
    let again = cut + answered - expected;
    assert!(again <= 1, "{key}: asked {again} times more: {items:?}");
    assert!(again == 0 || taken_back(items), "{key}: asked again but not taken back: {items:?}");
}

fn log_lines(work: &Path, i: usize) -> Option<String> {
    std::fs::read_to_string(work.join(format!("log-{i:02}.txt"))).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_serves_share_the_queue_and_a_kill_of_one_loses_nothing_and_runs_nothing_twice() {
    let fake = FakeLlm::start().await.unwrap();
    let s = setup();
    let (sessions, calls) = park_sessions(&s, &fake).await;
    approve_all(&s, &fake, &calls).await;
    let store = Store::open_in_dir(&s.data).await.unwrap();
    let tasks = queue_tasks(&store, &fake).await;

    // Both open the data dir at once and take the queue between them.
    let log = |name: &str| s.root.join(format!("serve-{name}.log"));
    let (a, b) = (
        Serve::spawn(&s.data, &s.root, &fake, &log("a"), &[]),
        Serve::spawn(&s.data, &s.root, &fake, &log("b"), &[]),
    );
    let (mut a, mut b) = (a.ready(), b.ready());

    // Kill when every command has started (all lines written: the even ones still run) and the
    // serve to kill holds some of them: the one running more commands.
    let deadline = Instant::now() + Duration::from_secs(30);
    let victim_is_a = loop {
        let started = (0..N).all(|i| log_lines(&s.work, i).is_some());
        let procs = processes();
        let children = |pid: u32| procs.iter().filter(|p| p.ppid == pid).count();
        let (in_a, in_b) = (children(a.pid()), children(b.pid()));
        if started && in_a + in_b > 0 {
            break in_a >= in_b;
        }
        assert!(Instant::now() < deadline, "the commands never started: {in_a} + {in_b}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (victim, survivor) = if victim_is_a { (&mut a, &mut b) } else { (&mut b, &mut a) };
    let victim_pid = victim.pid();
    let in_flight = fake.in_flight();
    victim.kill();
    let killed_at = Instant::now();

    // The killed serve's commands die with it: nothing of their process groups is left.
    let groups = command_groups(&store, victim_pid).await;
    assert!(!groups.is_empty(), "the killed serve ran no command at the kill");
    let mut left = Vec::new();
    while killed_at.elapsed() < Duration::from_secs(2) {
        left = processes().into_iter().filter(|p| groups.contains(&p.pgrp)).collect();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(left.is_empty(), "commands of the killed serve outlived it: {left:?}");

    // The other one takes the dead serve's work back and finishes everything.
    let finished = loop {
        if all_done(&store, &sessions, &tasks).await {
            break killed_at.elapsed();
        }
        assert!(survivor.running(), "the surviving serve died:\n{}", survivor.stderr());
        assert!(
            killed_at.elapsed() < FINISH_WITHIN,
            "not done {FINISH_WITHIN:?} after the kill:\n{}",
            survivor.stderr()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Anything run twice would show after the last answer: give it the time of a round.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut cut_total = 0;
    for (i, &sid) in sessions.iter().enumerate() {
        let key = run_key(i);
        assert_eq!(log_lines(&s.work, i).as_deref(), Some("ran\n"), "{key}: the command ran once");
        let (answered, cut) = requests_for(&fake, &key);
        let items = store.work_history(sid).await.unwrap();
        asked_again(&key, answered, 2, cut, &items);
        assert!(items.iter().all(|w| w.state == "done"), "{key}: {items:?}");
        let ran: Vec<_> = items.iter().filter(|w| w.outcome.as_deref() == Some("final")).collect();
        assert_eq!(ran.len(), 1, "{key}: one continuation ran: {items:?}");
        cut_total += cut;
        let ends = store.turn_ends(sid).await.unwrap();
        assert_eq!(ends.len(), 2, "{key}: parked once, answered once: {ends:?}");
        assert!(matches!(ends[1].outcome, TurnEnd::Final { .. }), "{key}: {ends:?}");
        assert_eq!(answers(survivor, sid).await, [format!("{key} done")], "{key}");
    }
    for (i, t) in tasks.iter().enumerate() {
        let key = task_key(i);
        let (answered, cut) = requests_for(&fake, &key);
        let items = store.work_history(t.child_session_id).await.unwrap();
        asked_again(&key, answered, 1, cut, &items);
        cut_total += cut;
        let row = store.task(t.id).await.unwrap();
        assert_eq!(row.status, "done", "{key}");
        assert!(row.report.as_deref().is_some_and(|r| r.contains(&report_key(i))), "{row:?}");
        assert!(items.iter().all(|w| w.state == "done"), "{key}: {items:?}");
        assert_eq!(items.iter().filter(|w| w.outcome.as_deref() == Some("final")).count(), 1);
        // The report reached the parent once, and the parent answered it once.
        let (answered, cut) = requests_for(&fake, &report_key(i));
        let items = store.work_history(t.parent_session_id).await.unwrap();
        asked_again(&format!("{key}'s parent"), answered, 1, cut, &items);
        cut_total += cut;
        assert!(items.iter().all(|w| w.state == "done"), "{key}'s parent: {items:?}");
        assert_eq!(items.iter().filter(|w| w.outcome.as_deref() == Some("final")).count(), 1);
        let ends = store.turn_ends(t.parent_session_id).await.unwrap();
        assert_eq!(finals(&ends), 1, "{key}'s parent answered once: {ends:?}");
        assert_eq!(answers(survivor, t.parent_session_id).await, [format!("Noted {i:02}.")]);
    }
    assert!(cut_total <= in_flight, "{cut_total} requests cut, {in_flight} were in flight");
    assert!(processes_in(&s.work).is_empty(), "a command still runs in the working dir");
    let survivor_log = survivor.stderr();
    assert!(!survivor_log.to_lowercase().contains("database is locked"), "{survivor_log}");
    eprintln!(
        "killed serve {victim_pid} with {in_flight} model requests in flight and {} commands \
         running; {cut_total} requests cut and repeated; all done {:.1} s after the kill",
        groups.len(),
        finished.as_secs_f64()
    );
}

/// A command that started a process of its own (a subshell here; a compiler or a dev server in
/// real life) when its serve is SIGKILLed: the shell dies with the serve (its parent-death
/// signal), the rest of its process group is recorded in `tool_processes`. The other serve, open
/// all along, kills that group in its reclaim pass, before it takes the work back (the call is
/// answered as interrupted), so the subshell never writes after the kill.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_children_of_a_killed_serves_command_do_not_outlive_it() {
    let fake = FakeLlm::start().await.unwrap();
    let s = setup();
    let command = "echo started >> log.txt; (sleep 8; echo after >> log.txt); echo done >> log.txt";
    fake.push_for_prompt("RUN-X", run_command(command));
    fake.push_for_prompt("RUN-X", Reply::text("RUN-X done"));
    let engine = cli_engine(&s, &fake).await;
    let session = park(&engine, &s, "sx", "RUN-X").await;
    let call = engine.inbox().await.unwrap().items[0].tool_call_id;
    engine.shutdown(Duration::from_secs(5)).await;
    approve_all(&s, &fake, &[call]).await;
    let store = Store::open_in_dir(&s.data).await.unwrap();

    let log = |name: &str| s.root.join(format!("serve-{name}.log"));
    let (a, b) = (
        Serve::spawn(&s.data, &s.root, &fake, &log("a"), &[]),
        Serve::spawn(&s.data, &s.root, &fake, &log("b"), &[]),
    );
    let (mut a, mut b) = (a.ready(), b.ready());
    let logged = || std::fs::read_to_string(s.work.join("log.txt")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    let victim_is_a = loop {
        let procs = processes();
        let runs = |pid: u32| procs.iter().any(|p| p.ppid == pid);
        if logged().contains("started") && (runs(a.pid()) || runs(b.pid())) {
            break runs(a.pid());
        }
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (victim, survivor) = if victim_is_a { (&mut a, &mut b) } else { (&mut b, &mut a) };
    let victim_pid = victim.pid();
    victim.kill();
    let killed_at = Instant::now();
    let groups = command_groups(&store, victim_pid).await;
    assert_eq!(groups.len(), 1, "the command's group was recorded");
    // The other serve takes the session back within a reclaim round and answers.
    let deadline = Instant::now() + Duration::from_secs(20);
    while finals(&store.turn_ends(session).await.unwrap()) == 0 {
        assert!(Instant::now() < deadline, "not taken back:\n{}", survivor.stderr());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Killed before the work was taken back; a SIGKILLed process can still be listed for a
    // moment (until init reaps it), so the listing is given a short while to catch up.
    let answered_at = killed_at.elapsed();
    let mut left: Vec<_> = Vec::new();
    while killed_at.elapsed() < answered_at + Duration::from_secs(1) {
        left = processes().into_iter().filter(|p| groups.contains(&p.pgrp)).collect();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        left.is_empty(),
        "{:.1} s after the kill, with the work taken back, processes of the killed serve's \
         command still run: {left:?}",
        killed_at.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(9).saturating_sub(killed_at.elapsed())).await;
    assert_eq!(logged(), "started\n", "the command went on writing after its serve was killed");
}
