//! Decision 3 end to end: a call a crash cut off while it ran is re-run on resume only when it is
//! read-only; any other gets the interrupted result and is flagged, and the user reconciles it
//! ("it ran", "it did not run", "run it again") with the model told at its next round while the
//! call keeps its one result.

use serde_json::{Value, json};
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{ErrorCode, Event, ReconcileChoice, RunContext, ToolStatus};
use skald_store::repo::history::{NewMessage, Role};
use skald_testkit::Reply;

use super::context::text_of;
use super::turn::Rig;

/// A session whose last reply asked for `calls`, each left `running` by a process that died.
pub async fn crashed_with(rig: &Rig, calls: &[(&str, Value)]) -> (i64, Vec<i64>) {
    crashed(rig, calls, true).await
}

/// As `crashed_with`; with `started` false the calls were stored but never reached the gate.
pub async fn crashed(rig: &Rig, calls: &[(&str, Value)], started: bool) -> (i64, Vec<i64>) {
    let sid = rig.engine.new_session("test").await.unwrap();
    let workdir = Some(rig.work.display().to_string());
    let rc = RunContext { working_directory: workdir, ..Default::default() };
    rig.engine.set_run_context(sid, Some(rc)).await.unwrap();
    let store = rig.store().await;
    let stack = store.root_frame(sid).await.unwrap().id;
    let user = NewMessage {
        stack_id: stack,
        role: Some(Role::User),
        content: "do it".into(),
        ..Default::default()
    };
    store.append_message(&user).await.unwrap();
    let reply = NewMessage { stack_id: stack, content: "On it.".into(), ..Default::default() };
    let specs: Vec<_> = calls.iter().map(|(n, a)| (n.to_string(), a.to_string(), None)).collect();
    let (_, ids) = store.append_assistant_with_calls(&reply, &specs).await.unwrap();
    for id in ids.iter().filter(|_| started) {
        store.start_tool_call(*id).await.unwrap();
    }
    (sid, ids)
}

/// Resumes the crashed session to its final answer.
async fn resume(rig: &Rig, sid: i64) {
    rig.fake.push(Reply::text("I will check first."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
}

/// The next user message's request: the tool results and the last user message the model gets.
async fn next_request(rig: &Rig, sid: i64) -> (Vec<(String, String)>, String) {
    rig.fake.push(Reply::text("Understood."));
    let receipt =
        rig.engine.send_message("test", "what now?", ChatOptions::default()).await.unwrap();
    assert_eq!(receipt.session_id, sid);
    rig.engine.wait_turn(receipt.session_id).await.unwrap();
    let body = rig.fake.requests().pop().unwrap().body;
    let messages = body["messages"].as_array().unwrap().clone();
    let results = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap().to_string(), text_of(m)))
        .collect();
    (results, text_of(messages.iter().rev().find(|m| m["role"] == "user").unwrap()))
}

#[tokio::test]
async fn resume_reruns_a_read_only_call_and_flags_a_command_for_the_user() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("notes.txt"), "hello\n").unwrap();
    let cmd = ("execute_cmd", json!({"command": "echo once >> effect.txt"}));
    let read = ("read_file", json!({"path": "notes.txt"}));
    let (sid, ids) = crashed_with(&rig, &[cmd, read]).await;
    let mut events = rig.engine.subscribe();
    resume(&rig, sid).await;

    let flagged = rig.engine.interrupted_calls(sid).await.unwrap();
    assert_eq!(flagged.len(), 1, "only the command is flagged: {flagged:?}");
    let call = &flagged[0];
    assert_eq!((call.tool_call_id, call.choice), (ids[0], None));
    assert_eq!(call.label, "execute_cmd echo once >> effect.txt");
    assert!(!rig.work.join("effect.txt").exists(), "the command is never re-run by itself");
    let store = rig.store().await;
    assert_eq!(store.tool_call(ids[1]).await.unwrap().status().unwrap(), ToolStatus::Done);
    let mut announced = false;
    while let Ok(e) = events.try_recv() {
        announced |=
            matches!(&e.event, Event::InterruptedCall { call } if call.tool_call_id == ids[0]);
    }
    assert!(announced, "clients are told the call is flagged");
}

#[tokio::test]
async fn it_ran_and_it_did_not_run_reach_the_model_once_and_are_set_once() {
    for (choice, told) in [
        (ReconcileChoice::Ran, "it did run, so its effects are in place"),
        (ReconcileChoice::DidNotRun, "it did not run and had no effect"),
    ] {
        let rig = Rig::new("").await;
        let cmd = ("execute_cmd", json!({"command": "make install"}));
        let (sid, ids) = crashed_with(&rig, &[cmd]).await;
        resume(&rig, sid).await;

        let call = rig.engine.reconcile_call(ids[0], choice, "web").await.unwrap();
        assert_eq!((call.choice, call.decided_by.as_deref()), (Some(choice), Some("web")));
        // The same word again changes nothing; another is refused.
        let again = rig.engine.reconcile_call(ids[0], choice, "cli").await.unwrap();
        assert_eq!(again, call);
        let other = if choice == ReconcileChoice::Ran {
            ReconcileChoice::DidNotRun
        } else {
            ReconcileChoice::Ran
        };
        let refused = rig.engine.reconcile_call(ids[0], other, "cli").await.unwrap_err();
        assert_eq!(refused.code(), ErrorCode::Conflict);
        let refused = rig.engine.reconcile_call(ids[0], ReconcileChoice::RunAgain, "cli").await;
        assert_eq!(refused.unwrap_err().code(), ErrorCode::Conflict);

        let (results, last_user) = next_request(&rig, sid).await;
        // The call keeps its one interrupted result; the note comes before the new message.
        assert_eq!(results.len(), 1, "{results:?}");
        assert!(results[0].1.starts_with("Error: the run stopped before"), "{results:?}");
        assert!(last_user.contains(told) && last_user.ends_with("what now?"), "{last_user}");
        assert!(last_user.contains(&format!("call_{}", ids[0])), "{last_user}");
    }
}

#[tokio::test]
async fn run_it_again_runs_the_call_once_and_the_model_gets_its_result() {
    let rig = Rig::new("").await;
    let cmd = ("execute_cmd", json!({"command": "echo again >> effect.txt; echo ran"}));
    let (sid, ids) = crashed_with(&rig, &[cmd]).await;
    resume(&rig, sid).await;

    // `execute_cmd` requires approval: the user's "run it again" is that decision.
    let call = rig.engine.reconcile_call(ids[0], ReconcileChoice::RunAgain, "web").await.unwrap();
    assert_eq!(call.choice, Some(ReconcileChoice::RunAgain));
    assert_eq!(call.rerun_status, Some(ToolStatus::Done));
    assert!(call.rerun_result.as_deref().unwrap().contains("ran"), "{call:?}");
    assert_eq!(std::fs::read_to_string(rig.work.join("effect.txt")).unwrap(), "again\n");
    let again = rig.engine.reconcile_call(ids[0], ReconcileChoice::RunAgain, "web").await;
    assert_eq!(again.unwrap(), call, "a repeat does not run it twice");
    assert_eq!(std::fs::read_to_string(rig.work.join("effect.txt")).unwrap(), "again\n");

    let (results, last_user) = next_request(&rig, sid).await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(last_user.contains("The user had it run again; it completed"), "{last_user}");
    assert!(last_user.contains("exit code 0") && last_user.contains("ran"), "{last_user}");
}

#[tokio::test]
async fn run_it_again_is_refused_when_a_rule_denies_the_call_and_the_flag_stays_open() {
    let rig = Rig::new("").await;
    let write = ("write_file", json!({"path": "secrets/key.txt", "content": "x"}));
    let (sid, ids) = crashed_with(&rig, &[write]).await;
    resume(&rig, sid).await;

    let refused = rig.engine.reconcile_call(ids[0], ReconcileChoice::RunAgain, "web").await;
    let err = refused.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().contains("deny"), "{err}");
    assert!(!rig.work.join("secrets/key.txt").exists());
    let open = rig.engine.interrupted_calls(sid).await.unwrap();
    assert_eq!(open[0].choice, None, "the user can still say whether it ran");
    let call = rig.engine.reconcile_call(ids[0], ReconcileChoice::DidNotRun, "web").await;
    assert_eq!(call.unwrap().choice, Some(ReconcileChoice::DidNotRun));
}

/// The inbox's list: flagged calls of every session until the user said what happened.
#[tokio::test]
async fn open_interrupted_calls_lists_every_sessions_flags_until_reconciled() {
    let rig = Rig::new("").await;
    assert!(rig.engine.open_interrupted_calls().await.unwrap().is_empty());
    let (first, a) = crashed_with(&rig, &[("execute_cmd", json!({"command": "make a"}))]).await;
    resume(&rig, first).await;
    // A second session crashed the same way.
    let (second, b) = crashed_with(&rig, &[("execute_cmd", json!({"command": "make b"}))]).await;
    resume(&rig, second).await;
    assert_ne!(first, second);

    let open = rig.engine.open_interrupted_calls().await.unwrap();
    let listed: Vec<(i64, i64, &str)> =
        open.iter().map(|c| (c.tool_call_id, c.session_id, c.label.as_str())).collect();
    assert_eq!(
        listed,
        [(a[0], first, "execute_cmd make a"), (b[0], second, "execute_cmd make b")],
        "oldest first, across sessions"
    );
    rig.engine.reconcile_call(a[0], ReconcileChoice::DidNotRun, "web").await.unwrap();
    let open = rig.engine.open_interrupted_calls().await.unwrap();
    assert_eq!(open.iter().map(|c| c.tool_call_id).collect::<Vec<_>>(), [b[0]]);
}
