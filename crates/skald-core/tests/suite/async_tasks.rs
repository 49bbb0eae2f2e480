//! Async tasks (`execute_task` mode `async`) end to end against the strict fake provider: the
//! child session runs while the parent's turn ends, its report reaches the parent exactly once
//! and wakes it, a duplicate delivery is dropped, a failed task continues to a success, a
//! restart mid-task continues it, `llm.max_async_tasks` bounds how many run at once, and
//! `llm.max_async_tasks_per_reply` / `_per_turn` bound how many one reply and one turn start.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::json;
use skald_core::config::{self, EnvOverrides};
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_core::{Engine, EngineError};
use skald_protocol::{DecisionInput, Event, SessionListQuery, TaskState, ToolStatus};
use skald_store::repo::tasks::TaskRow;
use skald_store::repo::tools::ToolCallRow;
use skald_testkit::{FakeLlm, RecordedRequest, Reply, ScriptedToolCall, When};

use super::subagents::{first_text, task_agent, tool_names};
use super::turn::{Rig, fake_env, open_engine};

async fn rig(config: &str) -> Rig {
    let rig = Rig::new(config).await;
    task_agent(&rig, "scout");
    rig
}

fn start_async(prompt: &str) -> ScriptedToolCall {
    let args = json!({ "mode": "async", "agent_id": "scout", "prompt": prompt });
    ScriptedToolCall::new("execute_task", &args.to_string())
}

/// Every request: no tool name twice; the parent (first message without `TASK-`) is offered
/// `execute_task` with mode `async`; a task's child session never `execute_task` (no nested
/// lifecycle) but `execute_subtask`.
fn check_tools(fake: &FakeLlm) {
    for r in fake.requests() {
        let names = tool_names(&r.body);
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "a tool name offered twice: {names:?}");
        let has = |n: &str| names.iter().any(|x| x == n);
        if first_text(&r.body).contains("TASK-") {
            assert!(!has("execute_task") && has("execute_subtask"), "task tools: {names:?}");
        } else {
            assert!(has("execute_task") && !has("execute_subtask"), "parent tools: {names:?}");
            let def = r.body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["function"]["name"] == "execute_task")
                .unwrap();
            let modes = &def["function"]["parameters"]["properties"]["mode"]["enum"];
            assert_eq!(modes, &json!(["sync", "async", "cron"]));
        }
    }
}

/// How often `needle` occurs in the messages of each request.
fn occurrences(fake: &FakeLlm, needle: &str) -> Vec<usize> {
    fake.requests()
        .iter()
        .map(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["content"].as_str().is_some_and(|c| c.contains(needle)))
                .count()
        })
        .collect()
}

async fn tasks(rig: &Rig, sid: i64) -> Vec<TaskRow> {
    rig.store().await.tasks_of_parent(sid).await.unwrap()
}

/// Waits (bounded) until every task of `sid` has its report delivered.
async fn all_delivered(rig: &Rig, sid: i64, n: usize) -> Vec<TaskRow> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let rows = tasks(rig, sid).await;
        if rows.len() == n && rows.iter().all(|t| t.delivered_message_id.is_some()) {
            return rows;
        }
        assert!(Instant::now() < deadline, "reports never delivered: {rows:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits for the parent's runs in `engine` to end; returns the last one's outcome.
async fn settled(engine: &Engine, sid: i64) -> TurnOutcome {
    let waited = tokio::time::timeout(Duration::from_secs(20), engine.wait_turn(sid));
    waited.await.expect("the parent's turn hung").expect("no parent turn ran")
}

/// A parent turn starts task `TASK-A` and ends; the child answers after a while, its report
/// wakes the parent, which answers it. Returns the parent session and its task.
async fn report_wakes_the_parent(rig: &Rig) -> (i64, TaskRow) {
    rig.fake.push(Reply::tool_calls(vec![start_async("TASK-A: count the files")]));
    rig.fake.push(Reply::text("Started the scout."));
    // The child is still working when the parent's turn ends.
    rig.fake.push_for_prompt("TASK-A", Reply::Stall { ms: 400, then_hang: false });
    rig.fake.push_for_prompt("TASK-A", Reply::text("There are 42 files."));
    rig.fake.push(Reply::text("The scout counted 42 files."));
    let (sid, outcome, _) = rig.turn("count the files in the background").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "Started the scout."),
        "{outcome:?}"
    );
    let running = tasks(rig, sid).await;
    assert_eq!(running.len(), 1);
    assert!(!running[0].ended(), "the task still runs when the parent's turn ends");
    let task = all_delivered(rig, sid, 1).await.remove(0);
    let woken = settled(&rig.engine, sid).await;
    assert!(
        matches!(&woken, TurnOutcome::Final { content, .. } if content == "The scout counted 42 files."),
        "{woken:?}"
    );
    (sid, task)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_async_task_reports_once_and_wakes_its_idle_parent() {
    let rig = rig("").await;
    let mut rx = rig.engine.subscribe();
    let (sid, task) = report_wakes_the_parent(&rig).await;
    check_tools(&rig.fake);

    // The call's result said the task started, with its label; the call is done.
    let store = rig.store().await;
    let call = store.tool_call(task.parent_tool_call_id).await.unwrap();
    assert_eq!(call.status().unwrap(), ToolStatus::Done);
    let result = call.result.clone().unwrap_or_default();
    assert!(result.contains("started in the background") && result.contains(&task.label));
    assert_eq!(task.label, format!("scout#{}", task.child_session_id));
    assert_eq!(task.status, "done");

    // The labelled block reached the model exactly once: in the woken turn's request only.
    let block = format!("[task {} reported] There are 42 files.", task.label);
    let seen = occurrences(&rig.fake, &block);
    assert_eq!(seen.iter().filter(|n| **n > 0).count(), 1, "{seen:?}");
    assert_eq!(seen.iter().sum::<usize>(), 1, "{seen:?}");
    assert_eq!(*seen.last().unwrap(), 1, "the woken turn answered the report");

    // The child is an ephemeral session sharing the parent's scratchpad, not a top-level chat.
    let child = store.session(task.child_session_id).await.unwrap();
    assert!(child.is_ephemeral);
    assert_eq!(child.scratchpad_session_id, Some(sid));
    let listed = rig.engine.list_sessions(SessionListQuery::default()).await.unwrap();
    let ids: Vec<i64> = listed.items.iter().map(|s| s.id).collect();
    assert!(ids.contains(&sid) && !ids.contains(&task.child_session_id), "{ids:?}");
    let infos = rig.engine.list_tasks(sid).await.unwrap();
    assert_eq!((infos.len(), infos[0].state, infos[0].delivered), (1, TaskState::Done, true));
    // The debug tree names the task's child session under its parent.
    let detail = rig.engine.session_detail(sid).await.unwrap();
    assert_eq!(detail.tasks, infos);
    assert!(rig.engine.session_detail(task.child_session_id).await.unwrap().tasks.is_empty());
    // A reloaded chat reads the same tasks with its window, each naming its spawning call.
    let window = rig
        .engine
        .session_window(
            sid,
            skald_protocol::WindowQuery { anchor: skald_protocol::WindowAnchor::Latest, limit: 50 },
        )
        .await
        .unwrap();
    assert_eq!(window.tasks, infos);
    assert_eq!(window.tasks[0].tool_call_id, task.parent_tool_call_id);

    // The parent's card: queued, running, done, delivered, in that order.
    let mut states = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if ev.session_id == Some(sid)
            && let Event::TaskUpdate { state, task_id, .. } = ev.event
        {
            assert_eq!(task_id, task.id);
            states.push(state);
        }
    }
    assert_eq!(
        states,
        [TaskState::Queued, TaskState::Running, TaskState::Done, TaskState::Delivered]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_delivery_of_a_report_is_dropped_and_says_so() {
    let rig = rig("").await;
    let (sid, task) = report_wakes_the_parent(&rig).await;
    let mut rx = rig.engine.subscribe();
    assert!(!rig.engine.deliver_task_report(task.id).await.unwrap(), "delivered twice");
    let dropped = loop {
        let ev = rx.try_recv().expect("no event for the dropped delivery");
        if let Event::TaskUpdate { state, .. } = ev.event {
            break state;
        }
    };
    assert_eq!(dropped, TaskState::DeliveryDropped);
    // The parent's history holds the report once.
    let store = rig.store().await;
    let root = store.root_frame(sid).await.unwrap();
    let rows = store.messages_for_stack(root.id).await.unwrap();
    let reports = rows.iter().filter(|m| m.content.starts_with("[task ")).count();
    assert_eq!(reports, 1);
    assert_eq!(tasks(&rig, sid).await[0].delivered_message_id, task.delivered_message_id);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_task_reports_its_failure_and_continue_task_resumes_it_to_a_success() {
    let rig = rig("").await;
    rig.fake.allow_rejected_requests();
    rig.fake.push(Reply::tool_calls(vec![start_async("TASK-F: fetch the page")]));
    rig.fake.push(Reply::text("Started."));
    rig.fake.push_for_prompt("TASK-F", Reply::Stall { ms: 300, then_hang: false });
    rig.fake.push_for_prompt("TASK-F", Reply::status(400, 2));
    rig.fake.push(Reply::text("The fetch failed; I will ask to retry."));
    let (sid, _, _) = rig.turn("fetch it in the background").await;
    let failed = all_delivered(&rig, sid, 1).await.remove(0);
    assert_eq!(failed.status, "failed", "{failed:?}");
    let woken = settled(&rig.engine, sid).await;
    assert!(matches!(woken, TurnOutcome::Final { .. }), "{woken:?}");
    let failure = format!("[task {} failed]", failed.label);
    assert_eq!(occurrences(&rig.fake, &failure).iter().sum::<usize>(), 1);

    // A done task cannot be continued; the failed one continues from its last step.
    rig.fake.push_for_prompt("TASK-F", Reply::text("Fetched: hello."));
    rig.fake.push(Reply::text("The retry fetched hello."));
    let info = rig.engine.continue_task(failed.child_session_id).await.unwrap();
    assert_eq!(info.state, TaskState::Queued);
    let done = all_delivered(&rig, sid, 1).await.remove(0);
    assert_eq!((done.status.as_str(), done.report.as_deref()), ("done", Some("Fetched: hello.")));
    let answered = settled(&rig.engine, sid).await;
    assert!(
        matches!(&answered, TurnOutcome::Final { content, .. } if content == "The retry fetched hello."),
        "{answered:?}"
    );
    let success = format!("[task {} reported] Fetched: hello.", done.label);
    assert_eq!(*occurrences(&rig.fake, &success).last().unwrap(), 1);
    // The continued child asked again on its own history: its task once, nothing doubled.
    let last_child = rig
        .fake
        .requests()
        .into_iter()
        .rev()
        .find(|r| first_text(&r.body).contains("TASK-F"))
        .unwrap();
    let prompts = last_child.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["content"].as_str().is_some_and(|c| c.contains("TASK-F")))
        .count();
    assert_eq!(prompts, 1);
    let again = rig.engine.continue_task(done.child_session_id).await.unwrap_err();
    assert!(matches!(again, EngineError::Conflict(_)), "{again:?}");
    let not_task = rig.engine.continue_task(sid).await.unwrap_err();
    assert!(matches!(not_task, EngineError::NotFound(_)), "{not_task:?}");
    check_tools(&rig.fake);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_cut_off_by_a_restart_continues_at_the_next_open_and_reports_once() {
    let rig = rig("").await;
    rig.fake.allow_leftover_replies();
    rig.fake.push(Reply::tool_calls(vec![start_async("TASK-R: summarise the log")]));
    rig.fake.push(Reply::text("Started."));
    rig.fake.push_for_prompt("TASK-R", Reply::Stall { ms: 60_000, then_hang: true });
    let (sid, _, _) = rig.turn("summarise in the background").await;
    rig.fake.wait_in_flight(1).await;

    // The app quits mid-task: the task is not ended, nothing is reported; it waits in the
    // queue again (its run given back, not left claimed by an engine that is gone).
    rig.engine.shutdown(Duration::from_secs(5)).await;
    let cut = tasks(&rig, sid).await.remove(0);
    assert_eq!((cut.status.as_str(), cut.delivered_message_id), ("queued", None));
    let items = rig.store().await.work_history(cut.child_session_id).await.unwrap();
    assert!(items.iter().all(|w| w.state != "claimed"), "{items:?}");
    assert!(items.iter().any(|w| w.state == "queued"), "{items:?}");

    let app = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    rig.fake.push_for_prompt("TASK-R", Reply::text("The log is quiet."));
    rig.fake.push(Reply::text("The summary: quiet."));
    app.start_background();
    let task = all_delivered(&rig, sid, 1).await.remove(0);
    let woken = settled(&app, sid).await;
    assert!(
        matches!(&woken, TurnOutcome::Final { content, .. } if content == "The summary: quiet."),
        "{woken:?}"
    );
    let block = format!("[task {} reported] The log is quiet.", task.label);
    assert_eq!(occurrences(&rig.fake, &block).iter().sum::<usize>(), 1);
    // A second open finds nothing left to do.
    app.shutdown(Duration::from_secs(5)).await;
    let again = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    again.start_background();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(occurrences(&rig.fake, &block).iter().sum::<usize>(), 1);
    check_tools(&rig.fake);
}

#[tokio::test(flavor = "multi_thread")]
async fn max_async_tasks_bounds_the_tasks_running_at_once() {
    let rig = rig("llm:\n  max_async_tasks: 2\n").await;
    rig.fake.allow_leftover_replies();
    let calls = ["TASK-1 first", "TASK-2 second", "TASK-3 third"].map(start_async).to_vec();
    rig.fake.push(Reply::tool_calls(calls));
    rig.fake.push(Reply::text("Three tasks started."));
    // Every task works until stopped or shut down.
    for key in ["TASK-1", "TASK-2", "TASK-3"] {
        rig.fake.push_for_prompt(key, Reply::Stall { ms: 60_000, then_hang: true });
    }
    let (sid, _, _) = rig.turn("start three tasks").await;
    rig.fake.wait_in_flight(2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let count = |rows: &[TaskRow], status: &str| rows.iter().filter(|t| t.status == status).count();
    let rows = tasks(&rig, sid).await;
    assert_eq!((count(&rows, "running"), count(&rows, "queued")), (2, 1), "{rows:?}");
    assert_eq!(rig.fake.in_flight(), 2, "at most two tasks ask the model at once");

    // Stopping a running task frees its slot: the queued one starts; still two at once.
    let stopped = rows.iter().find(|t| t.status == "running").unwrap().clone();
    rig.fake.push(Reply::text("Noted: one task was stopped."));
    assert!(rig.engine.stop(stopped.child_session_id).await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let rows = tasks(&rig, sid).await;
        let me = rows.iter().find(|t| t.id == stopped.id).unwrap();
        if me.delivered_message_id.is_some() && count(&rows, "running") == 2 {
            assert_eq!(me.status, "cancelled");
            assert_eq!(count(&rows, "queued"), 0);
            break;
        }
        assert!(Instant::now() < deadline, "the queued task never started: {rows:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answered = settled(&rig.engine, sid).await;
    assert!(matches!(answered, TurnOutcome::Final { .. }), "{answered:?}");
    rig.fake.wait_in_flight(2).await;
    let block = format!("[task {} was stopped]", stopped.label);
    assert_eq!(occurrences(&rig.fake, &block).iter().sum::<usize>(), 1);
    check_tools(&rig.fake);
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_whose_process_died_continues_at_the_next_open_and_reports_once() {
    let rig = rig("").await;
    rig.fake.allow_leftover_replies();
    rig.fake.push(Reply::tool_calls(vec![start_async("TASK-K: index the repo")]));
    rig.fake.push(Reply::text("Started."));
    rig.fake.push_for_prompt("TASK-K", Reply::Stall { ms: 60_000, then_hang: true });
    let (sid, _, _) = rig.turn("index in the background").await;
    rig.fake.wait_in_flight(1).await;
    let task = tasks(&rig, sid).await.remove(0);
    // The process dies mid-task: the child's runner row names a pid that is gone.
    let dead = super::lifecycle::dead_pid();
    let sql = format!(
        "UPDATE session_runners SET runner = 'dead-runner', pid = {dead} WHERE session_id = {}",
        task.child_session_id
    );
    super::write_unchecked(&rig.data_dir(), &sql).await;

    let app = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    rig.fake.push_for_prompt("TASK-K", Reply::text("Indexed 7 files."));
    rig.fake.push(Reply::text("The index is ready."));
    app.start_background();
    let task = all_delivered(&rig, sid, 1).await.remove(0);
    assert_eq!(task.status, "done");
    let woken = settled(&app, sid).await;
    assert!(
        matches!(&woken, TurnOutcome::Final { content, .. } if content == "The index is ready."),
        "{woken:?}"
    );
    let block = format!("[task {} reported] Indexed 7 files.", task.label);
    assert_eq!(occurrences(&rig.fake, &block).iter().sum::<usize>(), 1);
    check_tools(&rig.fake);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_report_reaches_a_busy_parent_at_its_next_round() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![start_async("TASK-B: check the date")]));
    // The parent is still working (a one-second command) when the task reports.
    let slow = json!({ "command": "sleep 1" }).to_string();
    rig.fake.push(Reply::tool_call("execute_cmd", &slow));
    rig.fake.push_for_prompt("TASK-B", Reply::text("It is Friday."));
    rig.fake.push(Reply::text("The task says it is Friday."));
    let (sid, outcome, _) = rig.turn("check the date in the background").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "The task says it is Friday."),
        "{outcome:?}"
    );
    let task = all_delivered(&rig, sid, 1).await.remove(0);
    let block = format!("[task {} reported] It is Friday.", task.label);
    let seen = occurrences(&rig.fake, &block);
    // Folded into the running turn's third round, not a turn of its own.
    assert_eq!(seen.iter().sum::<usize>(), 1, "{seen:?}");
    assert_eq!(*seen.last().unwrap(), 1, "{seen:?}");
    let ends = rig.engine.session_detail(sid).await.unwrap().turn_ends;
    assert_eq!(ends.len(), 1, "no extra turn was started for the report");
    check_tools(&rig.fake);
}

/// `wait_tasks` returns only once the task has reported and the turn it woke has answered.
#[tokio::test(flavor = "multi_thread")]
async fn wait_tasks_returns_after_the_report_was_answered() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![start_async("TASK-Q: count the files")]));
    rig.fake.push(Reply::text("Started the scout."));
    rig.fake.push_for_prompt("TASK-Q", Reply::Stall { ms: 300, then_hang: false });
    rig.fake.push_for_prompt("TASK-Q", Reply::text("There are 7 files."));
    rig.fake.push(Reply::text("The scout counted 7 files."));
    let (sid, outcome, _) = rig.turn("count the files in the background").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert!(!tasks(&rig, sid).await[0].ended(), "the task still runs when the turn ends");

    tokio::time::timeout(Duration::from_secs(20), rig.engine.wait_tasks(sid))
        .await
        .expect("wait_tasks hung");
    let rows = tasks(&rig, sid).await;
    assert!(rows[0].delivered_message_id.is_some(), "{rows:?}");
    let last = rig.engine.wait_turn(sid).await;
    assert!(
        matches!(&last, Some(TurnOutcome::Final { content, .. }) if content == "The scout counted 7 files."),
        "{last:?}"
    );
    assert_eq!(rig.fake.requests().len(), 4);
}

/// An async task started with `client` runs its session on that client (pinned on the child
/// session, so a continued or restarted run keeps it); the parent stays on its own.
#[tokio::test(flavor = "multi_thread")]
async fn an_async_task_runs_on_the_client_its_call_named() {
    let rig = Rig::two_models().await;
    super::subagents::task_agent(&rig, "scout");
    let args = json!({ "mode": "async", "agent_id": "scout", "prompt": "TASK-K: count", "client": "backup" });
    let call = ScriptedToolCall::new("execute_task", &args.to_string());
    rig.fake.push_for_model("fake-model", Reply::tool_calls(vec![call]));
    rig.fake.push_for_model("fake-model", Reply::text("Started."));
    rig.fake.push_for_prompt("TASK-K", Reply::Stall { ms: 200, then_hang: false });
    rig.fake.push_for_prompt("TASK-K", Reply::text("There are 3 files."));
    rig.fake.push_for_model("fake-model", Reply::text("The scout counted 3 files."));
    let (sid, _, _) = rig.turn("count in the background").await;
    let task = all_delivered(&rig, sid, 1).await.remove(0);
    settled(&rig.engine, sid).await;
    let asked: Vec<(bool, String)> = rig
        .fake
        .requests()
        .iter()
        .map(|r| (first_text(&r.body).contains("TASK-K"), r.body["model"].as_str().unwrap().into()))
        .collect();
    for (is_task, model) in &asked {
        assert_eq!(model, if *is_task { "fake-model-2" } else { "fake-model" }, "{asked:?}");
    }
    assert_eq!(asked.iter().filter(|(t, _)| *t).count(), 1, "{asked:?}");
    let child = rig.store().await.session(task.child_session_id).await.unwrap();
    assert_eq!(child.client.as_deref(), Some("backup"));
}

/// The parent's `execute_task` calls, oldest first.
async fn task_calls(rig: &Rig, sid: i64) -> Vec<ToolCallRow> {
    let calls = rig.store().await.tool_calls_for_session(sid).await.unwrap();
    calls.into_iter().filter(|c| c.name == "execute_task").collect()
}

/// The parent's requests (a task's first message holds its `TASK-` key).
fn parent_requests(fake: &FakeLlm) -> Vec<RecordedRequest> {
    fake.requests().into_iter().filter(|r| !first_text(&r.body).contains("TASK-")).collect()
}

/// What a reply that asks for `n` async tasks at once came to.
pub struct Flood {
    pub rig: Rig,
    pub sid: i64,
    /// The events of the parent's first turn.
    pub events: Vec<Event>,
    pub tasks: Vec<TaskRow>,
    /// The reply's `execute_task` calls.
    pub calls: Vec<ToolCallRow>,
    /// The results the model read for them (its next request).
    pub told: Vec<String>,
}

/// One reply asks for `n` async tasks (`TASK-01`, …); each task that starts answers at once, and
/// the chat answers the calls' results and every report. Returns once every started task has
/// reported and the chat has answered.
pub async fn flood(n: usize) -> Flood {
    let rig = rig("").await;
    let keys: Vec<String> = (1..=n).map(|i| format!("TASK-{i:02}")).collect();
    let calls = keys.iter().map(|k| start_async(&format!("{k}: check part {k}"))).collect();
    rig.fake.push(Reply::tool_calls(calls));
    rig.fake.on(When::result_of_tool("execute_task"), Reply::text("Started what I could."));
    rig.fake.on(When::user_says("reported]"), Reply::text("Noted the report."));
    for k in &keys {
        rig.fake.push_for_prompt(k, Reply::text(&format!("{k} is fine.")));
    }
    // Only the tasks that start ask the model.
    rig.fake.allow_leftover_replies();
    let (sid, outcome, events) = rig.turn("check all forty parts in the background").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let started = tasks(&rig, sid).await.len();
    let tasks = all_delivered(&rig, sid, started).await;
    settled(&rig.engine, sid).await;
    let calls = task_calls(&rig, sid).await;
    let told = parent_requests(&rig.fake).get(1).map(super::matrix::tool_results);
    Flood { sid, events, tasks, calls, told: told.unwrap_or_default(), rig }
}

fn failed(calls: &[ToolCallRow]) -> Vec<&ToolCallRow> {
    calls.iter().filter(|c| c.status().unwrap() == ToolStatus::Failed).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_reply_asking_for_forty_tasks_starts_four_and_refuses_the_rest() {
    let f = flood(40).await;
    assert_eq!(f.tasks.len(), 4, "{:?}", f.tasks);
    assert_eq!(f.calls.len(), 40);
    let refused = failed(&f.calls);
    assert_eq!(refused.len(), 36);
    // The first four calls the model listed started their tasks (whichever of the batch ran
    // first); no refused call has a task.
    let with_task: HashSet<i64> = f.tasks.iter().map(|t| t.parent_tool_call_id).collect();
    for (i, call) in f.calls.iter().enumerate() {
        let done = call.status().unwrap() == ToolStatus::Done;
        assert_eq!(done, i < 4, "{call:?}");
        assert_eq!(done, with_task.contains(&call.id), "{call:?}");
    }
    for call in &refused {
        let text = call.result.as_deref().unwrap_or_default();
        for part in [
            "at most 4 async tasks",
            "llm.max_async_tasks_per_reply",
            "this reply has already started 4 (this turn: 4 of at most 8)",
            "not started and is not queued",
            "Wait for the reports",
            "fewer tasks",
        ] {
            assert!(text.contains(part), "{part:?} missing from {text:?}");
        }
    }
    // The model read the 36 refusals; the user saw them as tool errors.
    assert_eq!(
        f.told.iter().filter(|t| t.starts_with("Error: Refused: a reply may start")).count(),
        36
    );
    let errors = f.events.iter().filter(|e| matches!(e, Event::ToolError { .. })).count();
    assert_eq!(errors, 36);
    // Two requests of the chat's turn, one per task, at most one per report: bounded by the
    // limit, not by what the model asked for (issue 21 measured 68 for this reply).
    let requests = f.rig.fake.requests().len();
    assert!((2 + 4..=2 + 4 + 4).contains(&requests), "{requests} requests");
    let children = f.rig.fake.requests().len() - parent_requests(&f.rig.fake).len();
    assert_eq!(children, 4);
    assert_eq!(f.rig.engine.list_tasks(f.sid).await.unwrap().len(), 4);
    // The model was told the limits with the tool.
    let first = &f.rig.fake.requests()[0].body;
    let tools = first["tools"].as_array().unwrap();
    let def = tools.iter().find(|t| t["function"]["name"] == "execute_task").unwrap();
    let described = def["function"]["description"].as_str().unwrap();
    assert!(described.contains("at most 4 async tasks and one turn at most 8"), "{described}");
}

/// A rig allowing 2 task starts per reply and 3 per turn, whose tasks `keys` work until stopped.
async fn limited(keys: &[&str]) -> Rig {
    let rig = rig("llm:\n  max_async_tasks_per_reply: 2\n  max_async_tasks_per_turn: 3\n").await;
    rig.fake.allow_leftover_replies();
    for key in keys {
        rig.fake.push_for_prompt(key, Reply::Stall { ms: 60_000, then_hang: true });
    }
    rig
}

/// A reply that starts the tasks `keys`.
fn starting(keys: &[&str]) -> Reply {
    Reply::tool_calls(keys.iter().map(|k| start_async(k)).collect())
}

/// Asserts that the session's newest `execute_task` call failed, saying `says`.
async fn last_refused(rig: &Rig, sid: i64, says: &str) {
    let last = task_calls(rig, sid).await.pop().unwrap();
    assert_eq!(last.status().unwrap(), ToolStatus::Failed, "{last:?}");
    let text = last.result.unwrap_or_default();
    assert!(text.contains(says), "{says:?} missing from {text:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_is_limited_across_its_replies_and_the_reports_that_wake_it() {
    let rig = limited(&["TASK-A1", "TASK-A2", "TASK-B1", "TASK-B2", "TASK-C1", "TASK-D1"]).await;
    rig.fake.push(starting(&["TASK-A1", "TASK-A2"]));
    rig.fake.push(starting(&["TASK-B1", "TASK-B2"]));
    rig.fake.push(Reply::text("Three started."));
    let (sid, outcome, _) = rig.turn("start the work").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(tasks(&rig, sid).await.len(), 3);
    let calls_now = task_calls(&rig, sid).await;
    let refused = failed(&calls_now);
    assert_eq!(refused.len(), 1, "{calls_now:?}");
    let text = refused[0].result.as_deref().unwrap_or_default();
    assert!(refused[0].arguments.as_deref().unwrap().contains("TASK-B2"), "{refused:?}");
    for part in [
        "a turn may start at most 3 async tasks",
        "llm.max_async_tasks_per_turn",
        "this turn has already started 3 (1 of them in this reply)",
        "before the user's next message",
    ] {
        assert!(text.contains(part), "{part:?} missing from {text:?}");
    }

    // A report wakes the chat: the woken run is the same turn, so it starts nothing more.
    rig.fake.wait_in_flight(2).await;
    let running = tasks(&rig, sid).await.into_iter().find(|t| t.status == "running").unwrap();
    rig.fake.push(starting(&["TASK-C1"]));
    rig.fake.push(Reply::text("No more tasks now."));
    assert!(rig.engine.stop(running.child_session_id).await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    while tasks(&rig, sid).await.iter().all(|t| t.delivered_message_id.is_none()) {
        assert!(Instant::now() < deadline, "the stopped task's report never reached the chat");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let woken = settled(&rig.engine, sid).await;
    assert!(
        matches!(&woken, TurnOutcome::Final { content, .. } if content == "No more tasks now."),
        "{woken:?}"
    );
    assert_eq!(tasks(&rig, sid).await.len(), 3);
    last_refused(&rig, sid, "this turn has already started 3 (0 of them in this reply)").await;

    // The user's next message is a new turn.
    rig.fake.push(starting(&["TASK-D1"]));
    rig.fake.push(Reply::text("Started one more."));
    let (again, _, _) = rig.turn("one more, please").await;
    assert_eq!(again, sid);
    assert_eq!(tasks(&rig, sid).await.len(), 4);
    assert_eq!(task_calls(&rig, sid).await.pop().unwrap().status().unwrap(), ToolStatus::Done);
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

/// The count is read from stored rows: a turn parked on an approval and resumed by a fresh
/// process (nothing in memory) still knows what it started.
#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_turn_counts_the_tasks_it_started_before() {
    let rig = limited(&["TASK-A1", "TASK-A2", "TASK-B1", "TASK-B2"]).await;
    rig.fake.push(starting(&["TASK-A1", "TASK-A2"]));
    let cmd = json!({ "command": "echo checked" }).to_string();
    rig.fake.push(Reply::tool_call("execute_cmd", &cmd));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message("test", "start the work", opts).await.unwrap();
    let sid = receipt.session_id;
    let parked = rig.engine.wait_turn(sid).await.unwrap();
    assert!(matches!(parked, TurnOutcome::Parked { .. }), "{parked:?}");
    assert_eq!(tasks(&rig, sid).await.len(), 2);
    rig.engine.shutdown(Duration::from_secs(5)).await;

    let app = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    let waiting = app.inbox().await.unwrap().items;
    assert_eq!(waiting.len(), 1);
    let approve = DecisionInput { approved: true, note: None, bypass: None };
    app.decide(waiting[0].tool_call_id, approve, "test").await.unwrap();
    rig.fake.push(starting(&["TASK-B1", "TASK-B2"]));
    rig.fake.push(Reply::text("Done."));
    let outcome = app.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(tasks(&rig, sid).await.len(), 3);
    last_refused(&rig, sid, "this turn has already started 3 (1 of them in this reply)").await;
    app.shutdown(Duration::from_secs(5)).await;
}

#[test]
fn the_start_limits_default_to_four_and_eight_and_are_checked() {
    let load = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.yml"), text).unwrap();
        config::load(dir.path(), &EnvOverrides::default())
    };
    let c = load("").unwrap();
    assert_eq!((c.llm.max_async_tasks_per_reply, c.llm.max_async_tasks_per_turn), (4, 8));
    let c = load("llm:\n  max_async_tasks_per_reply: 1\n  max_async_tasks_per_turn: 64\n").unwrap();
    assert_eq!((c.llm.max_async_tasks_per_reply, c.llm.max_async_tasks_per_turn), (1, 64));
    for (text, line, says) in [
        (
            "llm:\n  max_async_tasks: 2\n  max_async_tasks_per_reply: 0\n",
            3,
            "llm.max_async_tasks_per_reply: must be between 1 and 64, not 0",
        ),
        (
            "llm:\n  max_async_tasks_per_turn: 65\n",
            2,
            "llm.max_async_tasks_per_turn: must be between 1 and 64, not 65",
        ),
        (
            "llm:\n  max_async_tasks_per_turn: 3\n  max_async_tasks_per_reply: 5\n",
            3,
            "llm.max_async_tasks_per_reply: at most llm.max_async_tasks_per_turn (3), not 5",
        ),
        ("llm:\n  max_async_tasks_per_reply: many\n", 2, "llm.max_async_tasks_per_reply"),
        ("llm:\n  max_async_tasks_per_rely: 2\n", 2, "unknown field `max_async_tasks_per_rely`"),
    ] {
        let msg = load(text).unwrap_err().to_string();
        assert!(msg.contains(&format!("config.yml:{line}:")), "{msg}");
        assert!(msg.contains(says), "{msg}");
    }
    let shipped = config::default_config_text();
    assert!(
        shipped.contains("max_async_tasks_per_reply: 4")
            && shipped.contains("max_async_tasks_per_turn: 8")
    );
}

/// Waiting costs nothing: two tasks parked on a person's approval hold no slot, so with
/// `max_async_tasks: 2` a third runs and reports at once; approving them later finishes them.
#[tokio::test(flavor = "multi_thread")]
async fn two_tasks_waiting_for_approval_do_not_delay_a_third() {
    let rig = rig("llm:\n  max_async_tasks: 2\n").await;
    let calls = ["TASK-1 write", "TASK-2 write", "TASK-3 count"].map(start_async).to_vec();
    rig.fake.push(Reply::tool_calls(calls));
    rig.fake.push(Reply::text("Three tasks started."));
    for (key, file) in [("TASK-1", "one.txt"), ("TASK-2", "two.txt")] {
        let args = json!({ "path": file, "content": "x\n" }).to_string();
        rig.fake.push_for_prompt(key, Reply::tool_call("write_file", &args));
        rig.fake.push_for_prompt(key, Reply::text(&format!("{key}: wrote {file}.")));
    }
    // The third starts only after both others asked for approval (or it would not tell).
    rig.fake.push_for_prompt("TASK-3", Reply::Stall { ms: 500, then_hang: false });
    rig.fake.push_for_prompt("TASK-3", Reply::text("TASK-3: there are 3 files."));
    rig.fake.on(When::user_says("reported]"), Reply::text("Noted the report."));
    let (sid, _, _) = rig.turn("start three tasks").await;

    let deadline = Instant::now() + Duration::from_secs(20);
    let third = loop {
        let rows = tasks(&rig, sid).await;
        let waiting = rig.engine.inbox().await.unwrap().items.len();
        if let Some(t) = rows.iter().find(|t| t.status == "done") {
            assert_eq!(waiting, 2, "both writes wait for approval: {rows:?}");
            break t.clone();
        }
        assert!(Instant::now() < deadline, "the third task never ran: {rows:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(third.report.as_deref(), Some("TASK-3: there are 3 files."));
    // The parent answers the third's report while the other two still wait.
    let deadline = Instant::now() + Duration::from_secs(20);
    while tasks(&rig, sid).await.iter().all(|t| t.delivered_message_id.is_none()) {
        assert!(Instant::now() < deadline, "the third's report never reached the parent");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answered = settled(&rig.engine, sid).await;
    assert!(matches!(answered, TurnOutcome::Final { .. }), "{answered:?}");
    // Nothing of the two parked tasks holds a session or polls while they wait.
    for t in tasks(&rig, sid).await.iter().filter(|t| t.status != "done") {
        assert!(
            !rig.engine.is_running(t.child_session_id).await.unwrap(),
            "{t:?} holds its session"
        );
    }
    let before = rig.fake.requests().len();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rig.fake.requests().len(), before, "a parked task asks nothing");

    for item in rig.engine.inbox().await.unwrap().items {
        let approve = DecisionInput { approved: true, note: None, bypass: None };
        rig.engine.decide(item.tool_call_id, approve, "test").await.unwrap();
    }
    let rows = all_delivered(&rig, sid, 3).await;
    assert!(rows.iter().all(|t| t.status == "done"), "{rows:?}");
    assert_eq!(std::fs::read_to_string(rig.work.join("one.txt")).unwrap(), "x\n");
    assert_eq!(std::fs::read_to_string(rig.work.join("two.txt")).unwrap(), "x\n");
    rig.engine.shutdown(Duration::from_secs(5)).await;
}
