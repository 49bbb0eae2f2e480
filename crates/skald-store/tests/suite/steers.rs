//! Pending inputs (steers): folding maps each to its history row; a stop names what it dropped.

use skald_store::repo::sessions::NewSession;

#[tokio::test]
async fn folding_maps_each_steer_to_its_row_and_discarding_names_the_dropped_ones() {
    let (_dir, store, _) = super::fresh().await;
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let first = store.add_steer(s.session_id, "one", None).await.unwrap();
    let second = store.add_steer(s.session_id, "two", None).await.unwrap();
    let folded = store.fold_steers(s.session_id, s.root_stack_id).await.unwrap();
    let mapped: Vec<(i64, &str)> =
        folded.iter().map(|f| (f.steer_id, f.content.as_str())).collect();
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
