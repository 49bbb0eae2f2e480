//! Notification retention: a delivered notification is kept `keep_days` from its delivery, an
//! undelivered one from when it was made; 0 keeps everything.

use chrono::Duration;
use skald_store::Clock;
use skald_store::repo::notifications::NewNotification;
use skald_store::repo::sessions::NewSession;

use super::fresh;

fn fact(summary: &str) -> NewNotification {
    NewNotification {
        origin: "tic".into(),
        event_type: "notify".into(),
        summary: summary.into(),
        session_id: None,
        job_run_id: None,
    }
}

#[tokio::test]
async fn old_notifications_are_pruned_by_delivery_or_creation_age() {
    let (_dir, store, clock) = fresh().await;
    let home = store.create_session(&NewSession::interactive("web")).await.unwrap().session_id;
    // Made 40 days ago, delivered 20 days ago: its briefing is recent, it stays.
    store.insert_notification(&fact("made long ago, delivered lately")).await.unwrap();
    clock.advance(Duration::days(20));
    store.deliver_notifications(home, |_| "briefing".into()).await.unwrap().unwrap();
    // Made 20 days ago and never delivered (briefings off).
    store.insert_notification(&fact("never delivered")).await.unwrap();
    clock.advance(Duration::days(20));
    store.insert_notification(&fact("fresh")).await.unwrap();

    // 0 keeps everything.
    assert_eq!(store.prune_notifications(clock.now(), 0).await.unwrap(), 0);
    // 30 days: all three are younger by the age that counts.
    assert_eq!(store.prune_notifications(clock.now(), 30).await.unwrap(), 0);
    // 15 days: the delivered one (20 days since delivery) and the undelivered one (20 days old)
    // go; the fresh one stays.
    assert_eq!(store.prune_notifications(clock.now(), 15).await.unwrap(), 2);
    let left: Vec<String> =
        store.recent_notifications(10).await.unwrap().into_iter().map(|n| n.summary).collect();
    assert_eq!(left, ["fresh"]);
}
