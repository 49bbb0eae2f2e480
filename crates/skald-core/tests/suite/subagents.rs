//! Sync sub-agents end to end against the strict fake provider: a child frame per delegation,
//! nesting, the depth limit, parallel batches, a stop, a question from a child, and the resume
//! cascade after a crash. Every test checks the `tools` array of every request it caused.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{Event, EventEnvelope, ToolStatus};
use skald_store::repo::history::{NewMessage, Role};
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall};
use tokio::sync::broadcast;

use super::turn::{Rig, finish};

const SOURCE: &str = "test";

/// A task agent `id` in the rig's data dir.
pub fn task_agent(rig: &Rig, id: &str) {
    task_agent_in(&rig.data_dir(), id);
}

/// A task agent `id` in the data dir `data`.
pub fn task_agent_in(data: &std::path::Path, id: &str) {
    let dir = data.join("agents").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = json!({ "name": id, "description": format!("the {id}"), "type": "task" });
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(dir.join("AGENT.md"), format!("You are the {id}.")).unwrap();
}

async fn rig(config: &str) -> Rig {
    let rig = Rig::new(config).await;
    task_agent(&rig, "scout");
    task_agent(&rig, "coder");
    rig
}

fn delegate(agent: &str, prompt: &str) -> ScriptedToolCall {
    let args = json!({ "mode": "sync", "agent_id": agent, "prompt": prompt });
    ScriptedToolCall::new("execute_task", &args.to_string())
}

fn subtask(agent: &str, prompt: &str) -> ScriptedToolCall {
    let args = json!({ "agent_id": agent, "prompt": prompt });
    ScriptedToolCall::new("execute_subtask", &args.to_string())
}

pub fn first_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] != "system")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect()
        })
        .unwrap_or_default()
}

/// Every request: no tool name twice; the root is offered `execute_task` and never
/// `execute_subtask`; a child (its prompt holds one of `children`' keys, with its depth) never
/// `execute_task`, and `execute_subtask` only below `max_depth`.
fn check_tools(fake: &FakeLlm, children: &[(&str, u32)], max_depth: u32) {
    let requests = fake.requests();
    assert!(!requests.is_empty());
    for r in requests {
        let names = tool_names(&r.body);
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "a tool name offered twice: {names:?}");
        let first = first_text(&r.body);
        let depth = children.iter().find(|(k, _)| first.contains(k)).map_or(0, |(_, d)| *d);
        let has = |n: &str| names.iter().any(|x| x == n);
        if depth == 0 {
            assert!(has("execute_task") && !has("execute_subtask"), "root tools: {names:?}");
        } else {
            assert!(!has("execute_task"), "depth {depth} offered execute_task: {names:?}");
            assert_eq!(has("execute_subtask"), depth < max_depth, "depth {depth}: {names:?}");
            assert!(has("ask_user_clarification"), "questions at every depth: {names:?}");
        }
    }
}

fn drain(rx: &mut broadcast::Receiver<EventEnvelope>, sid: i64) -> Vec<EventEnvelope> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if ev.session_id == Some(sid) {
            out.push(ev);
        }
    }
    out
}

/// The tool results of the last request, in the order the model reads them.
fn last_tool_results(fake: &FakeLlm) -> Vec<String> {
    tool_results(&fake.requests().last().unwrap().body)
}

/// The tool results a request carried, in the order the model reads them.
pub fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_sync_sub_agent_runs_in_a_child_frame_and_its_answer_is_the_call_result() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![delegate("scout", "TASK-A: find the answer")]));
    rig.fake.push_for_prompt("TASK-A", Reply::text("The answer is 42."));
    rig.fake.push(Reply::text("The scout found 42."));
    let mut rx = rig.engine.subscribe();
    let (sid, outcome, _) = rig.turn("ask the scout").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "The scout found 42.")
    );
    check_tools(&rig.fake, &[("TASK-A", 1)], 5);
    assert_eq!(last_tool_results(&rig.fake), ["The answer is 42."]);

    let store = rig.store().await;
    let frames = store.frames(sid).await.unwrap();
    assert_eq!(frames.len(), 2);
    let child = &frames[1];
    let call = store.tool_call(child.parent_tool_call_id.unwrap()).await.unwrap();
    assert_eq!((call.name.as_str(), call.status().unwrap()), ("execute_task", ToolStatus::Done));
    assert_eq!((child.agent_id.as_str(), child.depth), ("scout", 1));
    assert!(child.terminated_at.is_some(), "a finished child frame is terminated");

    // The child's events carry its frame: depth 1, `scout#<id>`, under the spawning call; its
    // final answer is a `done` of the child frame, and only the root's turn ends.
    let events = drain(&mut rx, sid);
    let label = format!("scout#{}", child.id);
    let child_done = events
        .iter()
        .find(|e| matches!(e.event, Event::Done { .. }) && e.frame.as_ref().unwrap().depth == 1)
        .expect("the child's done");
    let frame = child_done.frame.as_ref().unwrap();
    assert_eq!(frame.label.as_deref(), Some(label.as_str()));
    assert_eq!(frame.parent_tool_call_id, Some(call.id));
    let ended: Vec<_> =
        events.iter().filter(|e| matches!(e.event, Event::TurnEnded { .. })).collect();
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].frame.as_ref().unwrap().depth, 0);

    // The spawning call reads the same in the tree, rebuilt from history, as it did live.
    let live = events
        .iter()
        .find_map(|e| match &e.event {
            Event::ToolStart { tool_call_id, label_full, .. } if *tool_call_id == call.id => {
                Some(label_full.clone())
            }
            _ => None,
        })
        .expect("the call's start");
    assert!(live.starts_with("execute_task ⚡ → scout: TASK-A"), "{live}");
    let tree = rig.engine.session_detail(sid).await.unwrap();
    let stored = tree
        .messages
        .iter()
        .find_map(|m| match m {
            skald_protocol::DebugMessage::Tool { tool_call_id, label, .. }
                if *tool_call_id == call.id =>
            {
                Some(label.clone())
            }
            _ => None,
        })
        .expect("the call in the tree");
    assert_eq!(stored, live);
}

#[tokio::test]
async fn a_sub_agent_delegates_again_at_depth_two_with_a_nested_label() {
    let rig = rig("llm:\n  max_subagent_depth: 2\n").await;
    rig.fake.push(Reply::tool_calls(vec![delegate("scout", "TASK-A: plan it")]));
    rig.fake
        .push_for_prompt("TASK-A", Reply::tool_calls(vec![subtask("coder", "TASK-B: code it")]));
    rig.fake.push_for_prompt("TASK-B", Reply::text("coded"));
    rig.fake.push_for_prompt("TASK-A", Reply::text("planned and coded"));
    rig.fake.push(Reply::text("All done."));
    let mut rx = rig.engine.subscribe();
    let (sid, outcome, _) = rig.turn("build it").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-A", 1), ("TASK-B", 2)], 2);
    assert_eq!(last_tool_results(&rig.fake), ["planned and coded"]);

    let store = rig.store().await;
    let frames = store.frames(sid).await.unwrap();
    assert_eq!(frames.iter().map(|f| f.depth).collect::<Vec<_>>(), [0, 1, 2]);
    let (scout, coder) = (&frames[1], &frames[2]);
    let lineage = store.frame_lineage(coder.id).await.unwrap();
    assert_eq!(
        lineage.iter().map(|f| f.id).collect::<Vec<_>>(),
        [frames[0].id, scout.id, coder.id]
    );
    let want = format!("scout#{}>coder#{}", scout.id, coder.id);
    let labels: HashSet<String> =
        drain(&mut rx, sid).into_iter().filter_map(|e| e.frame.and_then(|f| f.label)).collect();
    assert!(labels.contains(&want), "{labels:?}");
}

#[tokio::test]
async fn a_delegation_past_the_depth_limit_is_refused_with_a_clear_error() {
    let rig = rig("llm:\n  max_subagent_depth: 1\n").await;
    rig.fake.push(Reply::tool_calls(vec![delegate("scout", "TASK-A: go deep")]));
    rig.fake.push_for_prompt("TASK-A", Reply::tool_calls(vec![subtask("coder", "TASK-B: deeper")]));
    rig.fake.push_for_prompt("TASK-A", Reply::text("did it myself"));
    rig.fake.push(Reply::text("ok"));
    let (sid, outcome, _) = rig.turn("go").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-A", 1)], 1);
    let store = rig.store().await;
    let frames = store.frames(sid).await.unwrap();
    assert_eq!(frames.len(), 2, "no frame at depth 2");
    let calls = store.open_tool_calls_for_stack(frames[1].id).await.unwrap();
    assert!(calls.is_empty());
    let scout_calls = store.tool_calls_for_stack_after(frames[1].id, 0).await.unwrap();
    let refused = &scout_calls[0];
    assert_eq!(refused.status().unwrap(), ToolStatus::Failed);
    let error = refused.result.clone().unwrap();
    assert!(error.contains("llm.max_subagent_depth = 1"), "{error}");
}

#[tokio::test]
async fn only_task_agents_can_be_delegated_to() {
    let rig = rig("").await;
    let dir = rig.data_dir().join("agents").join("buddy");
    std::fs::create_dir_all(&dir).unwrap();
    let meta = json!({ "name": "Buddy", "description": "a chat agent", "type": "chat" });
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(dir.join("AGENT.md"), "Chat.").unwrap();
    rig.fake.push(Reply::tool_calls(vec![delegate("buddy", "TASK-X: hi")]));
    rig.fake.push(Reply::text("I will do it myself."));
    let (sid, outcome, _) = rig.turn("delegate to buddy").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[], 5);
    let error = last_tool_results(&rig.fake).pop().unwrap();
    assert!(error.contains("no task agent `buddy`") && error.contains("scout"), "{error}");
    assert_eq!(rig.store().await.frames(sid).await.unwrap().len(), 1, "no child frame");
}

#[tokio::test]
async fn a_parallel_batch_records_results_in_call_order_whatever_finishes_first() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![
        delegate("scout", "TASK-1: slow"),
        delegate("coder", "TASK-2: medium"),
        delegate("scout", "TASK-3: fast"),
    ]));
    rig.fake.push_for_prompt("TASK-1", Reply::Stall { ms: 800, then_hang: false });
    rig.fake.push_for_prompt("TASK-1", Reply::text("one"));
    rig.fake.push_for_prompt("TASK-2", Reply::Stall { ms: 400, then_hang: false });
    rig.fake.push_for_prompt("TASK-2", Reply::text("two"));
    rig.fake.push_for_prompt("TASK-3", Reply::text("three"));
    rig.fake.push(Reply::text("one two three"));
    let mut rx = rig.engine.subscribe();
    // Concurrent: the stalled children's requests are in flight together (a wall-clock bound
    // said the same, and failed on a loaded machine).
    let mut peak = 0;
    let turn = rig.turn("fan out");
    tokio::pin!(turn);
    let (sid, outcome, _) = loop {
        tokio::select! {
            done = &mut turn => break done,
            () = tokio::time::sleep(Duration::from_millis(5)) => {
                peak = peak.max(rig.fake.in_flight());
            }
        }
    };
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert!(peak >= 2, "the children ran one after another (at most {peak} request in flight)");
    check_tools(&rig.fake, &[("TASK-1", 1), ("TASK-2", 1), ("TASK-3", 1)], 5);
    assert_eq!(last_tool_results(&rig.fake), ["one", "two", "three"]);

    let events = drain(&mut rx, sid);
    let finished: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Done { content, .. } if e.frame.as_ref().unwrap().depth == 1 => {
                Some(content.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(finished, ["three", "two", "one"], "children finished out of order");
    let recorded: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolDone { result, .. } if e.frame.as_ref().unwrap().depth == 0 => {
                Some(result.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(recorded, ["one", "two", "three"], "recorded in call order");
}

#[tokio::test]
async fn a_stop_stops_every_sibling_of_a_batch() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![
        delegate("scout", "TASK-1: wait"),
        delegate("coder", "TASK-2: wait"),
    ]));
    rig.fake.push_for_prompt("TASK-1", Reply::Stall { ms: 0, then_hang: true });
    rig.fake.push_for_prompt("TASK-2", Reply::Stall { ms: 0, then_hang: true });
    let receipt = rig.engine.send_message(SOURCE, "fan out", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    rig.fake.wait_in_flight(2).await;
    assert!(rig.engine.stop(sid).await.unwrap());
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    check_tools(&rig.fake, &[("TASK-1", 1), ("TASK-2", 1)], 5);
    let store = rig.store().await;
    let frames = store.frames(sid).await.unwrap();
    assert_eq!(frames.len(), 3);
    for child in &frames[1..] {
        let call = store.tool_call(child.parent_tool_call_id.unwrap()).await.unwrap();
        assert_eq!(call.status().unwrap(), ToolStatus::Cancelled, "{call:?}");
        assert!(child.terminated_at.is_some());
    }
    rig.fake.wait_in_flight(0).await;
}

#[tokio::test]
async fn a_child_asks_the_user_and_the_answer_reaches_it() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![delegate("scout", "TASK-Q: pick a file")]));
    let ask = json!({ "title": "Which file?", "question": "a or b?" });
    rig.fake
        .push_for_prompt("TASK-Q", Reply::tool_call("ask_user_clarification", &ask.to_string()));
    rig.fake.push_for_prompt("TASK-Q", Reply::text("picked b"));
    rig.fake.push(Reply::text("The scout picked b."));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "choose", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    let question = loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap().unwrap();
        if let Event::AgentQuestion { tool_call_id, .. } = ev.event {
            assert_eq!(ev.frame.as_ref().unwrap().depth, 1, "asked from the child frame");
            break tool_call_id;
        }
    };
    let inbox = rig.engine.inbox().await.unwrap();
    let item = &inbox.questions[0];
    assert_eq!(item.tool_call_id, question);
    let store = rig.store().await;
    let child = store.frames(sid).await.unwrap()[1].clone();
    assert_eq!(item.frame_label.as_deref(), Some(format!("scout#{}", child.id).as_str()));
    rig.engine.answer(question, "b", "web").await.unwrap();
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-Q", 1)], 5);
    assert_eq!(last_tool_results(&rig.fake), ["picked b"]);
}

/// A session a process died in while sub-agent `scout` (frame at depth 1) ran: the root's
/// delegation call and the child's `read_file` call are both `running`.
async fn crashed_in_child(rig: &Rig) -> (i64, i64, i64) {
    crashed_in_child_with(rig, "read_file", json!({ "path": "notes.txt" })).await
}

/// [`crashed_in_child`] with the child's running call `name(args)`.
async fn crashed_in_child_with(rig: &Rig, name: &str, args: Value) -> (i64, i64, i64) {
    let delegation = json!({ "mode": "sync", "agent_id": "scout", "prompt": "TASK-R: read notes" });
    crashed_delegation(rig, delegation, name, args).await
}

/// [`crashed_in_child_with`] where the root's running delegation call had `delegation` as its
/// arguments.
async fn crashed_delegation(
    rig: &Rig,
    delegation: Value,
    name: &str,
    args: Value,
) -> (i64, i64, i64) {
    std::fs::write(rig.work.join("notes.txt"), "hello\n").unwrap();
    let sid = rig.engine.new_session(SOURCE).await.unwrap();
    let workdir = Some(rig.work.display().to_string());
    let rc = skald_protocol::RunContext { working_directory: workdir, ..Default::default() };
    rig.engine.set_run_context(sid, Some(rc)).await.unwrap();
    let store = rig.store().await;
    let root = store.root_frame(sid).await.unwrap().id;
    let msg = |stack_id, role, content: &str| NewMessage {
        stack_id,
        role,
        content: content.into(),
        ..Default::default()
    };
    store.append_message(&msg(root, Some(Role::User), "ask the scout")).await.unwrap();
    let call = ("execute_task".to_string(), delegation.to_string(), None);
    let (_, ids) = store.append_assistant_with_calls(&msg(root, None, ""), &[call]).await.unwrap();
    store.start_tool_call(ids[0]).await.unwrap();
    let child =
        store.create_child_frame(sid, "scout", "You are the scout.", 1, ids[0]).await.unwrap();
    store.append_message(&msg(child, Some(Role::Agent), "TASK-R: read notes")).await.unwrap();
    let read = (name.to_string(), args.to_string(), None);
    let (_, child_ids) =
        store.append_assistant_with_calls(&msg(child, None, ""), &[read]).await.unwrap();
    store.start_tool_call(child_ids[0]).await.unwrap();
    (sid, ids[0], child)
}

#[tokio::test]
async fn resume_after_a_crash_in_a_child_settles_it_then_continues_the_parent() {
    let rig = rig("").await;
    let (sid, parent_call, child) = crashed_in_child(&rig).await;
    // A tool group the child activated: scoped to its frame, it ends with the frame.
    rig.store().await.grant_stack_tool_group(child, "config").await.unwrap();
    rig.fake.push_for_prompt("TASK-R", Reply::text("notes say hello"));
    rig.fake.push(Reply::text("The notes say hello."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "The notes say hello.")
    );
    check_tools(&rig.fake, &[("TASK-R", 1)], 5);
    // The child saw its re-run read (read-only, so safe to repeat), the parent its answer.
    let requests = rig.fake.requests();
    let child_body = &requests[0].body;
    assert!(child_body.to_string().contains("hello"), "{child_body}");
    assert_eq!(last_tool_results(&rig.fake), ["notes say hello"]);
    let store = rig.store().await;
    assert_eq!(store.tool_call(parent_call).await.unwrap().status().unwrap(), ToolStatus::Done);
    assert!(store.frame(child).await.unwrap().terminated_at.is_some());
    assert!(store.stack_tool_groups(child).await.unwrap().is_empty(), "grants end with the frame");
}

/// Found by the kill harness: a process killed after it opened a child frame and before it stored
/// the child's task left an empty frame, and resume failed the child ("no messages to resume").
#[tokio::test]
async fn resume_gives_a_child_frame_opened_just_before_the_crash_its_task() {
    let rig = rig("").await;
    let sid = rig.engine.new_session(SOURCE).await.unwrap();
    let store = rig.store().await;
    let root = store.root_frame(sid).await.unwrap().id;
    let user = NewMessage {
        stack_id: root,
        role: Some(Role::User),
        content: "ask the scout".into(),
        ..Default::default()
    };
    store.append_message(&user).await.unwrap();
    let call = (
        "execute_task".to_string(),
        json!({ "mode": "sync", "agent_id": "scout", "prompt": "TASK-E: look around" }).to_string(),
        None,
    );
    let empty = NewMessage { stack_id: root, ..Default::default() };
    let (_, ids) = store.append_assistant_with_calls(&empty, &[call]).await.unwrap();
    store.start_tool_call(ids[0]).await.unwrap();
    let child =
        store.create_child_frame(sid, "scout", "You are the scout.", 1, ids[0]).await.unwrap();
    rig.fake.push_for_prompt("TASK-E", Reply::text("all quiet"));
    rig.fake.push(Reply::text("The scout says all quiet."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "The scout says all quiet."),
        "{outcome:?}"
    );
    check_tools(&rig.fake, &[("TASK-E", 1)], 5);
    assert_eq!(first_text(&rig.fake.requests()[0].body), "TASK-E: look around");
    assert_eq!(last_tool_results(&rig.fake), ["all quiet"]);
    assert_eq!(store.tool_call(ids[0]).await.unwrap().status().unwrap(), ToolStatus::Done);
    assert_eq!(store.frames(sid).await.unwrap().len(), 2, "the frame is reused, not opened again");
    assert!(store.frame(child).await.unwrap().terminated_at.is_some());
}

#[tokio::test]
async fn resume_seeds_the_parent_from_a_child_that_finished_before_the_crash() {
    let rig = rig("").await;
    let (sid, parent_call, child) = crashed_in_child(&rig).await;
    let store = rig.store().await;
    // The child's read finished and so did the child; the crash came before the parent heard.
    let read = store.open_tool_calls_for_stack(child).await.unwrap()[0].id;
    store.set_tool_status(read, ToolStatus::Done, Some("hello")).await.unwrap();
    let answer = NewMessage {
        stack_id: child,
        role: Some(Role::Assistant),
        content: "it says hello".into(),
        ..Default::default()
    };
    store.append_message(&answer).await.unwrap();
    store.terminate_frame(child).await.unwrap();
    rig.fake.push(Reply::text("Hello it is."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(rig.fake.requests().len(), 1, "the child is not asked again");
    check_tools(&rig.fake, &[], 5);
    assert_eq!(last_tool_results(&rig.fake), ["it says hello"]);
    let call = store.tool_call(parent_call).await.unwrap();
    assert_eq!(call.status().unwrap(), ToolStatus::Done);
}

#[tokio::test]
async fn a_child_parked_for_approval_resumes_through_the_cascade() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![delegate("scout", "TASK-W: write it")]));
    let write = json!({ "path": "out.txt", "content": "hi\n" }).to_string();
    rig.fake.push_for_prompt("TASK-W", Reply::tool_call("write_file", &write));
    rig.fake.push_for_prompt("TASK-W", Reply::text("written"));
    rig.fake.push(Reply::text("The scout wrote it."));
    let opts = skald_core::engine::ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message(SOURCE, "write", opts).await.unwrap();
    let sid = receipt.session_id;
    let (_, outcome) = finish(&rig.engine, receipt).await;
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("{outcome:?}") };
    let inbox = rig.engine.inbox().await.unwrap();
    assert_eq!(inbox.items.len(), 1);
    let item = &inbox.items[0];
    assert_eq!(tool_call_ids, [item.tool_call_id], "the child's call is what waits");
    let store = rig.store().await;
    let child = store.frames(sid).await.unwrap()[1].clone();
    assert_eq!(item.frame_label.as_deref(), Some(format!("scout#{}", child.id).as_str()));
    let decision = skald_protocol::DecisionInput { approved: true, note: None, bypass: None };
    rig.engine.decide(item.tool_call_id, decision, "web").await.unwrap();
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(std::fs::read_to_string(rig.work.join("out.txt")).unwrap(), "hi\n");
    check_tools(&rig.fake, &[("TASK-W", 1)], 5);
    assert_eq!(last_tool_results(&rig.fake), ["written"]);
}

#[tokio::test]
async fn a_question_from_a_child_survives_a_restart_and_is_answered_from_the_inbox() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![delegate("scout", "TASK-Q: pick")]));
    let ask = json!({ "title": "Which?", "question": "a or b?" });
    rig.fake
        .push_for_prompt("TASK-Q", Reply::tool_call("ask_user_clarification", &ask.to_string()));
    let opts = skald_core::engine::ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message(SOURCE, "choose", opts).await.unwrap();
    let sid = receipt.session_id;
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");
    // Another engine on the same data dir (a restart) still lists it, named by its sub-agent.
    let env = super::turn::fake_env(&rig.fake);
    let restarted = super::turn::open_engine(&rig.data_dir(), env).await;
    let inbox = restarted.inbox().await.unwrap();
    assert_eq!(inbox.questions.len(), 1);
    let q = &inbox.questions[0];
    assert!(q.frame_label.as_deref().is_some_and(|l| l.starts_with("scout#")), "{q:?}");
    restarted.answer(q.tool_call_id, "b", "cli").await.unwrap();
    rig.fake.push_for_prompt("TASK-Q", Reply::text("picked b"));
    rig.fake.push(Reply::text("b it is"));
    let outcome = restarted.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-Q", 1)], 5);
    assert_eq!(last_tool_results(&rig.fake), ["picked b"]);
    assert_eq!(restarted.inbox().await.unwrap().total, 0);
}

/// A crash while two children of one batch ran: both delegation calls `running`, each child
/// frame open with its prompt.
async fn crashed_batch(rig: &Rig) -> (i64, Vec<i64>) {
    crashed_batch_started(rig, true).await
}

/// [`crashed_batch`], or (`started` false) a crash right after the reply was stored, before
/// either delegation started.
async fn crashed_batch_started(rig: &Rig, started: bool) -> (i64, Vec<i64>) {
    let sid = rig.engine.new_session(SOURCE).await.unwrap();
    let store = rig.store().await;
    let root = store.root_frame(sid).await.unwrap().id;
    let msg = |stack_id, role, content: &str| NewMessage {
        stack_id,
        role,
        content: content.into(),
        ..Default::default()
    };
    store.append_message(&msg(root, Some(Role::User), "fan out")).await.unwrap();
    let call = |prompt: &str| {
        let args = json!({ "mode": "sync", "agent_id": "scout", "prompt": prompt });
        ("execute_task".to_string(), args.to_string(), None)
    };
    let calls = [call("TASK-1: one"), call("TASK-2: two")];
    let (_, ids) = store.append_assistant_with_calls(&msg(root, None, ""), &calls).await.unwrap();
    for (id, prompt) in ids.iter().zip(["TASK-1: one", "TASK-2: two"]) {
        if !started {
            break;
        }
        store.start_tool_call(*id).await.unwrap();
        let child =
            store.create_child_frame(sid, "scout", "You are the scout.", 1, *id).await.unwrap();
        store.append_message(&msg(child, Some(Role::Agent), prompt)).await.unwrap();
    }
    (sid, ids)
}

#[tokio::test]
async fn resume_continues_every_child_of_an_interrupted_batch() {
    let rig = rig("").await;
    let (sid, ids) = crashed_batch(&rig).await;
    rig.fake.push_for_prompt("TASK-1", Reply::Stall { ms: 300, then_hang: false });
    rig.fake.push_for_prompt("TASK-1", Reply::text("one done"));
    rig.fake.push_for_prompt("TASK-2", Reply::text("two done"));
    rig.fake.push(Reply::text("both done"));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-1", 1), ("TASK-2", 1)], 5);
    assert_eq!(last_tool_results(&rig.fake), ["one done", "two done"]);
    let store = rig.store().await;
    for id in ids {
        assert_eq!(store.tool_call(id).await.unwrap().status().unwrap(), ToolStatus::Done);
    }
    assert!(store.frames(sid).await.unwrap()[1..].iter().all(|f| f.terminated_at.is_some()));
}

#[tokio::test]
async fn one_parallel_sub_agent_at_a_time_runs_a_batch_in_call_order() {
    let rig = rig("llm:\n  max_parallel_subagents: 1\n").await;
    rig.fake.push(Reply::tool_calls(vec![
        delegate("scout", "TASK-1: first"),
        delegate("coder", "TASK-2: second"),
    ]));
    rig.fake.push_for_prompt("TASK-1", Reply::Stall { ms: 200, then_hang: false });
    rig.fake.push_for_prompt("TASK-1", Reply::text("first"));
    rig.fake.push_for_prompt("TASK-2", Reply::text("second"));
    rig.fake.push(Reply::text("done"));
    let (_, outcome, _) = rig.turn("two tasks").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-1", 1), ("TASK-2", 1)], 5);
    // The second child asked only after the first one finished.
    let order: Vec<String> = rig.fake.requests().iter().map(|r| first_text(&r.body)).collect();
    assert!(order[1].contains("TASK-1") && order[2].contains("TASK-2"), "{order:?}");
}

#[tokio::test]
async fn siblings_share_the_scratchpad_and_the_last_write_of_a_key_wins() {
    let rig = rig("").await;
    rig.fake.push(Reply::tool_calls(vec![
        delegate("scout", "TASK-1: note early"),
        delegate("coder", "TASK-2: note late"),
    ]));
    let note = |v: &str| json!({ "key": "finding", "value": v }).to_string();
    rig.fake.push_for_prompt("TASK-1", Reply::tool_call("update_scratchpad", &note("early")));
    rig.fake.push_for_prompt("TASK-1", Reply::text("noted early"));
    rig.fake.push_for_prompt("TASK-2", Reply::Stall { ms: 300, then_hang: false });
    rig.fake.push_for_prompt("TASK-2", Reply::tool_call("update_scratchpad", &note("late")));
    rig.fake.push_for_prompt("TASK-2", Reply::text("noted late"));
    rig.fake.push(Reply::text("done"));
    let (sid, outcome, _) = rig.turn("take notes").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-1", 1), ("TASK-2", 1)], 5);
    let pad = rig.store().await.scratchpad(sid).await.unwrap();
    let finding: Vec<_> = pad.iter().filter(|(k, _)| k == "finding").collect();
    assert_eq!(finding, [&("finding".to_string(), "late".to_string())]);
}

#[tokio::test]
async fn a_command_a_crash_cut_off_in_a_child_is_flagged_not_rerun_and_the_tree_finishes() {
    let rig = rig("").await;
    let cmd = json!({ "command": "echo once >> effect.txt" });
    let (sid, parent_call, _) = crashed_in_child_with(&rig, "execute_cmd", cmd).await;
    rig.fake.push_for_prompt("TASK-R", Reply::text("the command may have run"));
    rig.fake.push(Reply::text("Check effect.txt."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-R", 1)], 5);
    assert!(!rig.work.join("effect.txt").exists(), "never re-run by itself");
    let flagged = rig.engine.interrupted_calls(sid).await.unwrap();
    assert_eq!(flagged.len(), 1, "the child's command is flagged: {flagged:?}");
    let child_request = rig.fake.requests()[0].body.to_string();
    assert!(child_request.contains("the run stopped before"), "{child_request}");
    let store = rig.store().await;
    assert_eq!(store.tool_call(parent_call).await.unwrap().status().unwrap(), ToolStatus::Done);
}

#[tokio::test]
async fn resume_gates_and_runs_a_batch_that_never_started() {
    let rig = rig("").await;
    let (sid, ids) = crashed_batch_started(&rig, false).await;
    rig.fake.push_for_prompt("TASK-1", Reply::text("one done"));
    rig.fake.push_for_prompt("TASK-2", Reply::text("two done"));
    rig.fake.push(Reply::text("both done"));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-1", 1), ("TASK-2", 1)], 5);
    assert_eq!(last_tool_results(&rig.fake), ["one done", "two done"]);
    let store = rig.store().await;
    let frames = store.frames(sid).await.unwrap();
    let parents: Vec<Option<i64>> = frames[1..].iter().map(|f| f.parent_tool_call_id).collect();
    assert_eq!(parents, ids.iter().map(|id| Some(*id)).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_sub_agents_reply_carries_what_the_provider_charged_live_and_in_the_tree() {
    let rig = rig("").await;
    let priced = |content: &str, cost: f64| Reply::Text {
        content: content.into(),
        reasoning: None,
        usage: Some(skald_testkit::Usage {
            prompt_tokens: 30,
            completion_tokens: 5,
            cost: Some(cost),
        }),
    };
    rig.fake.push(Reply::tool_calls(vec![delegate("scout", "TASK-C: price it")]));
    rig.fake.push_for_prompt("TASK-C", priced("It costs 3.", 0.0125));
    rig.fake.push(priced("The scout says 3.", 0.5));
    let mut rx = rig.engine.subscribe();
    let (sid, outcome, _) = rig.turn("ask the scout").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    check_tools(&rig.fake, &[("TASK-C", 1)], 5);

    let done: Vec<(u32, Option<f64>)> = drain(&mut rx, sid)
        .into_iter()
        .filter_map(|e| match e.event {
            Event::Done { cost_usd, .. } => Some((e.frame.unwrap().depth, cost_usd)),
            _ => None,
        })
        .collect();
    assert_eq!(done, [(1, Some(0.0125)), (0, Some(0.5))], "each frame's answer says its own cost");

    let tree = rig.engine.session_detail(sid).await.unwrap();
    let costs: Vec<(u32, Option<f64>)> = tree
        .messages
        .iter()
        .filter_map(|m| match m {
            skald_protocol::DebugMessage::Assistant { depth, cost_usd, .. } => {
                Some((*depth, *cost_usd))
            }
            _ => None,
        })
        .collect();
    assert_eq!(costs, [(1, Some(0.0125)), (0, Some(0.5))], "and so do the rows read back");
}

/// The model each request went to, in order.
fn models_asked(fake: &FakeLlm) -> Vec<String> {
    fake.requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A delegation that names a client runs the child on it (the parent keeps its own), offered as
/// a choice of the configured clients; an unknown one is a tool error that names them.
#[tokio::test(flavor = "multi_thread")]
async fn a_delegation_runs_the_child_on_the_client_it_names() {
    let rig = Rig::two_models().await;
    task_agent(&rig, "scout");
    let delegate = |client: &str| {
        let args = json!({ "mode": "sync", "agent_id": "scout", "prompt": "TASK-M: look", "client": client });
        Reply::tool_calls(vec![ScriptedToolCall::new("execute_task", &args.to_string())])
    };
    rig.fake.push_for_model("fake-model", delegate("backup"));
    rig.fake.push_for_model("fake-model-2", Reply::text("seen from the backup"));
    rig.fake.push_for_model("fake-model", delegate("nope"));
    rig.fake.push_for_model("fake-model", Reply::text("The scout saw it from the backup."));
    let (_, outcome, _) = rig.turn("look with the other model").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(models_asked(&rig.fake), ["fake-model", "fake-model-2", "fake-model", "fake-model"]);
    let results = last_tool_results(&rig.fake);
    assert_eq!(
        results,
        [
            "seen from the backup",
            // The offered schema lists the clients, so the call is refused before it is gated.
            "Error: invalid arguments: at `/client`: \"nope\" is not one of \"primary\" or \
             \"backup\". Call `execute_task` again."
        ]
    );
    let parent = &rig.fake.requests()[0].body;
    let def = parent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "execute_task")
        .unwrap();
    let client = &def["function"]["parameters"]["properties"]["client"];
    assert_eq!(client["enum"], json!(["primary", "backup"]), "{def}");
    check_tools(&rig.fake, &[("TASK-M", 1)], 5);
}

/// A child cut off by a crash continues on the client its delegation named.
#[tokio::test]
async fn a_child_resumed_after_a_crash_keeps_the_client_its_delegation_named() {
    let rig = Rig::two_models().await;
    task_agent(&rig, "scout");
    let delegation = json!({
        "mode": "sync", "agent_id": "scout", "prompt": "TASK-R: read notes", "client": "backup"
    });
    let (sid, _, _) =
        crashed_delegation(&rig, delegation, "read_file", json!({ "path": "notes.txt" })).await;
    rig.fake.push_for_model("fake-model-2", Reply::text("notes say hello"));
    rig.fake.push_for_model("fake-model", Reply::text("The notes say hello."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(models_asked(&rig.fake), ["fake-model-2", "fake-model"]);
}
