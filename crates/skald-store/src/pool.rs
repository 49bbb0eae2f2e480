//! Opening the database: pragmas, the embedded migrations and the schema-version guard.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::SqliteTransactionManager;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Row, SqlitePool, TransactionManager};

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
    /// The one connection this process writes through (`None` when opened only to read).
    writer: Option<Writer>,
    /// The connections reads run on.
    readers: Readers,
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

    /// The pool both modes use. No ping before a connection is handed out: a SQLite connection
    /// is a file handle on a thread of this process, never stale the way a socket is, and the
    /// ping would be one more trip to that thread for every statement run on the pool.
    fn pool_options() -> SqlitePoolOptions {
        SqlitePoolOptions::new().max_connections(8).min_connections(1).test_before_acquire(false)
    }

    async fn open_writable(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open { path: path.to_path_buf(), source };
        let opts = Self::options(path)?.create_if_missing(true);
        let mut pool_opts = Self::pool_options();
        // Crash tests only (`SKALD_COUNT_WRITES`, `SKALD_KILL_AFTER_WRITES`): otherwise no hook.
        if crate::kill_point::active() {
            pool_opts =
                pool_opts.after_connect(|conn, _| Box::pin(crate::kill_point::install(conn)));
        }
        let pool = pool_opts.connect_with(opts).await.map_err(open_err)?;
        let mut store = Self {
            readers: Readers::new(pool.clone()),
            pool,
            writer: None,
            clock,
            path: path.to_path_buf(),
            read_only: false,
        };
        store.guard_schema_version().await?;
        store.probe_write().await?;
        MIGRATOR
            .run(&store.pool)
            .await
            .map_err(|source| StoreError::Migrate { path: path.to_path_buf(), source })?;
        // Taken from the pool, so it was opened with the pool's options and hooks.
        let conn = store.pool.acquire().await.map_err(open_err)?.detach();
        store.writer = Some(Writer::new(conn));
        Ok(store)
    }

    /// A read-only pool on a database whose schema is current. Reading a WAL database needs its
    /// `-shm` file; where the folder forbids creating one, the file is read as immutable (what a
    /// read-only file system guarantees anyway).
    async fn open_read_only(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        let mut last = None;
        for immutable in [false, true] {
            let opts = Self::options(path)?.read_only(true).immutable(immutable);
            let pool = Self::pool_options();
            let pool = match pool.connect_with(opts).await {
                Ok(pool) => pool,
                Err(e) => {
                    last = Some(StoreError::Open { path: path.to_path_buf(), source: e });
                    continue;
                }
            };
            let store = Self {
                readers: Readers::new(pool.clone()),
                pool,
                writer: None,
                clock: clock.clone(),
                path: path.to_path_buf(),
                read_only: true,
            };
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
    ///
    /// Every write transaction of this process runs on the store's one write connection, taken
    /// in turn: writers of one process queue here rather than on SQLite's lock, and a
    /// transaction costs its statements plus `BEGIN` and `COMMIT` — no pool check-out, whose
    /// connection test and return each cost a trip to the connection's thread.
    pub(crate) async fn begin_write(&self) -> Result<WriteTx, StoreError> {
        // Every transaction that writes starts here: on a database opened only to read it is
        // refused at once, and a read-only file or a full disk met now is said with its name.
        let conn = self.write_conn().await?;
        WriteTx::begin(conn).await.map_err(|e| self.name_file(e.into()))
    }

    /// A connection to run reads on, for the statement that borrows it: one of the store's
    /// own readers, or (when all are busy) one from the pool.
    pub(crate) async fn read(&self) -> Result<ReadConn, StoreError> {
        self.readers.take().await
    }

    /// The write connection, for one statement that changes rows outside a transaction (in
    /// SQLite's implicit one): the cheapest write there is. Held until the statement ends.
    pub(crate) async fn write_conn(
        &self,
    ) -> Result<tokio::sync::OwnedMutexGuard<SqliteConnection>, StoreError> {
        match &self.writer {
            Some(writer) => writer.take().await,
            None => Err(StoreError::ReadOnly { path: self.path.clone() }),
        }
    }
}

/// The connection every write of this process goes through, one holder at a time; clones of
/// the store share it.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    conn: Arc<tokio::sync::Mutex<SqliteConnection>>,
}

/// How long a writer waits for the connection before it says the database is busy: the same
/// bound SQLite's busy timeout puts on waiting for another process's write lock.
const WRITER_WAIT: Duration = Duration::from_secs(5);

impl Writer {
    fn new(conn: SqliteConnection) -> Self {
        Self { conn: Arc::new(tokio::sync::Mutex::new(conn)) }
    }

    /// The connection, once the writer before has finished with it. A wait past the busy
    /// bound is an error (a task that already holds the connection and asks again would
    /// otherwise wait for itself forever).
    async fn take(&self) -> Result<tokio::sync::OwnedMutexGuard<SqliteConnection>, StoreError> {
        let mut conn = tokio::time::timeout(WRITER_WAIT, Arc::clone(&self.conn).lock_owned())
            .await
            .map_err(|_| StoreError::Sql(sqlx::Error::PoolTimedOut))?;
        out_of_any_transaction(&mut conn).await?;
        Ok(conn)
    }
}

/// How many connections reads keep for themselves; a read that finds all busy uses the pool.
const READERS: usize = 4;

/// The connections reads run on, each lent to one read at a time and taken back for nothing.
///
/// Why not sqlx's pool: it pings every connection given back (one more trip to the
/// connection's thread and a spawned task per read), a test meant for sockets. A SQLite
/// connection is a handle on a thread of this process; a read dropped half-way resets its
/// statement on that thread before the connection's next command, so there is nothing to test.
#[derive(Debug, Clone)]
struct Readers {
    pool: SqlitePool,
    idle: Arc<std::sync::Mutex<Vec<SqliteConnection>>>,
    free: Arc<tokio::sync::Semaphore>,
}

impl Readers {
    fn new(pool: SqlitePool) -> Self {
        Self { pool, idle: Arc::default(), free: Arc::new(tokio::sync::Semaphore::new(READERS)) }
    }

    /// An idle reader, a new one while fewer than `READERS` exist, else a pooled connection:
    /// never a wait on another read (a read held across another one cannot deadlock).
    async fn take(&self) -> Result<ReadConn, StoreError> {
        let Ok(permit) = Arc::clone(&self.free).try_acquire_owned() else {
            return Ok(ReadConn::Pooled(self.pool.acquire().await?));
        };
        let idle = self.idle.lock().map(|mut idle| idle.pop()).ok().flatten();
        let conn = match idle {
            Some(conn) => conn,
            None => self.pool.acquire().await?.detach(),
        };
        Ok(ReadConn::Own { conn: Some(conn), idle: Arc::clone(&self.idle), _permit: permit })
    }
}

/// A connection lent for reads; dropped, it goes back to the store's readers (or the pool).
pub enum ReadConn {
    Own {
        conn: Option<SqliteConnection>,
        idle: Arc<std::sync::Mutex<Vec<SqliteConnection>>>,
        /// Released after the connection is back (fields drop in order).
        _permit: tokio::sync::OwnedSemaphorePermit,
    },
    Pooled(sqlx::pool::PoolConnection<sqlx::Sqlite>),
}

impl std::ops::Deref for ReadConn {
    type Target = SqliteConnection;
    fn deref(&self) -> &SqliteConnection {
        match self {
            // `conn` is only taken by `drop`.
            Self::Own { conn: Some(conn), .. } => conn,
            Self::Own { conn: None, .. } => unreachable!("a reader is lent until dropped"),
            Self::Pooled(conn) => conn,
        }
    }
}

impl std::ops::DerefMut for ReadConn {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self {
            Self::Own { conn: Some(conn), .. } => conn,
            Self::Own { conn: None, .. } => unreachable!("a reader is lent until dropped"),
            Self::Pooled(conn) => conn,
        }
    }
}

impl Drop for ReadConn {
    fn drop(&mut self) {
        if let Self::Own { conn, idle, .. } = self
            && let (Some(conn), Ok(mut idle)) = (conn.take(), idle.lock())
        {
            idle.push(conn);
        }
    }
}

/// Leaves the write connection outside any transaction, as every holder expects to find it.
///
/// A transaction whose `COMMIT` failed on a full disk or an I/O error may have been rolled back
/// by SQLite itself; sqlx still counts it open, its `ROLLBACK` then fails, and every later
/// `BEGIN` on the connection would be refused. One connection serves every write of the
/// process, so it is set right here rather than left broken.
async fn out_of_any_transaction(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    for _ in 0..3 {
        if <SqliteTransactionManager as TransactionManager>::get_transaction_depth(conn) == 0 {
            return Ok(());
        }
        if <SqliteTransactionManager as TransactionManager>::rollback(conn).await.is_err() {
            // SQLite has no transaction open: give sqlx's `ROLLBACK` one to end.
            sqlx::query("BEGIN").execute(&mut *conn).await?;
        }
    }
    Err(StoreError::Sql(sqlx::Error::Protocol(
        "the write connection could not be brought out of a transaction".into(),
    )))
}

/// A write transaction on the store's write connection: `commit` ends it; dropped without a
/// commit, it is rolled back before the connection's next command.
pub struct WriteTx {
    conn: tokio::sync::OwnedMutexGuard<SqliteConnection>,
    open: bool,
}

impl WriteTx {
    async fn begin(
        mut conn: tokio::sync::OwnedMutexGuard<SqliteConnection>,
    ) -> Result<Self, sqlx::Error> {
        <SqliteTransactionManager as TransactionManager>::begin(
            &mut conn,
            Some("BEGIN IMMEDIATE".into()),
        )
        .await?;
        Ok(Self { conn, open: true })
    }

    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        <SqliteTransactionManager as TransactionManager>::commit(&mut self.conn).await?;
        self.open = false;
        Ok(())
    }

    pub async fn rollback(mut self) -> Result<(), sqlx::Error> {
        <SqliteTransactionManager as TransactionManager>::rollback(&mut self.conn).await?;
        self.open = false;
        Ok(())
    }
}

impl std::ops::Deref for WriteTx {
    type Target = SqliteConnection;
    fn deref(&self) -> &SqliteConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.conn
    }
}

impl Drop for WriteTx {
    fn drop(&mut self) {
        if self.open {
            // Queued on the connection's own thread ahead of anything the next holder sends.
            <SqliteTransactionManager as TransactionManager>::start_rollback(&mut self.conn);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A new database in a temporary folder (kept alive by the first value) with one session.
    async fn store_with_session() -> (tempfile::TempDir, Store, i64) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_dir(dir.path()).await.unwrap();
        let created = store
            .create_session(&crate::repo::sessions::NewSession::interactive("t"))
            .await
            .unwrap();
        (dir, store, created.session_id)
    }

    async fn count(store: &Store) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM session_scratchpad")
            .fetch_one(store.pool())
            .await
            .unwrap()
    }

    /// A transaction dropped without its commit (an error or a cancelled task between two of
    /// its statements) leaves nothing behind, and the next writer finds the connection free and
    /// outside any transaction.
    #[tokio::test]
    async fn a_write_dropped_before_its_commit_is_rolled_back_and_the_next_one_lands() {
        let (_dir, store, session) = store_with_session().await;
        {
            let mut tx = store.begin_write().await.unwrap();
            sqlx::query(
                "INSERT INTO session_scratchpad (session_id, key, value, updated_at) \
                 VALUES (?, 'lost', 'v', 'now')",
            )
            .bind(session)
            .execute(&mut *tx)
            .await
            .unwrap();
        }
        store.set_scratchpad(session, "kept", "v").await.unwrap();
        assert_eq!(count(&store).await, 1);
        let keys: Vec<String> =
            store.scratchpad(session).await.unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["kept"]);
    }

    /// Many tasks writing at once all land: they take the write connection in turn instead of
    /// meeting SQLite's lock, so none waits on the busy timeout or fails with SQLITE_BUSY.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn writers_of_one_process_take_turns_and_every_write_lands() {
        let (_dir, store, session) = store_with_session().await;
        let started = std::time::Instant::now();
        let writes = (0..200).map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                if i % 2 == 0 {
                    store.set_scratchpad(session, &format!("k{i}"), "v").await
                } else {
                    let tx = store.begin_write().await?;
                    sqlx::query(
                        "INSERT INTO session_scratchpad (session_id, key, value, updated_at) \
                         VALUES (?, ?, 'v', 'now')",
                    )
                    .bind(session)
                    .bind(format!("k{i}"))
                    .execute(&mut *{ tx })
                    .await?;
                    Ok(())
                }
            })
        });
        for w in writes.collect::<Vec<_>>() {
            w.await.unwrap().unwrap();
        }
        // The transactions above were dropped without a commit: only the plain writes stay.
        assert_eq!(count(&store).await, 100);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    /// A transaction SQLite ended on its own (as a `COMMIT` that fails on a full disk can) and
    /// then dropped: the write connection is set right, and the next writes land.
    #[tokio::test]
    async fn a_transaction_sqlite_ended_by_itself_does_not_break_the_next_writes() {
        let (_dir, store, session) = store_with_session().await;
        {
            let mut tx = store.begin_write().await.unwrap();
            // Ends the transaction behind sqlx's back, which still counts it open.
            sqlx::query("ROLLBACK").execute(&mut *tx).await.unwrap();
        }
        store.set_scratchpad(session, "after", "v").await.unwrap();
        let tx = store.begin_write().await.unwrap();
        tx.commit().await.unwrap();
        store.set_scratchpad(session, "and after", "v").await.unwrap();
        assert_eq!(count(&store).await, 2);
    }

    /// A store opened only to read has no write connection: a write is refused with the file's
    /// name, before any statement runs.
    #[tokio::test]
    async fn a_read_only_store_refuses_to_write() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open_in_dir(dir.path()).await.unwrap());
        let path = dir.path().join(DB_FILE_NAME);
        let store = Store::open_read_only(&path, Arc::new(SystemClock)).await.unwrap();
        assert!(matches!(store.begin_write().await, Err(StoreError::ReadOnly { .. })));
        assert!(matches!(store.write_conn().await, Err(StoreError::ReadOnly { .. })));
    }

    /// With every reader lent out (a read held across another), a read still answers at once
    /// from the pool instead of waiting for a reader to come back.
    #[tokio::test]
    async fn a_read_with_every_reader_lent_out_still_answers() {
        let (_dir, store, session) = store_with_session().await;
        let mut lent = Vec::new();
        for _ in 0..READERS {
            lent.push(store.read().await.unwrap());
        }
        assert!(matches!(store.read().await.unwrap(), ReadConn::Pooled(_)));
        let read = tokio::time::timeout(Duration::from_secs(2), store.session(session)).await;
        assert_eq!(read.unwrap().unwrap().id, session);
        drop(lent);
        assert!(matches!(store.read().await.unwrap(), ReadConn::Own { .. }));
    }

    /// A read dropped while SQLite is still working on it leaves its reader usable and
    /// current: the next read on that reader sees a row written after the drop (no statement
    /// left open holding an old snapshot).
    #[tokio::test]
    async fn a_read_dropped_half_way_leaves_its_reader_current() {
        let (_dir, store, session) = store_with_session().await;
        let long = async {
            let mut conn = store.read().await.unwrap();
            sqlx::query_scalar::<_, i64>(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n \
                 WHERE i < 3000000) SELECT count(*) FROM n",
            )
            .fetch_one(&mut *conn)
            .await
        };
        assert!(tokio::time::timeout(Duration::from_millis(20), long).await.is_err());
        store.set_scratchpad(session, "after", "v").await.unwrap();
        // One reader exists, so this read runs on the one whose read was dropped.
        let keys: Vec<String> =
            store.scratchpad(session).await.unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["after"]);
        assert_eq!(store.readers.idle.lock().unwrap().len(), 1);
    }
}
