use std::time::Duration;

use skald_core::config::EnvOverrides;
use skald_core::{Engine, EngineOptions};
use skald_protocol::{ErrorCode, Event, SessionListQuery};

async fn open(dir: &std::path::Path, watch: bool) -> Result<Engine, skald_core::EngineError> {
    Engine::open(EngineOptions {
        data_dir: Some(dir.to_path_buf()),
        env: Some(EnvOverrides::default()),
        watch_config: watch,
        secrets: Some(std::sync::Arc::new(skald_core::config::MemorySecrets::default())),
        ..Default::default()
    })
    .await
}

#[tokio::test]
async fn a_fresh_data_dir_gets_a_config_file_a_database_and_an_empty_list() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("nested/data");
    let engine = open(&data, false).await.unwrap();
    assert!(data.join("config.yml").is_file());
    assert!(data.join("skald.db").is_file());
    let page = engine.list_sessions(SessionListQuery::default()).await.unwrap();
    assert_eq!((page.total, page.items.len()), (0, 0));
}

#[tokio::test]
async fn a_malformed_config_fails_open_with_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yml"), "llm: [\n").unwrap();
    let err = open(dir.path(), false).await.unwrap_err();
    let api: skald_protocol::ApiError = err.into();
    assert_eq!(api.code, ErrorCode::Config);
    assert!(api.message.contains("config.yml:"), "{}", api.message);
}

#[tokio::test]
async fn new_sessions_appear_in_the_list_and_their_detail_is_readable() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), false).await.unwrap();
    let mut events = engine.subscribe();
    let id = engine.new_session("web").await.unwrap();
    // Clients showing the source follow the new session; the list refreshes.
    let followed = events.recv().await.unwrap();
    assert_eq!(
        (followed.session_id, followed.source.as_deref(), followed.event),
        (Some(id), Some("web"), Event::NewSession { session_id: id })
    );
    assert_eq!(events.recv().await.unwrap().event, Event::SessionsChanged {});
    let page = engine.list_sessions(SessionListQuery::default()).await.unwrap();
    assert_eq!(page.items[0].id, id);
    let detail = engine.session_detail(id).await.unwrap();
    assert_eq!((detail.session.source.as_str(), detail.messages.len()), ("web", 0));
    let missing = engine.session_detail(id + 100).await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
    let bad = engine.new_session("we b").await.unwrap_err();
    assert_eq!(bad.code(), ErrorCode::InvalidInput);
}

#[tokio::test]
async fn config_changes_on_disk_are_picked_up_and_bad_edits_keep_the_last_good_config() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), true).await.unwrap();
    assert_eq!(engine.config().llm.max_tool_rounds, 20);
    let mut events = engine.subscribe();
    std::fs::write(dir.path().join("config.yml"), "llm:\n  max_tool_rounds: 5\n").unwrap();
    let (ok, _) = wait_reload(&mut events).await;
    assert!(ok);
    assert_eq!(engine.config().llm.max_tool_rounds, 5);

    std::fs::write(dir.path().join("config.yml"), "llm:\n  max_tool_rounds: many\n").unwrap();
    let (ok, error) = wait_reload(&mut events).await;
    assert!(!ok);
    assert!(error.unwrap().contains("llm.max_tool_rounds"));
    assert_eq!(engine.config().llm.max_tool_rounds, 5, "last good config stays in force");
}

/// An agent folder added, edited or removed by hand is announced, so open lists refresh.
#[tokio::test]
async fn agent_files_changed_on_disk_are_announced() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), true).await.unwrap();
    let mut events = engine.subscribe();
    let agent = dir.path().join("agents").join("scout");
    std::fs::create_dir_all(&agent).unwrap();
    let meta = r#"{"name": "scout", "description": "the scout", "type": "task"}"#;
    std::fs::write(agent.join("meta.json"), meta).unwrap();
    std::fs::write(agent.join("AGENT.md"), "You are the scout.").unwrap();
    wait_agents_changed(&mut events).await;
    assert!(engine.list_agents().await.unwrap().iter().any(|a| a.id == "scout"));

    std::fs::remove_dir_all(&agent).unwrap();
    wait_agents_changed(&mut events).await;
    assert!(!engine.list_agents().await.unwrap().iter().any(|a| a.id == "scout"));

    // A one-shot engine (no watching) announces nothing.
    let quiet = open(dir.path(), false).await.unwrap();
    let mut quiet_events = quiet.subscribe();
    std::fs::create_dir_all(&agent).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(quiet_events.try_recv().is_err());
}

async fn wait_agents_changed(
    events: &mut tokio::sync::broadcast::Receiver<skald_protocol::EventEnvelope>,
) {
    let fut = async { while events.recv().await.unwrap().event != (Event::AgentsChanged {}) {} };
    tokio::time::timeout(Duration::from_secs(10), fut).await.expect("agents_changed event");
    // Let the burst settle, so the next wait sees the next change's event.
    tokio::time::sleep(Duration::from_millis(400)).await;
    while events.try_recv().is_ok() {}
}

async fn wait_reload(
    events: &mut tokio::sync::broadcast::Receiver<skald_protocol::EventEnvelope>,
) -> (bool, Option<String>) {
    let fut = async {
        loop {
            let ev = events.recv().await.unwrap();
            if let Event::ConfigReloaded { ok, error } = ev.event {
                return (ok, error);
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), fut).await.expect("config reload event")
}

#[tokio::test]
async fn a_session_can_be_named_found_by_its_name_and_unnamed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), false).await.unwrap();
    let id = engine.new_session("web").await.unwrap();
    let mut events = engine.subscribe();

    let meta = engine.rename_session(id, Some("  Inbox triage ".into())).await.unwrap();
    assert_eq!(meta.title.as_deref(), Some("Inbox triage"));
    assert_eq!(events.recv().await.unwrap().event, Event::SessionsChanged {});
    let query = SessionListQuery { search: Some("triage".into()), ..Default::default() };
    let found = engine.list_sessions(query).await.unwrap();
    assert_eq!(found.items.iter().map(|s| s.id).collect::<Vec<_>>(), [id]);
    assert_eq!(
        engine.session_detail(id).await.unwrap().session.title.as_deref(),
        Some("Inbox triage")
    );

    let cleared = engine.rename_session(id, Some("   ".into())).await.unwrap();
    assert_eq!(cleared.title, None, "a blank name removes the name");
    let long = engine.rename_session(id, Some("x".repeat(201))).await.unwrap_err();
    assert_eq!(long.code(), ErrorCode::InvalidInput);
    let missing = engine.rename_session(id + 100, None).await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
}
