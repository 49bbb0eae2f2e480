//! A decision recorded while no turn is live continues the turn by itself when the engine runs
//! its background (`start_background`: the app, `skald serve`) — also when another process wrote
//! the decision.

use std::sync::Arc;

use skald_core::config::{EnvOverrides, MemorySecrets};
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_core::{Engine, EngineOptions};
use skald_protocol::{DecisionInput, Event, EventEnvelope, RunContext};
use skald_testkit::{FakeLlm, HANG_GUARD, Reply};
use tokio::sync::broadcast;

/// An engine on `data` with the fake as its model; with `background` running as the app and
/// `serve` run it.
pub async fn open(data: &std::path::Path, fake: &FakeLlm, background: bool) -> Engine {
    open_at(data, fake, None, background).await
}

/// `open` with the engine's clock (`None`: the wall clock).
pub async fn open_at(
    data: &std::path::Path,
    fake: &FakeLlm,
    clock: Option<Arc<dyn skald_store::Clock>>,
    background: bool,
) -> Engine {
    let engine = Engine::open(EngineOptions {
        data_dir: Some(data.to_path_buf()),
        env: Some(EnvOverrides {
            base_url: Some(fake.base_url()),
            model: Some("fake-model".into()),
            api_key: None,
        }),
        secrets: Some(Arc::new(MemorySecrets::default())),
        clock,
        ..Default::default()
    })
    .await
    .unwrap();
    if background {
        engine.start_background();
    }
    engine
}

fn approve() -> DecisionInput {
    DecisionInput { approved: true, note: None, bypass: None }
}

/// Waits for the resumed turn's final answer (after the approved write ran).
async fn wait_for_answer(events: &mut broadcast::Receiver<EventEnvelope>) -> String {
    let answer = async {
        loop {
            if let Event::Done { content, .. } = events.recv().await.unwrap().event {
                return content;
            }
        }
    };
    tokio::time::timeout(HANG_GUARD, answer).await.expect("the turn never finished")
}

async fn park_a_write(engine: &Engine, fake: &FakeLlm, work: &std::path::Path) -> i64 {
    fake.push(Reply::tool_call("write_file", r#"{"path":"out.txt","content":"done\n"}"#));
    fake.push(Reply::text("Wrote out.txt."));
    let opts = ChatOptions {
        park_mode: ParkMode::Exit,
        workdir: Some(work.to_path_buf()),
        ..Default::default()
    };
    let receipt = engine.send_message("web", "write out.txt", opts).await.unwrap();
    let outcome = engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");
    receipt.session_id
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_with_no_live_turn_continues_it_in_an_auto_resuming_engine() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let engine = open(&dir.path().join("data"), &fake, true).await;
    park_a_write(&engine, &fake, &work).await;
    let mut events = engine.subscribe();
    let decision = engine.decide(1, approve(), "test").await.unwrap();
    assert!(decision.resumed, "the engine should continue the turn itself");
    assert_eq!(wait_for_answer(&mut events).await, "Wrote out.txt.");
    assert_eq!(std::fs::read_to_string(work.join("out.txt")).unwrap(), "done\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_written_by_another_process_is_picked_up_by_the_poller() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let app = open(&data, &fake, true).await;
    park_a_write(&app, &fake, &work).await;
    let mut events = app.subscribe();
    // "Another process": a second engine on the same database, like `skald approve`.
    let cli = open(&data, &fake, false).await;
    let decision = cli.decide(1, approve(), "cli").await.unwrap();
    // The app runs the background: the decision's continuation is its to claim.
    assert!(decision.resumed, "a live engine with the background continues the turn");
    assert_eq!(wait_for_answer(&mut events).await, "Wrote out.txt.");
    assert_eq!(std::fs::read_to_string(work.join("out.txt")).unwrap(), "done\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn run_context_updates_apply_to_the_next_turn() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    let engine = open(&dir.path().join("data"), &fake, false).await;
    fake.push(Reply::text("hello"));
    let receipt = engine.send_message("web", "hi", ChatOptions::default()).await.unwrap();
    engine.wait_turn(receipt.session_id).await.unwrap();
    let rc = RunContext {
        working_directory: Some(work.display().to_string()),
        system_prompt: vec!["Answer in French.".into()],
        allow_fs_writes: vec!["src".into()],
        ..Default::default()
    };
    engine.set_run_context(receipt.session_id, Some(rc.clone())).await.unwrap();
    assert_eq!(engine.run_context(receipt.session_id).await.unwrap(), rc);
    // Pre-authorised: the write under src/ runs without parking.
    fake.push(Reply::tool_call("write_file", r#"{"path":"src/lib.rs","content":"// ok\n"}"#));
    fake.push(Reply::text("done"));
    let receipt = engine.send_message("web", "write", ChatOptions::default()).await.unwrap();
    let outcome = engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert!(work.join("src/lib.rs").is_file());
    let last = fake.requests().last().unwrap().body.clone();
    let text = last["messages"].to_string();
    assert!(
        text.contains("Answer in French.") && text.contains(&work.display().to_string()),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bypass_granted_with_an_approval_applies_where_the_turn_runs() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let runner = open(&data, &fake, false).await;
    fake.push(Reply::tool_call("write_file", r#"{"path":"one.txt","content":"1\n"}"#));
    fake.push(Reply::tool_call("write_file", r#"{"path":"two.txt","content":"2\n"}"#));
    fake.push(Reply::tool_call("execute_cmd", r#"{"command":"true"}"#));
    let opts = ChatOptions {
        park_mode: ParkMode::Exit,
        workdir: Some(work.clone()),
        ..Default::default()
    };
    let receipt = runner.send_message("web", "write two files", opts).await.unwrap();
    let parked = runner.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(parked, TurnOutcome::Parked { .. }));
    // Another process approves with a 1-hour filesystem bypass.
    let cli = open(&data, &fake, false).await;
    cli.decide(
        1,
        DecisionInput {
            bypass: Some(skald_protocol::BypassRequest {
                duration: skald_protocol::BypassDuration::OneHour,
                scope: Some(skald_protocol::BypassScopeKind::Category),
            }),
            ..approve()
        },
        "cli",
    )
    .await
    .unwrap();
    let outcome = runner.resume(receipt.session_id, ParkMode::Exit).await.unwrap();
    // The second write ran without asking; the shell command is another category and parks.
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");
    assert!(work.join("one.txt").is_file() && work.join("two.txt").is_file());
    let inbox = runner.inbox().await.unwrap();
    assert_eq!(
        inbox.items.iter().map(|i| i.tool_name.as_str()).collect::<Vec<_>>(),
        ["execute_cmd"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_clarification_question_waits_in_the_inbox_and_its_answer_reaches_the_model() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let engine = open(&data, &fake, false).await;
    fake.push(Reply::tool_call(
        "ask_user_clarification",
        r#"{"title":"Which file?","question":"Edit **a.txt** or b.txt?","suggested_answers":["a.txt","b.txt"]}"#,
    ));
    fake.push(Reply::text("Editing b.txt then."));
    let opts = ChatOptions { park_mode: ParkMode::Exit, ..Default::default() };
    let receipt = engine.send_message("web", "fix the file", opts).await.unwrap();
    let parked = engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(parked, TurnOutcome::Parked { .. }));
    let inbox = engine.inbox().await.unwrap();
    assert_eq!((inbox.total, inbox.items.len(), inbox.questions.len()), (1, 0, 1));
    let q = &inbox.questions[0];
    assert_eq!((q.title.as_str(), q.suggested_answers.len()), ("Which file?", 2));
    // Answered from another process; a different second answer is refused.
    let other = open(&data, &fake, false).await;
    let a = other.answer(q.tool_call_id, "b.txt", "cli").await.unwrap();
    assert!(!a.resumed);
    let clash = other.answer(q.tool_call_id, "a.txt", "cli").await.unwrap_err();
    assert_eq!(clash.code(), skald_protocol::ErrorCode::Conflict);
    let outcome = engine.resume(receipt.session_id, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = fake.requests().last().unwrap().body.clone();
    let tool_answer = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .clone();
    assert_eq!(tool_answer, "b.txt");
    assert_eq!(engine.inbox().await.unwrap().total, 0);
}
