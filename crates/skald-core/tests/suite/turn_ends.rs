//! Every way a turn ends, produced by a real turn against the strict fake provider: the typed
//! outcome is stored, read back with the session and sent as `turn_ended`, and every event of the
//! turn names the session's root frame it comes from. (A stop: `turn::stop_during_a_stalled_model_call_…`.)

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::ParkMode;
use skald_protocol::{ApprovalRequest, Event, EventEnvelope, FrameOrigin, TurnEnd};
use skald_testkit::{Reply, ScriptedToolCall};
use tokio::sync::broadcast;

use super::turn::{Rig, finish};

const SOURCE: &str = "test";

/// Every envelope of the session emitted so far.
fn envelopes(rx: &mut broadcast::Receiver<EventEnvelope>, sid: i64) -> Vec<EventEnvelope> {
    std::iter::from_fn(|| rx.try_recv().ok()).filter(|e| e.session_id == Some(sid)).collect()
}

/// Runs one turn with `opts`, checks that it ended `expected` everywhere, and returns its
/// envelopes.
async fn ended(rig: &Rig, opts: ChatOptions, expected: TurnEnd) -> Vec<EventEnvelope> {
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "go", opts).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    assert_eq!(outcome.end(), expected, "{outcome:?}");
    check(rig, &mut rx, sid, &expected).await
}

/// The stored end, the `turn_ended` event, and the root frame on every framed envelope.
async fn check(
    rig: &Rig,
    rx: &mut broadcast::Receiver<EventEnvelope>,
    sid: i64,
    expected: &TurnEnd,
) -> Vec<EventEnvelope> {
    let root = rig.store().await.root_frame(sid).await.unwrap().id;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let stored = detail.turn_ends.last().expect("no stored turn end");
    assert_eq!((&stored.outcome, stored.stack_id), (expected, root));
    let newest = detail.messages.iter().filter_map(message_id).max();
    assert_eq!(stored.after_message_id, newest, "placed after the newest row");

    let all = envelopes(rx, sid);
    let ended: Vec<_> = all.iter().filter(|e| matches!(e.event, Event::TurnEnded { .. })).collect();
    assert_eq!(ended.len(), 1, "{all:#?}");
    assert_eq!(ended[0].event, Event::TurnEnded { outcome: expected.clone() });
    for envelope in &all {
        let session_wide =
            matches!(envelope.event, Event::SessionsChanged {} | Event::BypassesChanged {});
        let expected_frame = (!session_wide).then(|| FrameOrigin::root(root));
        assert_eq!(envelope.frame, expected_frame, "{:?}", envelope.event);
        assert_eq!(envelope.source.as_deref(), Some(SOURCE));
    }
    all
}

fn message_id(m: &skald_protocol::DebugMessage) -> Option<i64> {
    use skald_protocol::DebugMessage as M;
    match m {
        M::User { message_id, .. }
        | M::Thinking { message_id, .. }
        | M::Assistant { message_id, .. }
        | M::Tool { message_id, .. } => Some(*message_id),
        M::Agent { .. } | M::AgentEnd { .. } => None,
    }
}

#[tokio::test]
async fn a_final_answer_ends_final_with_its_message() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::text("All done."));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "go", rig.opts()).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let skald_core::turn::TurnOutcome::Final { message_id, .. } = outcome else {
        panic!("{outcome:?}")
    };
    let all = check(&rig, &mut rx, sid, &TurnEnd::Final { message_id }).await;
    let kinds: Vec<_> = all.iter().map(|e| e.event.kind().as_str()).collect();
    let done = kinds.iter().position(|k| *k == "done").unwrap();
    assert_eq!(kinds[done + 1..], ["turn_ended", "turn_running"], "{kinds:?}");
}

#[tokio::test]
async fn the_round_limit_ends_exhausted() {
    let rig = Rig::new("llm:\n  max_tool_rounds: 1\n").await;
    let note = json!({"key": "k", "value": "v"}).to_string();
    rig.fake.push(Reply::tool_call("update_scratchpad", &note));
    // Asked once more with calls forbidden, the model calls a tool anyway.
    rig.fake.push(Reply::tool_call("update_scratchpad", &note));
    ended(&rig, rig.opts(), TurnEnd::Exhausted { rounds: 1 }).await;
}

#[tokio::test]
async fn an_unreachable_model_ends_failed_with_the_reason() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::Status { code: 503, times: 4, retry_after: Some(0), body: None });
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "hello?", rig.opts()).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let end = outcome.end();
    let TurnEnd::Failed { reason } = &end else { panic!("{outcome:?}") };
    assert!(reason.contains("503"), "{reason}");
    check(&rig, &mut rx, sid, &end).await;
}

/// A command and a write parked in one reply: the turn ends parked on both, and each request says
/// its kind with what a person reviews (the command and its directory; the file and its diff).
#[tokio::test]
async fn calls_waiting_for_a_human_end_parked_and_say_what_they_ask() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::tool_calls(vec![
        ScriptedToolCall::new("execute_cmd", &json!({"command": "ls -la"}).to_string()),
        ScriptedToolCall::new(
            "write_file",
            &json!({"path": "notes.txt", "content": "hi\n"}).to_string(),
        ),
    ]));
    let opts = ChatOptions { approve_all: false, park_mode: ParkMode::Exit, ..rig.opts() };
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "look and note", opts).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let end = outcome.end();
    let TurnEnd::Parked { tool_call_ids } = &end else { panic!("{outcome:?}") };
    assert_eq!(tool_call_ids.len(), 2);
    let all = check(&rig, &mut rx, sid, &end).await;
    let requests: Vec<_> = all
        .iter()
        .filter_map(|e| match &e.event {
            Event::ApprovalRequested { tool_call_id, request, .. } => {
                Some((*tool_call_id, request))
            }
            _ => None,
        })
        .collect();
    assert_eq!(requests.len(), 2, "{all:#?}");
    assert_eq!(requests[0].0, tool_call_ids[0]);
    assert_eq!(
        requests[0].1,
        &ApprovalRequest::Command {
            command: "ls -la".into(),
            workdir: rig.work.display().to_string()
        }
    );
    let ApprovalRequest::Write { path, diff } = requests[1].1 else { panic!("{:?}", requests[1]) };
    assert!(path.ends_with("notes.txt"), "{path}");
    assert_eq!((diff.added, diff.removed), (1, 0));
}
