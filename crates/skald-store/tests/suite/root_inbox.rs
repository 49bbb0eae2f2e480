//! The root inbox: folding maps each input to its history row, once; a stop discards the
//! user's steers and never a task's report.

use skald_store::repo::root_inbox::InputKind;
use skald_store::repo::sessions::NewSession;

#[tokio::test]
async fn folding_maps_each_steer_to_its_row_and_discarding_names_the_dropped_ones() {
    let (_dir, store, _) = super::fresh().await;
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let first = store.add_steer(s.session_id, "one", None).await.unwrap();
    let second = store.add_steer(s.session_id, "two", None).await.unwrap();
    let folded = store.fold_root_inputs(s.session_id, s.root_stack_id).await.unwrap();
    let mapped: Vec<(i64, &str)> =
        folded.iter().map(|f| (f.input_id, f.content.as_str())).collect();
    assert_eq!(mapped, [(first, "one"), (second, "two")]);
    let rows = store.all_steers(s.session_id).await.unwrap();
    let consumed: Vec<Option<i64>> = rows.iter().map(|r| r.consumed_message_id).collect();
    assert_eq!(consumed, folded.iter().map(|f| Some(f.message_id)).collect::<Vec<_>>());

    let third = store.add_steer(s.session_id, "three", None).await.unwrap();
    let fourth = store.add_steer(s.session_id, "four", None).await.unwrap();
    assert_eq!(store.discard_steers(s.session_id).await.unwrap(), [third, fourth]);
    assert!(store.discard_steers(s.session_id).await.unwrap().is_empty(), "nothing left open");
    assert!(store.open_steers(s.session_id).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_task_report_waits_in_the_inbox_survives_a_stop_and_is_read_once() {
    let (_dir, store, _) = super::fresh().await;
    let parent = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let task = super::scout_task(&store, parent.session_id, 7, "count the files").await;
    assert!(!store.root_input_waits(parent.session_id).await.unwrap());
    let recorded =
        store.record_task_report(task.child_session_id, "done", "42 files\n").await.unwrap();
    assert!(recorded.is_some());
    // Recorded once: a second end of the same run records nothing and adds no input.
    assert!(
        store.record_task_report(task.child_session_id, "failed", "x").await.unwrap().is_none()
    );
    assert!(store.root_input_waits(parent.session_id).await.unwrap());
    assert_eq!(store.sessions_owing_input().await.unwrap(), [parent.session_id]);

    let steer = store.add_steer(parent.session_id, "and the dirs?", None).await.unwrap();
    assert_eq!(store.discard_steers(parent.session_id).await.unwrap(), [steer], "the steer only");
    assert!(store.root_input_waits(parent.session_id).await.unwrap(), "the report stays");

    let folded = store.fold_root_inputs(parent.session_id, parent.root_stack_id).await.unwrap();
    assert_eq!(folded.len(), 1);
    assert_eq!(folded[0].kind, InputKind::TaskReport);
    assert_eq!(folded[0].content, format!("[task {} reported] 42 files", task.label));
    let delivered = folded[0].task.as_ref().unwrap();
    assert_eq!(delivered.delivered_message_id, Some(folded[0].message_id));
    assert!(
        store.fold_root_inputs(parent.session_id, parent.root_stack_id).await.unwrap().is_empty()
    );
    assert!(store.fold_task_report(task.id, parent.root_stack_id).await.unwrap().is_none());
    assert!(store.sessions_owing_input().await.unwrap().is_empty());
}

#[tokio::test]
async fn continuing_a_failed_task_drops_its_unread_report() {
    let (_dir, store, _) = super::fresh().await;
    let parent = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let task = super::scout_task(&store, parent.session_id, 8, "count").await;
    store.record_task_report(task.child_session_id, "failed", "model down").await.unwrap();
    store.requeue_task(task.child_session_id).await.unwrap().unwrap();
    assert!(!store.root_input_waits(parent.session_id).await.unwrap());
    store.record_task_report(task.child_session_id, "done", "7").await.unwrap();
    let folded = store.fold_root_inputs(parent.session_id, parent.root_stack_id).await.unwrap();
    let read: Vec<&str> = folded.iter().map(|f| f.content.as_str()).collect();
    assert_eq!(read, [format!("[task {} reported] 7", task.label)]);
}
