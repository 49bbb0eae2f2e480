//! Events every process sees: two engines on one data dir (as `skald serve` and a `skald chat`
//! in a terminal), a client that resumes from a sequence, and a feed that fell behind.

use std::time::Duration;

use serde_json::json;
use skald_core::Engine;
use skald_core::events::{EventFeed, outboxed};
use skald_protocol::{Event, EventEnvelope};
use skald_testkit::Reply;

use super::turn::{Rig, drain, fake_env, open_engine};

/// The next event of `feed`, failing the test after a few seconds.
async fn next(feed: &mut EventFeed) -> EventEnvelope {
    tokio::time::timeout(Duration::from_secs(10), feed.recv())
        .await
        .expect("no event within 10 s")
        .expect("the feed closed")
}

/// Events of `feed` up to and including the first `turn_ended` of session `sid`.
async fn until_turn_ended(feed: &mut EventFeed, sid: i64) -> Vec<EventEnvelope> {
    let mut got = Vec::new();
    loop {
        let envelope = next(feed).await;
        let ended =
            envelope.session_id == Some(sid) && matches!(envelope.event, Event::TurnEnded { .. });
        got.push(envelope);
        if ended {
            return got;
        }
    }
}

/// One scratchpad call, then an answer (approve-all rig: nothing waits).
fn script_turn(rig: &Rig, answer: &str) {
    rig.fake.push(Reply::tool_call(
        "update_scratchpad",
        &json!({"key": "k", "value": "v"}).to_string(),
    ));
    rig.fake.push(Reply::text(answer));
}

/// Another engine on the rig's data dir, as another process would open it.
async fn second_engine(rig: &Rig) -> Engine {
    open_engine(&rig.data_dir(), fake_env(&rig.fake)).await
}

fn seqs(events: &[EventEnvelope]) -> Vec<i64> {
    events.iter().filter_map(|e| e.seq).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_run_by_one_engine_reaches_the_other_engines_feed_in_order_once() {
    let rig = Rig::new("").await;
    let other = second_engine(&rig).await;
    let mut feed = other.subscribe_feed(None).await.unwrap();
    let hello = next(&mut feed).await;
    assert_eq!(hello.event, Event::Subscribed {});
    assert_eq!(hello.seq, Some(0), "nothing was appended yet");

    script_turn(&rig, "Noted it.");
    let mut local = rig.engine.subscribe();
    let (sid, _, _) = rig.turn("remember k").await;
    let emitted: Vec<Event> =
        drain(&mut local, sid).into_iter().filter(|e| outboxed(e.kind())).collect();

    // The other engine's client sees exactly what this one emitted (token deltas stay here),
    // in the same order, each once, with consecutive sequences.
    let seen = until_turn_ended(&mut feed, sid).await;
    let mut seen_events: Vec<Event> = seen.iter().map(|e| e.event.clone()).collect();
    // `turn_running: false` follows `turn_ended`.
    seen_events.push(next(&mut feed).await.event);
    assert_eq!(seen_events, emitted);
    assert!(seen.iter().all(|e| e.session_id == Some(sid) && e.source.as_deref() == Some("test")));
    let numbers = seqs(&seen);
    assert_eq!(numbers.len(), seen.len(), "every event has its sequence");
    let expected: Vec<i64> = (numbers[0]..numbers[0] + numbers.len() as i64).collect();
    assert_eq!(numbers, expected);
    assert!(emitted.iter().any(|e| matches!(e, Event::ToolStart { .. })));
    assert!(emitted.iter().any(|e| matches!(e, Event::Done { .. })));

    // Nothing more: no event arrives twice.
    let extra = tokio::time::timeout(Duration::from_millis(400), feed.recv()).await;
    assert!(extra.is_err(), "unexpected event {extra:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn this_engines_own_events_reach_its_feed_with_sequences_and_its_bus_at_once() {
    let rig = Rig::new("").await;
    let mut feed = rig.engine.subscribe_feed(None).await.unwrap();
    assert_eq!(next(&mut feed).await.event, Event::Subscribed {});
    let mut local = rig.engine.subscribe();
    let sid = rig.engine.new_session("web").await.unwrap();
    // The in-process bus has it when the call returns, before the outbox is written.
    let now = local.try_recv().expect("the bus delivers at once");
    assert_eq!(now.event, Event::NewSession { session_id: sid });
    assert_eq!(now.seq, None);
    let first = next(&mut feed).await;
    assert_eq!(first.event, Event::NewSession { session_id: sid });
    assert_eq!(first.seq, Some(1));
    assert_eq!(next(&mut feed).await.seq, Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_resuming_from_its_last_sequence_gets_what_it_missed_then_goes_on_live() {
    let rig = Rig::new("").await;
    let serve = second_engine(&rig).await;

    // The client follows the first turn, but drops right after its user message.
    let mut feed = serve.subscribe_feed(None).await.unwrap();
    next(&mut feed).await;
    script_turn(&rig, "First answer.");
    let (sid, _, _) = rig.turn("first").await;
    let first = loop {
        let e = next(&mut feed).await;
        if matches!(e.event, Event::UserMessage { .. }) {
            break e;
        }
    };
    let last_seen = first.seq.unwrap();
    drop(feed);

    // Meanwhile another turn runs (in the other process) and ends.
    script_turn(&rig, "Second answer.");
    rig.turn("second").await;
    rig.engine.flush_events().await;

    // Back, from the last sequence seen: the rest of turn 1 and all of turn 2, then live.
    let mut resumed = serve.subscribe_feed(Some(last_seen)).await.unwrap();
    let hello = next(&mut resumed).await;
    assert_eq!((hello.event, hello.seq), (Event::Subscribed {}, Some(last_seen)));
    let mut replayed = until_turn_ended(&mut resumed, sid).await;
    replayed.extend(until_turn_ended(&mut resumed, sid).await);
    replayed.push(next(&mut resumed).await);
    assert!(
        replayed
            .iter()
            .any(|e| matches!(&e.event, Event::Done { content, .. } if content == "First answer."))
    );
    assert!(
        replayed.iter().any(
            |e| matches!(&e.event, Event::Done { content, .. } if content == "Second answer.")
        )
    );
    let numbers = seqs(&replayed);
    let expected: Vec<i64> = (last_seen + 1..=last_seen + numbers.len() as i64).collect();
    assert_eq!(numbers, expected, "no duplicate, no gap");

    script_turn(&rig, "Third answer.");
    rig.turn("third").await;
    let live = until_turn_ended(&mut resumed, sid).await;
    assert_eq!(live[0].seq, Some(expected.last().unwrap() + 1), "live goes on where replay ended");
    assert!(
        live.iter()
            .any(|e| matches!(&e.event, Event::Done { content, .. } if content == "Third answer."))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_whose_events_were_pruned_or_from_another_database_is_told_to_resync() {
    let rig = Rig::new("").await;
    for n in 0..5 {
        rig.engine.new_session(&format!("s{n}")).await.unwrap();
    }
    rig.engine.flush_events().await;
    let store = rig.store().await;
    let now = store.clock().now() + chrono::Duration::hours(48);
    store.prune_outbox_with(now, 24, 2, 100).await.unwrap();

    // Sequence 3 is gone: the client reloads, and the feed goes on after the newest row.
    let mut feed = rig.engine.subscribe_feed(Some(3)).await.unwrap();
    assert_eq!(next(&mut feed).await.event, Event::Subscribed {});
    assert_eq!(next(&mut feed).await.event, Event::Resync {});
    let sid = rig.engine.new_session("later").await.unwrap();
    let after = next(&mut feed).await;
    assert_eq!((after.event, after.seq), (Event::NewSession { session_id: sid }, Some(11)));

    // A sequence this database never gave out.
    let mut stranger = rig.engine.subscribe_feed(Some(500)).await.unwrap();
    assert_eq!(next(&mut stranger).await.seq, Some(12));
    assert_eq!(next(&mut stranger).await.event, Event::Resync {});
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_that_falls_behind_reads_what_it_missed_from_the_outbox() {
    let rig = Rig::new("").await;
    let sid = rig.engine.new_session("web").await.unwrap();
    let mut feed = rig.engine.subscribe_feed(None).await.unwrap();
    let start = next(&mut feed).await.seq.unwrap();
    // More events than the feed holds, while its reader is busy elsewhere.
    for n in 0..1_200 {
        rig.engine.rename_session(sid, Some(format!("name {n}"))).await.unwrap();
    }
    rig.engine.flush_events().await;
    let mut got = Vec::new();
    for _ in 0..1_200 {
        let e = next(&mut feed).await;
        assert_ne!(e.event, Event::Resync {}, "the outbox has everything it missed");
        got.push(e.seq.unwrap());
    }
    let expected: Vec<i64> = (start + 1..=start + 1_200).collect();
    assert_eq!(got, expected);
}

/// A process killed between committing a turn's rows and appending their events leaves its
/// viewers short of those rows. The engine that takes the dead process's turn back sends a
/// `resync` for the session through the outbox, so a client following another engine, and one
/// resuming from a sequence before it, both read the session again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taking_back_a_dead_process_turn_tells_every_viewer_to_read_the_session_again() {
    let fake = skald_testkit::FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let viewer = super::auto_resume::open(&data, &fake, false).await;
    let sid = viewer.new_session("web").await.unwrap();
    viewer.flush_events().await;
    let mut feed = viewer.subscribe_feed(None).await.unwrap();
    let since = next(&mut feed).await.seq.expect("subscribed says where the stream goes on");

    // A process on this host held the session mid-turn and died there.
    let store = skald_store::Store::open_in_dir(&data).await.unwrap();
    let dead = skald_store::repo::instances::Instance::new(
        &skald_core::session::process::host_name(),
        super::lifecycle::dead_pid(),
        chrono::Utc::now(),
    );
    store.register_instance(&dead).await.unwrap();
    store.claim_runner(sid, &dead, &|_| true).await.unwrap();

    let app = super::auto_resume::open(&data, &fake, true).await;
    let resync = loop {
        let e = next(&mut feed).await;
        if matches!(e.event, Event::Resync {}) {
            break e;
        }
    };
    assert_eq!(resync.session_id, Some(sid), "{resync:?}");
    assert!(resync.seq.is_some_and(|s| s > since), "it went through the outbox: {resync:?}");

    let mut resumed = viewer.subscribe_feed(Some(since)).await.unwrap();
    assert_eq!(next(&mut resumed).await.event, Event::Subscribed {});
    let replayed = next(&mut resumed).await;
    assert_eq!((replayed.event, replayed.session_id), (Event::Resync {}, Some(sid)));
    assert!(!store.session_held(sid, &|_| true).await.unwrap(), "the dead row is gone");
    app.shutdown(Duration::from_secs(5)).await;
    viewer.shutdown(Duration::from_secs(5)).await;
}
