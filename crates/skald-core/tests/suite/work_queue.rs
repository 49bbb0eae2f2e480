//! The work queue across engines on one data dir: each unit of work (a decided call's
//! continuation, an async task's run) is claimed by exactly one engine and runs once; work a
//! dead engine claimed is taken back and done.

use std::time::{Duration, Instant};

use serde_json::json;
use skald_core::Engine;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::DecisionInput;
use skald_store::repo::sessions::NewSession;
use skald_store::repo::tasks::NewTask;
use skald_testkit::{FakeLlm, Reply};

use super::auto_resume::open;
use super::subagents::task_agent_in;

const N: usize = 20;

struct Dirs {
    _dir: tempfile::TempDir,
    data: std::path::PathBuf,
    work: std::path::PathBuf,
}

fn dirs() -> Dirs {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = std::fs::canonicalize(dir.path()).unwrap().join("work");
    std::fs::create_dir_all(&work).unwrap();
    Dirs { data, work, _dir: dir }
}

/// Waits (bounded) until `done` holds.
async fn until(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How many requests the fake got whose first user message contains `key` (the session's own
/// requests, not a parent's that quotes its report).
pub fn asked(fake: &FakeLlm, key: &str) -> usize {
    fake.requests()
        .iter()
        .filter(|r| {
            let messages = r.body["messages"].as_array().unwrap();
            let first = messages.iter().find(|m| m["role"] == "user");
            first.and_then(|m| m["content"].as_str()).is_some_and(|c| c.starts_with(key))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn decided_commands_queued_for_two_engines_each_run_exactly_once() {
    let fake = FakeLlm::start().await.unwrap();
    let d = dirs();
    // A `skald chat` parks twenty commands and a `skald approve` approves them, no app open.
    let cli = open(&d.data, &fake, false).await;
    let mut sessions = Vec::new();
    for i in 0..N {
        let key = format!("RUN-{i:02}");
        let cmd = json!({ "command": format!("echo ran >> log-{i:02}.txt") }).to_string();
        fake.push_for_prompt(&key, Reply::tool_call("execute_cmd", &cmd));
        fake.push_for_prompt(&key, Reply::text(&format!("{key} done")));
        let opts = ChatOptions {
            park_mode: ParkMode::Exit,
            workdir: Some(d.work.clone()),
            ..Default::default()
        };
        let receipt = cli.send_message(&format!("s{i}"), &key, opts).await.unwrap();
        let outcome = cli.wait_turn(receipt.session_id).await.unwrap();
        assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");
        sessions.push(receipt.session_id);
    }
    for item in cli.inbox().await.unwrap().items {
        let approve = DecisionInput { approved: true, note: None, bypass: None };
        let decision = cli.decide(item.tool_call_id, approve, "cli").await.unwrap();
        assert!(!decision.resumed, "no engine runs the background yet");
    }
    // Two apps (or `skald serve`s) open on the same data dir and take the queue between them.
    let (a, b) = (open(&d.data, &fake, true).await, open(&d.data, &fake, true).await);
    until("every session answered", async || {
        let mut answered = 0;
        for &sid in &sessions {
            let ends = a.session_detail(sid).await.unwrap().turn_ends;
            answered += usize::from(ends.len() == 2);
        }
        answered == N
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let store = skald_store::Store::open_in_dir(&d.data).await.unwrap();
    let mut claimed_by = std::collections::HashSet::new();
    for (i, &sid) in sessions.iter().enumerate() {
        let log = std::fs::read_to_string(d.work.join(format!("log-{i:02}.txt"))).unwrap();
        assert_eq!(log, "ran\n", "session {sid}: the approved command ran once");
        assert_eq!(asked(&fake, &format!("RUN-{i:02}")), 2, "session {sid}: asked once after");
        let runs: Vec<_> = store
            .work_history(sid)
            .await
            .unwrap()
            .into_iter()
            .filter(|w| w.outcome.as_deref() == Some("final"))
            .collect();
        assert_eq!(runs.len(), 1, "session {sid}: one continuation ran: {runs:?}");
        claimed_by.extend(runs.iter().filter_map(|w| w.claimed_by.clone()));
    }
    assert!(claimed_by.iter().all(|c| c == a.instance_id() || c == b.instance_id()));
    a.shutdown(Duration::from_secs(5)).await;
    b.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn queued_task_runs_are_shared_by_two_engines_and_each_runs_once() {
    let fake = FakeLlm::start().await.unwrap();
    let d = dirs();
    task_agent_in(&d.data, "scout");
    // What a stopped process leaves: twenty tasks of twenty parents, queued, none run.
    let store = skald_store::Store::open_in_dir(&d.data).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..N {
        let parent =
            store.create_session(&NewSession::interactive(&format!("p{i}"))).await.unwrap();
        let key = format!("TASK-{i:02}");
        let task = store
            .create_task(&NewTask {
                parent_session_id: parent.session_id,
                parent_tool_call_id: 1000 + i as i64,
                agent_id: "scout",
                agent_prompt: "You scout.",
                prompt: &key,
                title: None,
                client: None,
            })
            .await
            .unwrap();
        store.enqueue_task_run(task.child_session_id).await.unwrap();
        fake.push_for_prompt(&key, Reply::text(&format!("{key} found 3 files")));
        tasks.push(task);
    }
    fake.on(skald_testkit::When::user_says("reported]"), Reply::text("Noted."));
    let (a, b) = (open(&d.data, &fake, true).await, open(&d.data, &fake, true).await);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut delivered = 0;
        for t in &tasks {
            delivered +=
                usize::from(store.task(t.id).await.unwrap().delivered_message_id.is_some());
        }
        if delivered == N {
            break;
        }
        if Instant::now() > deadline {
            let rows = futures_rows(&store, &tasks).await;
            panic!("only {delivered} delivered: {rows:#?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(asked(&fake, &format!("TASK-{i:02}")), 1, "task {} ran once", t.id);
        let row = store.task(t.id).await.unwrap();
        assert_eq!(row.status, "done");
        let parent_runs = store
            .work_history(t.parent_session_id)
            .await
            .unwrap()
            .into_iter()
            .filter(|w| w.outcome.as_deref() == Some("final"))
            .count();
        assert_eq!(parent_runs, 1, "the parent of task {} answered its report once", t.id);
    }
    a.shutdown(Duration::from_secs(5)).await;
    b.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn work_a_dead_engine_claimed_is_taken_back_and_done() {
    let fake = FakeLlm::start().await.unwrap();
    let d = dirs();
    let cli = open(&d.data, &fake, false).await;
    fake.push(Reply::tool_call("write_file", r#"{"path":"out.txt","content":"done\n"}"#));
    fake.push(Reply::text("Wrote out.txt."));
    let opts = ChatOptions {
        park_mode: ParkMode::Exit,
        workdir: Some(d.work.clone()),
        ..Default::default()
    };
    let receipt = cli.send_message("web", "write", opts).await.unwrap();
    cli.wait_turn(receipt.session_id).await.unwrap();
    let approve = DecisionInput { approved: true, note: None, bypass: None };
    cli.decide(1, approve, "cli").await.unwrap();
    // An engine on this host claimed the continuation, then died before running it.
    let store = skald_store::Store::open_in_dir(&d.data).await.unwrap();
    let dead = skald_store::repo::instances::Instance::new(
        &skald_core::session::process::host_name(),
        dead_pid(),
        chrono::Utc::now(),
    );
    store.register_instance(&dead).await.unwrap();
    let item = store
        .claim_work(&dead.id, skald_store::repo::work::WorkKind::Continue, None)
        .await
        .unwrap()
        .expect("the continuation was queued with the decision");
    assert_eq!(item.session_id, receipt.session_id);

    let app: Engine = open(&d.data, &fake, true).await;
    // Taken back within one reclaim round (5 s) and done: no item is left to a dead claimant.
    until("no item waits on the dead engine", async || {
        let history = store.work_history(receipt.session_id).await.unwrap();
        history.iter().all(|w| w.state == "done")
    })
    .await;
    let history = store.work_history(receipt.session_id).await.unwrap();
    assert_eq!(std::fs::read_to_string(d.work.join("out.txt")).unwrap(), "done\n");
    let finals: Vec<_> = history.iter().filter(|w| w.outcome.as_deref() == Some("final")).collect();
    assert_eq!(finals.len(), 1, "the turn was continued once: {history:?}");
    assert!(
        history.iter().all(|w| w.claimed_by.as_deref() == Some(app.instance_id())),
        "{history:?}"
    );
    assert_eq!(history[0].attempts, 2, "the dead engine's claim was taken back: {history:?}");
    assert_eq!(fake.requests().len(), 2, "the model was asked once after the decision");
    app.shutdown(Duration::from_secs(5)).await;
}

/// A pid no process has (a child that was reaped).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

async fn futures_rows(
    store: &skald_store::Store,
    tasks: &[skald_store::repo::tasks::TaskRow],
) -> Vec<(String, Vec<skald_store::repo::work::WorkRecord>)> {
    let mut out = Vec::new();
    for t in tasks.iter().take(3) {
        let row = store.task(t.id).await.unwrap();
        out.push((row.status.clone(), store.work_history(t.child_session_id).await.unwrap()));
    }
    out
}
