//! The engine owns its runtime: one lease holds a session for a turn or a compaction across
//! processes, `start_background` continues turns a dead process left, and `shutdown(grace)`
//! stops running turns so they record `cancelled`.

use std::time::{Duration, Instant};

use skald_core::EngineError;
use skald_core::error::Holder;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{ErrorCode, Event, TurnEnd};
use skald_testkit::{HANG_GUARD, Reply};

use super::turn::{Rig, fake_env, open_engine, wait_event};

const SOURCE: &str = "test";

fn busy_elsewhere(e: &EngineError) -> bool {
    matches!(e, EngineError::SessionBusy { holder: Holder::OtherProcess, .. })
}

/// A pid no process has any more (a child that ran and was reaped).
pub fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

async fn last_end(engine: &skald_core::Engine, sid: i64) -> Option<TurnEnd> {
    let ends = engine.session_detail(sid).await.unwrap().turn_ends;
    ends.last().map(|t| t.outcome.clone())
}

/// A rig whose session runs a turn the model never answers: only a stop ends it.
async fn hanging_turn() -> (Rig, i64) {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::Stall { ms: 60_000, then_hang: true });
    let receipt = rig.engine.send_message(SOURCE, "are you there?", rig.opts()).await.unwrap();
    rig.fake.wait_in_flight(1).await;
    (rig, receipt.session_id)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_holds_the_session_against_another_process() {
    // Automatic compaction stays off, so only the explicit compaction calls the summariser.
    let rig =
        Rig::new("llm:\n  compaction:\n    enabled: false\n    keep_recent_tokens: 300\n").await;
    std::fs::write(rig.work.join("big.txt"), "b".repeat(6_000)).unwrap();
    rig.fake.push(Reply::tool_call("read_file", r#"{"path":"big.txt"}"#));
    rig.fake.push(Reply::text("big read"));
    let (sid, first, _) = rig.turn("read big.txt").await;
    assert!(matches!(first, TurnOutcome::Final { .. }), "{first:?}");
    rig.fake.push(Reply::text("noted"));
    rig.turn("and now?").await;
    let before = rig.fake.requests().len();

    // The summariser never answers: the compaction holds the session until it is stopped.
    rig.fake.push(Reply::Stall { ms: 60_000, then_hang: true });
    let compacting = tokio::spawn({
        let engine = rig.engine.clone();
        async move { engine.compact_session(sid, None).await }
    });
    rig.fake.wait_in_flight(1).await;

    // Another process on the same data dir sees the session held and is refused.
    let other = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    assert!(other.is_running(sid).await.unwrap(), "the compaction holds the session");
    let err = other.compact_session(sid, None).await.unwrap_err();
    assert!(busy_elsewhere(&err), "{err:?}");
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(err.to_string().contains("another process"), "{err}");
    let err = other.resume(sid, ParkMode::Exit).await.unwrap_err();
    assert!(busy_elsewhere(&err), "{err:?}");
    // And so is a second one in the same process.
    let err = rig.engine.compact_session(sid, None).await.unwrap_err();
    assert!(matches!(err, EngineError::SessionBusy { holder: Holder::Here, .. }), "{err:?}");
    assert_eq!(rig.fake.requests().len(), before + 1, "only the holder reached the model");

    // A stop from the other process reaches the compaction through the session's runner row.
    assert!(other.stop(sid).await.unwrap());
    let ended = tokio::time::timeout(HANG_GUARD, compacting).await.unwrap().unwrap();
    assert_eq!(ended.unwrap_err().code(), ErrorCode::Cancelled);
    rig.fake.wait_in_flight(0).await;
    assert!(!other.is_running(sid).await.unwrap(), "released");

    // The other way round: while the other process runs a turn, the compaction is refused.
    rig.fake.push(Reply::Stall { ms: 60_000, then_hang: true });
    let receipt = other.send_message(SOURCE, "take your time", rig.opts()).await.unwrap();
    assert!(!receipt.steered);
    rig.fake.wait_in_flight(1).await;
    let err = rig.engine.compact_session(sid, None).await.unwrap_err();
    assert!(busy_elsewhere(&err), "{err:?}");
    assert!(other.stop(sid).await.unwrap());
    assert_eq!(other.wait_turn(sid).await, Some(TurnOutcome::Cancelled));
}

#[tokio::test(flavor = "multi_thread")]
async fn start_background_continues_a_turn_a_dead_process_left() {
    let (rig, sid) = hanging_turn().await;
    // The process dies here, mid-turn: its runner row stays behind, naming a pid that is gone.
    let dead = dead_pid();
    let sql = format!(
        "UPDATE session_runners SET runner = 'dead-runner', pid = {dead} WHERE session_id = {sid}"
    );
    super::write_unchecked(&rig.data_dir(), &sql).await;

    // The app opens again: nothing runs the session until its background starts.
    let app = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    rig.fake.push(Reply::text("Yes, still here."));
    let mut rx = app.subscribe();
    app.start_background();
    let ended = wait_event(&mut rx, |e| matches!(e, Event::TurnEnded { .. })).await;
    assert!(matches!(ended, Event::TurnEnded { outcome: TurnEnd::Final { .. } }), "{ended:?}");
    assert!(matches!(last_end(&app, sid).await, Some(TurnEnd::Final { .. })));
    // The continuation answered the prompt the dead process never got an answer to.
    let last = rig.fake.requests().last().unwrap().body.clone();
    assert!(last["messages"].to_string().contains("are you there?"), "{last}");
    // `turn_ended` goes out just before the run releases its lease: wait for the run itself.
    app.wait_turn(sid).await;
    assert!(!app.is_running(sid).await.unwrap(), "the continuation released the session");
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_stops_a_running_turn_which_records_cancelled_within_the_grace() {
    let (rig, sid) = hanging_turn().await;

    let started = Instant::now();
    let report = rig.engine.shutdown(Duration::from_secs(20)).await;
    assert!(report.aborted.is_empty(), "the turn stopped by itself: {report:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(rig.engine.wait_turn(sid).await, Some(TurnOutcome::Cancelled));
    assert_eq!(last_end(&rig.engine, sid).await, Some(TurnEnd::Cancelled {}));
    rig.fake.wait_in_flight(0).await;

    // No new work starts; another process finds the session free.
    let err = rig.engine.send_message(SOURCE, "one more", rig.opts()).await.unwrap_err();
    assert!(matches!(err, EngineError::ShuttingDown), "{err:?}");
    let other = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    assert!(!other.is_running(sid).await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_still_running_when_the_grace_is_over_is_dropped_and_recorded_cancelled() {
    let (rig, sid) = hanging_turn().await;

    let report = rig.engine.shutdown(Duration::ZERO).await;
    assert_eq!(report.aborted, [sid]);
    assert_eq!(rig.engine.wait_turn(sid).await, Some(TurnOutcome::Cancelled));
    assert_eq!(last_end(&rig.engine, sid).await, Some(TurnEnd::Cancelled {}));
    let other = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    assert!(!other.is_running(sid).await.unwrap(), "the dropped turn's session was released");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_turn_a_dead_process_held_is_not_run_again() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::text("All done."));
    let (sid, outcome, _) = rig.turn("finish this").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    // A process died holding the finished session (a compaction cut off, say).
    let sql = format!(
        "INSERT INTO session_runners (session_id, runner, pid, started_at, heartbeat_at) \
         VALUES ({sid}, 'dead-runner', {}, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
        dead_pid()
    );
    super::write_unchecked(&rig.data_dir(), &sql).await;
    let ends = rig.engine.session_detail(sid).await.unwrap().turn_ends.len();

    let app = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    app.start_background();
    // The dead row goes; nothing asks the model again and no second end is recorded.
    let store = rig.store().await;
    let deadline = Instant::now() + HANG_GUARD;
    let no_one_alive = |_: &skald_store::repo::instances::InstanceBeat| false;
    while !store.abandoned_runners("", &no_one_alive).await.unwrap().is_empty()
        || app.is_running(sid).await.unwrap()
    {
        assert!(Instant::now() < deadline, "the dead row stayed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.session_detail(sid).await.unwrap().turn_ends.len(), ends);
    assert_eq!(rig.fake.requests().len(), 1);
}

/// The background is a set of named services, each reporting its health, all stopped by
/// `shutdown`.
#[tokio::test(flavor = "multi_thread")]
async fn the_background_services_report_their_health_and_stop_with_the_engine() {
    let rig = Rig::new("").await;
    assert!(rig.engine.services().is_empty(), "nothing runs before start_background");
    rig.engine.start_background();
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let services = rig.engine.services();
        let names: Vec<&str> = services.iter().map(|s| s.name).collect();
        let worked = services.iter().any(|s| s.name == "worker" && s.passes > 0);
        if names == ["briefings", "mcp keeper", "prune", "reclaim", "scheduler", "tic", "worker"]
            && services.iter().all(|s| s.running)
            && worked
        {
            break;
        }
        assert!(Instant::now() < deadline, "services never came up: {services:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    rig.engine.shutdown(Duration::from_secs(5)).await;
    let services = rig.engine.services();
    assert!(services.iter().all(|s| !s.running && s.last_error.is_none()), "{services:?}");
}
