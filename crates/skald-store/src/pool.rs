//! Opening the database: pragmas, the embedded migrations and the schema-version guard.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

use crate::clock::{Clock, SystemClock};
use crate::error::StoreError;

/// File name of the database inside the data dir.
pub const DB_FILE_NAME: &str = "skald.db";

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// The opened database plus the clock its timestamps come from. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    clock: Arc<dyn Clock>,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) `dir/skald.db` and applies pending migrations.
    pub async fn open_in_dir(dir: &Path) -> Result<Self, StoreError> {
        Self::open(&dir.join(DB_FILE_NAME), Arc::new(SystemClock)).await
    }

    /// Opens the database file at `path` with the given clock.
    pub async fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open { path: path.to_path_buf(), source };
        let opts = SqliteConnectOptions::from_str("sqlite://")
            .map_err(open_err)?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            // Without a busy timeout a contended write fails at once with SQLITE_BUSY.
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let mut pool_opts = SqlitePoolOptions::new().max_connections(8).min_connections(1);
        // Crash tests only (`SKALD_COUNT_WRITES`, `SKALD_KILL_AFTER_WRITES`): otherwise no hook.
        if crate::kill_point::active() {
            pool_opts =
                pool_opts.after_connect(|conn, _| Box::pin(crate::kill_point::install(conn)));
        }
        let pool = pool_opts.connect_with(opts).await.map_err(open_err)?;
        let store = Self { pool, clock, path: path.to_path_buf() };
        store.guard_schema_version().await?;
        MIGRATOR
            .run(&store.pool)
            .await
            .map_err(|source| StoreError::Migrate { path: path.to_path_buf(), source })?;
        Ok(store)
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn now(&self) -> String {
        self.clock.now_rfc3339()
    }

    /// Highest migration version this build knows.
    pub fn supported_schema_version() -> i64 {
        MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
    }

    /// Refuses a database written by a newer Skald before anything touches it.
    async fn guard_schema_version(&self) -> Result<(), StoreError> {
        let has_table: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_optional(&self.pool)
        .await?;
        if has_table.is_none() {
            return Ok(());
        }
        let row = sqlx::query("SELECT MAX(version) AS v FROM _sqlx_migrations WHERE success = 1")
            .fetch_one(&self.pool)
            .await?;
        let found: Option<i64> = row.try_get("v")?;
        let supported = Self::supported_schema_version();
        match found {
            Some(found) if found > supported => {
                Err(StoreError::SchemaTooNew { path: self.path.clone(), found, supported })
            }
            _ => Ok(()),
        }
    }

    /// Starts a write transaction that takes the write lock up front, so two writers queue on the
    /// busy timeout instead of failing when a read lock cannot be upgraded.
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}
