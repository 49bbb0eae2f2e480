//! `skald tasks list` and `skald tasks continue` as processes: a task a `skald chat --no-wait`
//! started is listed under its session and continued when nobody runs it (a finished one is not), and a
//! plain `skald chat` waits for its task's report and the answer to it, showing what the task
//! waits for from a human.

use std::process::Stdio;

use serde_json::{Value, json};
use skald_testkit::{FakeLlm, HANG_GUARD, Reply, ScriptedToolCall};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::chat::{cli, dirs, run};

/// Writes the task agent `scout` into the data dir.
pub(super) fn scout_agent(data: &std::path::Path) {
    let agent = data.join("agents").join("scout");
    std::fs::create_dir_all(&agent).unwrap();
    let meta = json!({ "name": "scout", "description": "the scout", "type": "task" });
    std::fs::write(agent.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(agent.join("AGENT.md"), "You are the scout.").unwrap();
}

/// A task a `skald chat --no-wait` left behind (queued or cut off mid-run, nobody running it)
/// is continued by `skald tasks continue`, which waits for its report and the parent's answer;
/// a finished task is not continued again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_left_behind_by_no_wait_is_listed_and_continued_and_a_done_one_is_not() {
    let fake = FakeLlm::start().await.unwrap();
    fake.allow_leftover_replies();
    fake.allow_unscripted_requests();
    let (_dir, data, work) = dirs();
    scout_agent(&data);
    let args = json!({ "mode": "async", "agent_id": "scout", "prompt": "TASK-C: look around" });
    fake.push(Reply::tool_calls(vec![ScriptedToolCall::new("execute_task", &args.to_string())]));
    fake.push(Reply::text("Started."));
    fake.push(Reply::text("The scout found 3 files."));
    // The first request (if the chat's own run gets that far) is cut off when it exits.
    fake.push_for_prompt("TASK-C", Reply::Stall { ms: 2_000, then_hang: false });
    fake.push_for_prompt("TASK-C", Reply::text("Looked around: 3 files."));

    let mut chat = cli(&fake, &data);
    chat.args(["chat", "--no-wait", "--workdir"]).arg(&work).arg("look around in the background");
    let (code, out, err) = run(chat).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("background task scout#2 left for later"), "{out}");
    // The chat's process left nothing to take over: no session held, its instance stopped,
    // the task's run back in the queue (a running app or serve claims it at once).
    let left = left_behind(&data).await;
    assert_eq!(left.runners, Vec::<(i64, String)>::new(), "sessions still held");
    assert_eq!(left.live_instances, Vec::<String>::new(), "an instance not marked stopped");
    assert_eq!(left.task_items, vec![("queued".to_string(), None)], "the task's run");

    let mut list = cli(&fake, &data);
    list.args(["--json", "tasks", "list", "1"]);
    let (code, out, err) = run(list).await;
    assert_eq!(code, 0, "{err}");
    let tasks: Value = serde_json::from_str(&out).unwrap();
    let task = &tasks.as_array().unwrap()[0];
    assert_eq!(task["label"], "scout#2");
    assert_eq!(task["child_session_id"], 2);
    assert_eq!(task["state"], "queued", "{task}");

    let mut text = cli(&fake, &data);
    text.args(["tasks", "list", "1"]);
    let (_, out, _) = run(text).await;
    assert!(out.lines().nth(1).is_some_and(|l| l.starts_with("scout#2")), "{out}");

    // Nobody runs it: continuing runs it here to its report and the parent's answer.
    let mut again = cli(&fake, &data);
    again.args(["tasks", "continue", "2"]);
    let (code, out, err) = run(again).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("continuing task scout#2"), "{out}");
    let mut list = cli(&fake, &data);
    list.args(["--json", "tasks", "list", "1"]);
    let (_, out, _) = run(list).await;
    let tasks: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(tasks[0]["state"], "done", "{tasks}");
    assert_eq!(tasks[0]["delivered"], true, "{tasks}");
    // The run the chat gave back is the one that ran (claimed a second time, not merged away).
    let left = left_behind(&data).await;
    assert_eq!(left.task_items, vec![("done".to_string(), Some("final".to_string()))]);
    assert_eq!(left.runners, Vec::<(i64, String)>::new(), "sessions still held");
    assert_eq!(left.live_instances, Vec::<String>::new(), "an instance not marked stopped");

    let mut done = cli(&fake, &data);
    done.args(["tasks", "continue", "2"]);
    let (code, _, err) = run(done).await;
    assert_eq!(code, 1);
    assert!(err.contains("is done") && err.contains("can be continued"), "{err}");

    let mut not_task = cli(&fake, &data);
    not_task.args(["tasks", "continue", "1"]);
    let (code, _, err) = run(not_task).await;
    assert_eq!(code, 1);
    assert!(err.contains("not an async task"), "{err}");
}

/// What processes that exited left in the database.
struct LeftBehind {
    /// Runner rows: (session, instance).
    runners: Vec<(i64, String)>,
    /// Instances not recorded as stopped.
    live_instances: Vec<String>,
    /// The work items of the task's session (2): (state, outcome).
    task_items: Vec<(String, Option<String>)>,
}

async fn left_behind(data: &std::path::Path) -> LeftBehind {
    let store = skald_store::Store::open_in_dir(data).await.unwrap();
    let runners = sqlx::query_as("SELECT session_id, runner FROM session_runners")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let live_instances =
        sqlx::query_scalar("SELECT id FROM engine_instances WHERE stopped_at IS NULL")
            .fetch_all(store.pool())
            .await
            .unwrap();
    let task_items = store
        .work_history(2)
        .await
        .unwrap()
        .into_iter()
        .filter(|w| w.kind == "task")
        .map(|w| (w.state, w.outcome))
        .collect();
    LeftBehind { runners, live_instances, task_items }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_waits_for_its_background_task_and_prints_the_answer_to_its_report() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    scout_agent(&data);
    let args = json!({ "mode": "async", "agent_id": "scout", "prompt": "TASK-W: count files" });
    fake.push(Reply::tool_calls(vec![ScriptedToolCall::new("execute_task", &args.to_string())]));
    fake.push(Reply::text("Started the scout."));
    // The task is still working when the parent's turn ends.
    fake.push_for_prompt("TASK-W", Reply::Stall { ms: 500, then_hang: false });
    fake.push_for_prompt("TASK-W", Reply::text("There are 42 files."));
    fake.push(Reply::text("The scout counted 42 files."));

    let mut chat = cli(&fake, &data);
    chat.arg("chat").arg("--workdir").arg(&work).arg("count the files in the background");
    let (code, out, err) = run(chat).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let started = out.find("Started the scout.").expect(&out);
    let waiting = out.find("waiting for background task scout#2").expect(&out);
    let finished = out.find("⚑ task scout#2 finished: There are 42 files.").expect(&out);
    let answer = out.find("The scout counted 42 files.").expect(&out);
    assert!(started < waiting && waiting < finished && finished < answer, "{out}");

    let mut list = cli(&fake, &data);
    list.args(["--json", "tasks", "list", "--session", "1"]);
    let (code, out, err) = run(list).await;
    assert_eq!(code, 0, "{err}");
    let tasks: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(tasks[0]["state"], "done", "{tasks}");
    assert_eq!(tasks[0]["delivered"], true, "{tasks}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_chat_shows_its_tasks_approval_and_goes_on_once_another_terminal_approves() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    scout_agent(&data);
    let args = json!({ "mode": "async", "agent_id": "scout", "prompt": "TASK-P: write the notes" });
    fake.push(Reply::tool_calls(vec![ScriptedToolCall::new("execute_task", &args.to_string())]));
    fake.push(Reply::text("Started the scout."));
    let write = json!({ "path": "notes.md", "content": "hi\n" });
    fake.push_for_prompt("TASK-P", Reply::tool_call("write_file", &write.to_string()));
    fake.push_for_prompt("TASK-P", Reply::text("Wrote notes.md."));
    fake.push(Reply::text("The scout wrote the notes."));

    let mut cmd = cli(&fake, &data);
    cmd.arg("chat").arg("--workdir").arg(&work).arg("write the notes in the background");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut chat = cmd.spawn().unwrap();
    let mut lines = BufReader::new(chat.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    // The task's write waits for a human; the waiting chat says so and how to decide.
    let asks = "notes.md needs approval (call ";
    let call_id = tokio::time::timeout(HANG_GUARD, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("chat ended before the approval");
            seen.push(line.clone());
            if line.starts_with("[task scout#2] ⏸ write to ")
                && let Some((_, rest)) = line.split_once(asks)
            {
                return rest.split(')').next().unwrap().parse::<i64>().unwrap();
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no approval line: {seen:?}"));
    assert!(seen.last().unwrap().contains(&format!("skald approve {call_id}")), "{seen:?}");
    assert!(!work.join("notes.md").exists(), "written before the approval");

    let mut approve = cli(&fake, &data);
    approve.args(["approve", &call_id.to_string()]);
    let (code, _, err) = run(approve).await;
    assert_eq!(code, 0, "{err}");
    let rest = tokio::time::timeout(HANG_GUARD, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            seen.push(line);
        }
    });
    rest.await.expect("the chat did not end after the approval");
    let status = tokio::time::timeout(HANG_GUARD, chat.wait()).await.unwrap().unwrap();
    let all = seen.join("\n");
    assert_eq!(status.code(), Some(0), "{all}");
    assert!(all.contains("⚑ task scout#2 finished: Wrote notes.md."), "{all}");
    assert!(all.ends_with("The scout wrote the notes."), "{all}");
    assert_eq!(std::fs::read_to_string(work.join("notes.md")).unwrap(), "hi\n");
}
