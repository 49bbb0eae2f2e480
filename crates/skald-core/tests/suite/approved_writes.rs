//! A write runs as it was approved: after the decision it is planned again against the file as
//! it is now, and it goes ahead only if its diff is still the one the human approved. A file
//! changed or deleted meanwhile is left alone and the model is told why.

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{DecisionInput, ToolStatus};
use skald_testkit::{Reply, ScriptedToolCall};

use crate::suite::turn::Rig;

/// Runs a turn whose model makes `call` (parked for approval), lets `meanwhile` touch the
/// files, approves, resumes; returns what the model was told about the call and its status.
async fn approve_after(
    rig: &Rig,
    call: serde_json::Value,
    meanwhile: impl FnOnce(),
) -> (String, ToolStatus) {
    let name = call["name"].as_str().unwrap().to_string();
    rig.fake.push(Reply::tool_calls(vec![ScriptedToolCall::new(&name, &call["args"].to_string())]));
    rig.fake.push(Reply::text("ok"));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message("test", "change it", opts).await.unwrap();
    let sid = receipt.session_id;
    let parked = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    let TurnOutcome::Parked { tool_call_ids } = parked else { panic!("not parked: {parked:?}") };
    meanwhile();
    let input = DecisionInput { approved: true, note: None, bypass: None };
    rig.engine.decide(tool_call_ids[0], input, "test").await.unwrap();
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().pop().unwrap();
    let told = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let status =
        rig.engine.session_detail(sid).await.unwrap().messages.iter().find_map(|m| match m {
            skald_protocol::DebugMessage::Tool { status, .. } => Some(*status),
            _ => None,
        });
    (told, status.unwrap())
}

#[tokio::test]
async fn an_overwrite_of_a_file_edited_after_the_approval_is_refused_and_the_edit_kept() {
    let rig = Rig::new("").await;
    let file = rig.work.join("notes.txt");
    std::fs::write(&file, "version one\n").unwrap();
    let call = json!({"name": "write_file", "args": {"path": "notes.txt", "content": "model\n"}});
    let (told, status) =
        approve_after(&rig, call, || std::fs::write(&file, "my own edit\n").unwrap()).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "my own edit\n");
    assert_eq!(status, ToolStatus::Failed);
    assert!(told.starts_with("Error:") && told.contains("notes.txt changed after"), "{told}");
    assert!(told.contains("nothing was written"), "{told}");
}

#[tokio::test]
async fn an_approved_overwrite_of_a_file_deleted_since_does_not_recreate_it() {
    let rig = Rig::new("").await;
    let file = rig.work.join("old.txt");
    std::fs::write(&file, "old\n").unwrap();
    let call = json!({"name": "write_file", "args": {"path": "old.txt", "content": "new\n"}});
    let (told, status) = approve_after(&rig, call, || std::fs::remove_file(&file).unwrap()).await;
    assert!(!file.exists(), "the deleted file was written again");
    assert_eq!(status, ToolStatus::Failed);
    assert!(told.contains("old.txt was deleted after"), "{told}");
}

#[tokio::test]
async fn an_edit_next_to_a_change_made_after_the_approval_is_refused() {
    let rig = Rig::new("").await;
    let file = rig.work.join("plan.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").unwrap();
    let call = json!({"name": "edit_file", "args": {"path": "plan.txt", "old": "two", "new": "2"}});
    let (told, status) =
        approve_after(&rig, call, || std::fs::write(&file, "one (done)\ntwo\nthree\n").unwrap())
            .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one (done)\ntwo\nthree\n");
    assert_eq!(status, ToolStatus::Failed);
    assert!(told.contains("plan.txt changed after"), "{told}");
}

#[tokio::test]
async fn an_edit_runs_when_the_file_changed_only_far_from_it() {
    let rig = Rig::new("").await;
    let file = rig.work.join("long.txt");
    let lines: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    std::fs::write(&file, &lines).unwrap();
    let call = json!({"name": "edit_file", "args": {"path": "long.txt", "old": "line 3\n", "new": "LINE 3\n"}});
    // A line added at the end, well outside the approved hunk: the same change still applies.
    let (told, status) = approve_after(&rig, call, || {
        std::fs::write(&file, format!("{lines}line 21\n")).unwrap();
    })
    .await;
    assert_eq!(status, ToolStatus::Done, "{told}");
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(now.contains("LINE 3\n") && now.ends_with("line 20\nline 21\n"), "{now}");
}
