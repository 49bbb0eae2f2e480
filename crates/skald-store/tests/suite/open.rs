use std::sync::Arc;

use skald_store::{Store, StoreError, SystemClock};

#[tokio::test]
async fn opening_twice_keeps_data_and_uses_wal() {
    let (dir, store, _) = super::fresh().await;
    let created = store
        .create_session(&skald_store::repo::sessions::NewSession::interactive("web"))
        .await
        .unwrap();
    let mode: String =
        sqlx::query_scalar("PRAGMA journal_mode").fetch_one(store.pool()).await.unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys").fetch_one(store.pool()).await.unwrap();
    assert_eq!(fk, 1);
    store.pool().close().await;
    let again = Store::open(&dir.path().join("skald.db"), Arc::new(SystemClock)).await.unwrap();
    assert_eq!(again.session(created.session_id).await.unwrap().source, "web");
}

#[tokio::test]
async fn a_newer_schema_is_refused_with_a_clear_message() {
    let (dir, store, _) = super::fresh().await;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, \
         execution_time) VALUES (9999, 'from the future', '2030-01-01', 1, x'00', 0)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    store.pool().close().await;
    let err = Store::open(&dir.path().join("skald.db"), Arc::new(SystemClock)).await.unwrap_err();
    match &err {
        StoreError::SchemaTooNew { found, supported, .. } => {
            assert_eq!(*found, 9999);
            assert_eq!(*supported, Store::supported_schema_version());
        }
        other => panic!("expected SchemaTooNew, got {other:?}"),
    }
    assert!(err.to_string().contains("newer than this Skald build supports"), "{err}");
}

#[tokio::test]
async fn foreign_keys_reject_a_message_for_a_missing_frame() {
    let (_dir, store, _) = super::fresh().await;
    let err = store
        .append_message(&skald_store::repo::history::NewMessage {
            stack_id: 4242,
            content: "orphan".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("foreign key"), "{err}");
}
