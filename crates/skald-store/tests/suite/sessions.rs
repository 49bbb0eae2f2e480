use skald_protocol::SessionListQuery;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::NewSession;

fn tic() -> NewSession {
    NewSession {
        source: "tic".into(),
        is_interactive: false,
        is_ephemeral: true,
        ..NewSession::interactive("tic")
    }
}

#[tokio::test]
async fn an_empty_database_lists_an_empty_first_page() {
    let (_dir, store, _) = super::fresh().await;
    let page = store.list_sessions(&SessionListQuery::default()).await.unwrap();
    assert_eq!(
        serde_json::to_string(&page).unwrap(),
        r#"{"items":[],"total":0,"page":1,"per_page":20}"#
    );
}

#[tokio::test]
async fn list_filters_by_source_paginates_newest_first_and_counts_messages() {
    let (_dir, store, clock) = super::fresh().await;
    let mut tic_ids = Vec::new();
    for i in 0..25 {
        let s = store.create_session(&tic()).await.unwrap();
        tic_ids.push(s.session_id);
        for _ in 0..(i % 3) {
            clock.advance(chrono::Duration::seconds(1));
            store
                .append_message(&NewMessage {
                    stack_id: s.root_stack_id,
                    role: Some(Role::User),
                    content: format!("tick {i}"),
                    is_synthetic: true,
                    ..Default::default()
                })
                .await
                .unwrap();
        }
    }
    store.create_session(&NewSession::interactive("web")).await.unwrap();

    let q =
        |page| SessionListQuery { source: Some("tic".into()), search: None, page, per_page: 20 };
    let p1 = store.list_sessions(&q(1)).await.unwrap();
    let p2 = store.list_sessions(&q(2)).await.unwrap();
    assert_eq!((p1.total, p1.items.len(), p2.items.len()), (25, 20, 5));
    assert!(p1.items.iter().chain(&p2.items).all(|s| s.source == "tic"));
    assert_eq!(p1.items[0].id, *tic_ids.last().unwrap(), "newest first");
    assert_eq!(p2.items.last().unwrap().id, tic_ids[0]);
    let oldest = p2.items.last().unwrap();
    assert_eq!((oldest.message_count, oldest.last_message_at.as_deref()), (0, None));
    let with_two = p1.items.iter().find(|s| s.id == tic_ids[23]).unwrap();
    assert_eq!(with_two.message_count, 2);
    assert!(with_two.last_message_at.as_deref().unwrap().ends_with('Z'));

    let all = store.list_sessions(&SessionListQuery::default()).await.unwrap();
    assert_eq!(all.total, 26);
}

#[tokio::test]
async fn search_matches_message_text_and_escapes_wildcards() {
    let (_dir, store, _) = super::fresh().await;
    let a = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let b = store.create_session(&NewSession::interactive("web")).await.unwrap();
    for (s, text) in [(a, "refactor the parser"), (b, "100% done")] {
        store
            .append_message(&NewMessage {
                stack_id: s.root_stack_id,
                content: text.into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let find = |t: &str| SessionListQuery { search: Some(t.into()), ..Default::default() };
    let hits = store.list_sessions(&find("PARSER")).await.unwrap();
    assert_eq!(hits.items.iter().map(|s| s.id).collect::<Vec<_>>(), vec![a.session_id]);
    let pct = store.list_sessions(&find("100%")).await.unwrap();
    assert_eq!(pct.items.iter().map(|s| s.id).collect::<Vec<_>>(), vec![b.session_id]);
    assert_eq!(store.list_sessions(&find("_")).await.unwrap().total, 0);
}

#[tokio::test]
async fn sources_point_at_their_active_session() {
    let (_dir, store, _) = super::fresh().await;
    assert_eq!(store.active_session("web").await.unwrap(), None);
    let s1 = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let s2 = store.create_session(&NewSession::interactive("web")).await.unwrap();
    store.set_active_session("web", s1.session_id).await.unwrap();
    store.set_active_session("web", s2.session_id).await.unwrap();
    assert_eq!(store.active_session("web").await.unwrap(), Some(s2.session_id));
}

/// A person's session is no run with an end of its own; an async task's child is a task's.
#[tokio::test]
async fn runs_of_session_tell_a_task_child_from_a_chat() {
    use skald_store::repo::sessions::SessionRuns;
    let (_dir, store, _) = super::fresh().await;
    let parent = store.create_session(&NewSession::interactive("web")).await.unwrap();
    assert_eq!(store.runs_of_session(parent.session_id).await.unwrap(), SessionRuns::default());
    let task = super::scout_task(&store, parent.session_id, 7, "count the files").await;
    let runs = store.runs_of_session(task.child_session_id).await.unwrap();
    assert_eq!(runs, SessionRuns { task: true, job_run: false, tick: false });
}
