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

/// What SQLite says when it may not write (here a read-only connection, as a read-only file or
/// mount gives) becomes an error that names the file and says what to check.
#[tokio::test]
async fn a_write_sqlite_refuses_as_read_only_is_said_with_the_file() {
    use sqlx::sqlite::SqliteConnectOptions;
    let (dir, store, _) = super::fresh().await;
    let path = dir.path().join("skald.db");
    store.pool().close().await;
    let opts = SqliteConnectOptions::new().filename(&path).read_only(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    let refused = sqlx::query("INSERT INTO sources (id, updated_at) VALUES ('x', 'now')")
        .execute(&pool)
        .await
        .unwrap_err();
    let unnamed = StoreError::from(refused);
    assert_eq!(unnamed.disk_problem(), Some(skald_store::DiskProblem::ReadOnly));
    assert!(
        unnamed.to_string().starts_with("Skald's database (skald.db in the data dir) is read-only"),
        "{unnamed}"
    );
    let named = unnamed.naming(&path);
    assert_eq!(
        named.to_string(),
        format!(
            "{file} is read-only (or its folder is): Skald needs to write it; check the owner and \
             mode of both (ls -ld {dir} {file}), and that the disk is not mounted read-only",
            file = path.display(),
            dir = dir.path().display()
        )
    );
}

#[cfg(unix)]
#[tokio::test]
async fn the_database_and_its_wal_are_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let (dir, store, _) = super::fresh().await;
    store
        .create_session(&skald_store::repo::sessions::NewSession::interactive("web"))
        .await
        .unwrap();
    let db = dir.path().join("skald.db");
    // While it is open, SQLite's -wal and -shm exist; they get the database's mode.
    for file in ["skald.db", "skald.db-wal", "skald.db-shm"] {
        assert_eq!(mode(&dir.path().join(file)), 0o600, "{file}");
    }
    store.pool().close().await;
    // An install from before: readable by everyone, narrowed when opened.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let again = Store::open(&db, Arc::new(SystemClock)).await.unwrap();
    assert_eq!(mode(&db), 0o600);
    assert!(!again.is_read_only());
}

/// SQLite would open a FIFO read-write and wait on it for ever: it is refused, by name.
#[cfg(unix)]
#[tokio::test]
async fn a_fifo_in_place_of_the_database_or_its_wal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("skald.db");
    for name in ["skald.db", "skald.db-wal"] {
        let fifo = dir.path().join(name);
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let opened = Store::open(&db, Arc::new(SystemClock));
        let err = tokio::time::timeout(std::time::Duration::from_secs(10), opened)
            .await
            .expect("the open blocked on the FIFO")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{} is a FIFO (named pipe), not a regular file: Skald keeps its database in a \
                 regular file; move it away and start Skald again",
                fifo.display()
            )
        );
        std::fs::remove_file(&fifo).unwrap();
    }
}
