//! Opening the database: pragmas, the embedded migrations and the schema-version guard.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

use crate::clock::{Clock, SystemClock};
use crate::db_file::{self, DiskProblem};
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
    read_only: bool,
}

impl Store {
    /// Opens (creating if needed) `dir/skald.db` and applies pending migrations.
    pub async fn open_in_dir(dir: &Path) -> Result<Self, StoreError> {
        Self::open(&dir.join(DB_FILE_NAME), Arc::new(SystemClock)).await
    }

    /// Opens the database file at `path` with the given clock, private to its owner.
    ///
    /// A database that cannot be written (a read-only file, folder or mount) is opened to read
    /// when it needs no migration, so what it holds can still be listed and shown; everything
    /// that would change it then fails with an error naming the file ([`Store::is_read_only`]).
    pub async fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        for file in db_file::with_companions(path) {
            if let Some(kind) = db_file::not_regular(&file) {
                return Err(StoreError::NotRegular { path: file, kind });
            }
        }
        db_file::make_private(path);
        let opened = Self::open_writable(path, clock.clone()).await;
        let Err(e) = opened else { return opened };
        // SQLite's codes do not always say why a file could not be opened: try it ourselves.
        let sqlite_failed =
            matches!(e, StoreError::Open { .. } | StoreError::Sql(_) | StoreError::Migrate { .. });
        let problem = e
            .disk_problem()
            .or_else(|| sqlite_failed.then(|| db_file::probe_write(path)).flatten());
        match problem {
            Some(DiskProblem::ReadOnly) if path.exists() => {
                let Ok(store) = Self::open_read_only(path, clock).await else {
                    return Err(StoreError::ReadOnly { path: path.to_path_buf() });
                };
                tracing::warn!(
                    target: db_file::LOG_TARGET,
                    "{} is read-only: Skald opened it only to read, and anything that would \
                     change it fails until it can be written again",
                    path.display()
                );
                Ok(store)
            }
            Some(DiskProblem::ReadOnly) => Err(StoreError::ReadOnly { path: path.to_path_buf() }),
            Some(DiskProblem::Full) => Err(StoreError::DiskFull { path: path.to_path_buf() }),
            None => Err(e),
        }
    }

    fn options(path: &Path) -> Result<SqliteConnectOptions, StoreError> {
        let opts = SqliteConnectOptions::from_str("sqlite://")
            .map_err(|source| StoreError::Open { path: path.to_path_buf(), source })?
            .filename(path)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            // Without a busy timeout a contended write fails at once with SQLITE_BUSY.
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        Ok(opts)
    }

    async fn open_writable(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open { path: path.to_path_buf(), source };
        let opts = Self::options(path)?.create_if_missing(true);
        let mut pool_opts = SqlitePoolOptions::new().max_connections(8).min_connections(1);
        // Crash tests only (`SKALD_COUNT_WRITES`, `SKALD_KILL_AFTER_WRITES`): otherwise no hook.
        if crate::kill_point::active() {
            pool_opts =
                pool_opts.after_connect(|conn, _| Box::pin(crate::kill_point::install(conn)));
        }
        let pool = pool_opts.connect_with(opts).await.map_err(open_err)?;
        let store = Self { pool, clock, path: path.to_path_buf(), read_only: false };
        store.guard_schema_version().await?;
        store.probe_write().await?;
        MIGRATOR
            .run(&store.pool)
            .await
            .map_err(|source| StoreError::Migrate { path: path.to_path_buf(), source })?;
        Ok(store)
    }

    /// A read-only pool on a database whose schema is current. Reading a WAL database needs its
    /// `-shm` file; where the folder forbids creating one, the file is read as immutable (what a
    /// read-only file system guarantees anyway).
    async fn open_read_only(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        let mut last = None;
        for immutable in [false, true] {
            let opts = Self::options(path)?.read_only(true).immutable(immutable);
            let pool = SqlitePoolOptions::new().max_connections(8).min_connections(1);
            let pool = match pool.connect_with(opts).await {
                Ok(pool) => pool,
                Err(e) => {
                    last = Some(StoreError::Open { path: path.to_path_buf(), source: e });
                    continue;
                }
            };
            let store =
                Self { pool, clock: clock.clone(), path: path.to_path_buf(), read_only: true };
            match store.applied_version().await {
                Ok(Some(v)) if v == Self::supported_schema_version() => return Ok(store),
                Ok(_) => return Err(StoreError::ReadOnly { path: path.to_path_buf() }),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or(StoreError::ReadOnly { path: path.to_path_buf() }))
    }

    /// SQLite opens a file it may not write read-only without a word (and in WAL mode even takes
    /// the write lock), so only the first real write would fail: change a page and roll it back,
    /// so such a database is known from the start. Nothing is committed.
    async fn probe_write(&self) -> Result<(), StoreError> {
        let mut probe = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let version: i64 = sqlx::query_scalar("PRAGMA user_version").fetch_one(&mut *probe).await?;
        sqlx::query(&format!("PRAGMA user_version = {version}")).execute(&mut *probe).await?;
        probe.rollback().await?;
        Ok(())
    }

    /// Whether this database was opened only to read (its file or disk is read-only).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// A read-only file or a full disk in `e`, said with this database's path.
    pub fn name_file(&self, e: StoreError) -> StoreError {
        e.naming(&self.path)
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

    /// The highest migration applied, `None` for a database without any.
    async fn applied_version(&self) -> Result<Option<i64>, StoreError> {
        let has_table: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_optional(&self.pool)
        .await?;
        if has_table.is_none() {
            return Ok(None);
        }
        let row = sqlx::query("SELECT MAX(version) AS v FROM _sqlx_migrations WHERE success = 1")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("v")?)
    }

    /// Refuses a database written by a newer Skald before anything touches it.
    async fn guard_schema_version(&self) -> Result<(), StoreError> {
        let supported = Self::supported_schema_version();
        match self.applied_version().await? {
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
        // Every transaction that writes starts here: on a database opened only to read it is
        // refused at once, and a read-only file or a full disk met now is said with its name.
        if self.read_only {
            return Err(StoreError::ReadOnly { path: self.path.clone() });
        }
        self.pool.begin_with("BEGIN IMMEDIATE").await.map_err(|e| self.name_file(e.into()))
    }
}
