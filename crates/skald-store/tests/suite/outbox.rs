//! The event outbox: one sequence for every process's events, replay after a sequence, and a
//! prune that keeps a day and the newest rows and only ever cuts the front.

use std::sync::Arc;

use skald_protocol::{Event, EventEnvelope, FrameOrigin};
use skald_store::repo::history::NewMessage;
use skald_store::repo::sessions::NewSession;
use skald_store::repo::staged_events::{BuildEvents, StagedOutcome, with_staged_events};
use skald_store::{Clock, ManualClock, Store};

fn message(session_id: i64, n: i64) -> EventEnvelope {
    let frame = FrameOrigin::root(session_id * 10).child(session_id * 10 + 1, "scout", 5);
    EventEnvelope::framed(
        session_id,
        "web",
        frame,
        Event::UserMessage { message_id: n, content: format!("message {n}") },
    )
}

#[tokio::test]
async fn events_get_increasing_sequences_and_replay_after_one_as_they_were_sent() {
    let (_dir, store, _clock) = super::fresh().await;
    assert_eq!(store.outbox_head().await.unwrap(), 0, "nothing appended yet");
    let (a, b, c) =
        (message(1, 1), message(1, 2), EventEnvelope::global(Event::SessionsChanged {}));
    let first = store.append_events("engine-a", &[&a, &b]).await.unwrap();
    let second = store.append_events("engine-b", &[&c]).await.unwrap();
    assert_eq!(first, [1, 2]);
    assert_eq!(second, [3]);
    assert_eq!(store.outbox_head().await.unwrap(), 3);

    let after_one = store.outbox_after(1, 10).await.unwrap();
    let seqs: Vec<i64> = after_one.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, [2, 3]);
    assert_eq!(after_one[0].instance_id, "engine-a");
    assert_eq!(after_one[1].instance_id, "engine-b");
    // The envelope comes back whole (frame, origin label, session, source), with its sequence.
    assert_eq!(after_one[0].envelope().unwrap(), EventEnvelope { seq: Some(2), ..b });
    assert_eq!(after_one[1].envelope().unwrap(), EventEnvelope { seq: Some(3), ..c });
    assert_eq!(store.outbox_after(1, 1).await.unwrap().len(), 1, "a page is bounded");
    assert!(store.outbox_after(3, 10).await.unwrap().is_empty());
}

/// Events staged for a write ride its transaction: committed with it, in order, with their
/// sequences and the id of the row it created; a write that fails leaves no event behind; a
/// write outside a scope appends none.
#[tokio::test]
async fn staged_events_ride_the_write_transaction_and_only_a_committed_one() {
    let (_dir, store, _clock) = super::fresh().await;
    let created = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let (session, stack_id) = (created.session_id, created.root_stack_id);
    let hello = NewMessage { stack_id, content: "hello".into(), ..Default::default() };
    let build: BuildEvents =
        Box::new(move |id| vec![message(session, id.unwrap()), message(session, 0)]);
    let (written, outcome) = with_staged_events("me", build, store.append_message(&hello)).await;
    let message_id = written.unwrap();
    let StagedOutcome::Appended(events) = outcome else { panic!("not appended: {outcome:?}") };
    let seqs: Vec<Option<i64>> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [Some(1), Some(2)]);
    let rows = store.outbox_after(0, 10).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].instance_id, "me");
    assert_eq!(
        rows[0].envelope().unwrap(),
        EventEnvelope { seq: Some(1), ..message(session, message_id) }
    );

    // A write refused before it commits (its frame does not exist): nothing in the outbox.
    let orphan =
        NewMessage { stack_id: stack_id + 1000, content: "lost".into(), ..Default::default() };
    let build: BuildEvents = Box::new(move |_| vec![message(session, 3)]);
    let (written, outcome) = with_staged_events("me", build, store.append_message(&orphan)).await;
    assert!(written.is_err());
    assert!(!matches!(outcome, StagedOutcome::Appended(_)), "{outcome:?}");
    assert_eq!(store.outbox_head().await.unwrap(), 2);

    // Outside a scope a write appends nothing.
    store.append_message(&hello).await.unwrap();
    assert_eq!(store.outbox_head().await.unwrap(), 2);
}

/// Two processes append at once (two pools on one file, as `serve` and `skald chat` do) and each
/// tails the outbox after every append, as its pump does: every sequence is read exactly once by
/// each, in order, without a gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appenders_each_see_every_sequence_once_in_order() {
    let (dir, store, clock) = super::fresh().await;
    let path = dir.path().join("skald.db");
    let other = Store::open(&path, clock.clone()).await.unwrap();
    let run = |store: Store, me: &'static str, session: i64| async move {
        let mut cursor = 0;
        let mut published = Vec::new();
        for n in 0..40 {
            let batch = [message(session, n), message(session, n + 100)];
            let refs: Vec<&EventEnvelope> = batch.iter().collect();
            let appended = store.append_events(me, &refs).await.unwrap();
            for row in store.outbox_after(cursor, 1_000).await.unwrap() {
                assert!(row.seq > cursor, "{me}: {} published twice", row.seq);
                published.push(row.seq);
                cursor = row.seq;
            }
            assert!(appended.iter().all(|seq| *seq <= cursor), "{me}: own rows not read back");
            tokio::task::yield_now().await;
        }
        published
    };
    let (a, b) =
        tokio::join!(tokio::spawn(run(store.clone(), "a", 1)), tokio::spawn(run(other, "b", 2)));
    let (a, b) = (a.unwrap(), b.unwrap());
    let head = store.outbox_head().await.unwrap();
    assert_eq!(head, 160);
    // Each saw a gap-free prefix: everything up to its last append (the other may have
    // appended after it finished).
    for published in [&a, &b] {
        let expected: Vec<i64> = (1..=*published.last().unwrap()).collect();
        assert_eq!(published, &expected);
    }
}

#[tokio::test]
async fn prune_keeps_a_day_and_the_newest_rows_and_cuts_only_the_front() {
    let (_dir, store, clock) = super::fresh().await;
    let old: Vec<EventEnvelope> = (1..=6).map(|n| message(1, n)).collect();
    store.append_events("a", &old.iter().collect::<Vec<_>>()).await.unwrap();
    clock.advance(chrono::Duration::hours(25));
    let young: Vec<EventEnvelope> = (7..=9).map(|n| message(1, n)).collect();
    store.append_events("a", &young.iter().collect::<Vec<_>>()).await.unwrap();

    // A day old: rows 1..=6 go, the young ones stay (keeping the newest 2 asks for no more).
    let now = clock.now();
    assert_eq!(store.prune_outbox_with(now, 24, 2, 1_000).await.unwrap(), 6);
    let left: Vec<i64> = store.outbox_after(0, 100).await.unwrap().iter().map(|r| r.seq).collect();
    assert_eq!(left, [7, 8, 9]);

    // Everything is old: the newest rows stay all the same, and the head with them.
    clock.advance(chrono::Duration::hours(48));
    assert_eq!(store.prune_outbox_with(clock.now(), 24, 2, 1_000).await.unwrap(), 1);
    assert_eq!(store.outbox_head().await.unwrap(), 9);
    assert_eq!(store.outbox_after(0, 100).await.unwrap().first().map(|r| r.seq), Some(8));

    // However young, no more than the cap is kept.
    let burst: Vec<EventEnvelope> = (10..=20).map(|n| message(1, n)).collect();
    store.append_events("a", &burst.iter().collect::<Vec<_>>()).await.unwrap();
    assert_eq!(store.prune_outbox_with(clock.now(), 24, 2, 5).await.unwrap(), 8);
    let left: Vec<i64> = store.outbox_after(0, 100).await.unwrap().iter().map(|r| r.seq).collect();
    assert_eq!(left, [16, 17, 18, 19, 20]);
}

#[tokio::test]
async fn a_row_written_with_a_late_clock_keeps_the_rows_after_it() {
    let (_dir, store, clock) = super::fresh().await;
    store.append_events("a", &[&message(1, 1)]).await.unwrap();
    clock.advance(chrono::Duration::hours(30));
    store.append_events("b", &[&message(1, 2)]).await.unwrap();
    // Another process whose clock is a day behind appends after it.
    let behind = Arc::new(ManualClock::new(clock.now() - chrono::Duration::hours(26)));
    let late = Store::open(store.path(), behind).await.unwrap();
    late.append_events("c", &[&message(1, 3)]).await.unwrap();
    store.append_events("b", &[&message(1, 4)]).await.unwrap();

    store.prune_outbox_with(clock.now(), 24, 1, 1_000).await.unwrap();
    // Row 1 is old and goes; row 3 looks old too, but row 2 before it is young: only the front
    // is cut, so a reader never meets a hole in the middle of the sequence.
    let left: Vec<i64> = store.outbox_after(0, 100).await.unwrap().iter().map(|r| r.seq).collect();
    assert_eq!(left, [2, 3, 4]);
}
