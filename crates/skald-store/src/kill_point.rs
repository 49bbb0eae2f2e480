//! Kill points for crash tests: every committed write transaction is a persisted step, counted
//! (`SKALD_COUNT_WRITES=<file>`), or the process is SIGKILLed after N of them, right before the
//! next one commits (`SKALD_KILL_AFTER_WRITES=N`; 0 kills before the first).
//!
//! The hooks sit in SQLite itself, so every write of every repository counts without a list to
//! keep up to date: a crash test kills the process at each step a turn persists, found rather
//! than listed by hand. They are the update hook (what a transaction changes) and the commit
//! hook, which runs as each write transaction commits. The kill comes at the *next* commit
//! rather than after this one because SQLite tells of a finished commit (the WAL hook) only
//! when a statement steps to its end, and sqlx resets `INSERT … RETURNING` statements after
//! their row: such commits would be seen late, after other writes. Killing as the next write
//! starts to commit lands after everything the process did since the N-th write (a tool's side
//! effect included) and before anything else is stored — the latest state a crash after that
//! write can leave. After the last write the process simply runs to its end.
//!
//! A transaction that changed no row, one that only refreshed a runner's heartbeat
//! (`session_runners`, written on a timer), and one that only appended to or pruned the event
//! outbox (`event_outbox`, written by the engine's event pump on its own task) is not a step:
//! counting them would make the kill points depend on timing. The environment is read once; with neither variable set no hook is
//! installed and a write costs what it always did.
//!
//! Each count-file line is `<n>\t<pid>\t<what the transaction changed>` (e.g. `insert
//! chat_history, insert chat_llm_tools`), so a failing kill point can be named.

#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use libsqlite3_sys as ffi;
use sqlx::SqliteConnection;

/// Appends one line per committed write transaction to this file.
pub const COUNT_WRITES_ENV: &str = "SKALD_COUNT_WRITES";
/// SIGKILLs the process after this many committed write transactions, as the next one commits.
pub const KILL_AFTER_WRITES_ENV: &str = "SKALD_KILL_AFTER_WRITES";

#[derive(Debug)]
struct Settings {
    count_file: Option<PathBuf>,
    kill_after: Option<u64>,
}

static SETTINGS: OnceLock<Option<Settings>> = OnceLock::new();
/// Write transactions of this process committed (or committing), over every connection.
static COMMITS: AtomicU64 = AtomicU64::new(0);
/// Keeps count-file lines whole when two connections commit at once.
static FILE: Mutex<()> = Mutex::new(());

fn settings() -> Option<&'static Settings> {
    SETTINGS
        .get_or_init(|| {
            let count_file =
                std::env::var_os(COUNT_WRITES_ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
            let kill_after = std::env::var(KILL_AFTER_WRITES_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            (count_file.is_some() || kill_after.is_some())
                .then_some(Settings { count_file, kill_after })
        })
        .as_ref()
}

/// Whether kill points are on in this process (the pool installs the hook only then).
pub(crate) fn active() -> bool {
    settings().is_some()
}

/// What one connection's open transaction changed, collected by the update hook.
#[derive(Default)]
struct Changes {
    ops: Mutex<BTreeSet<(&'static str, String)>>,
}

/// Installs the hooks on a new connection. The state lives as long as the process (connections
/// of a test process are few; nothing is installed outside tests).
pub(crate) async fn install(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let mut handle = conn.lock_handle().await?;
    let db = handle.as_raw_handle().as_ptr();
    let changes: &'static Changes = Box::leak(Box::default());
    let arg = std::ptr::from_ref(changes).cast_mut().cast::<c_void>();
    // SAFETY: `db` is this connection's open handle, held locked for the calls; `arg` points to
    // leaked, never-freed state, so it outlives the connection; both callbacks match SQLite's
    // signatures and never unwind.
    unsafe {
        ffi::sqlite3_update_hook(db, Some(on_update), arg);
        ffi::sqlite3_rollback_hook(db, Some(on_rollback), arg);
        ffi::sqlite3_commit_hook(db, Some(on_commit), arg);
    }
    Ok(())
}

extern "C" fn on_update(
    arg: *mut c_void,
    op: c_int,
    _db: *const c_char,
    table: *const c_char,
    _rowid: ffi::sqlite3_int64,
) {
    if arg.is_null() || table.is_null() {
        return;
    }
    // SAFETY: `arg` is the leaked `Changes` of `install`; `table` is a NUL-terminated string
    // SQLite keeps valid for the call.
    let (changes, table) = unsafe { (&*arg.cast::<Changes>(), CStr::from_ptr(table)) };
    let table = table.to_string_lossy();
    // The FTS indexes' own tables follow from the rows they index.
    if table.contains("_fts") {
        return;
    }
    let op = match op {
        ffi::SQLITE_INSERT => "insert",
        ffi::SQLITE_DELETE => "delete",
        _ => "update",
    };
    if let Ok(mut ops) = changes.ops.lock() {
        ops.insert((op, table.into_owned()));
    }
}

/// A rolled-back transaction persisted nothing: forget what it changed.
extern "C" fn on_rollback(arg: *mut c_void) {
    if arg.is_null() {
        return;
    }
    // SAFETY: `arg` is the leaked `Changes` of `install`.
    let changes = unsafe { &*arg.cast::<Changes>() };
    if let Ok(mut ops) = changes.ops.lock() {
        ops.clear();
    }
}

/// SQLite calls this as each write transaction commits (returning 0 lets it commit).
extern "C" fn on_commit(arg: *mut c_void) -> c_int {
    if arg.is_null() {
        return 0;
    }
    // SAFETY: `arg` is the leaked `Changes` of `install`.
    let changes = unsafe { &*arg.cast::<Changes>() };
    let taken = changes.ops.lock().map(|mut ops| std::mem::take(&mut *ops)).unwrap_or_default();
    let heartbeat_only =
        taken.iter().all(|(op, table)| *op == "update" && table == "session_runners");
    // The event outbox is written by the engine's event pump right after each change, on its
    // own task: where its writes fall among a turn's is a matter of scheduling.
    let outbox_only = taken.iter().all(|(_, table)| table == "event_outbox");
    if taken.is_empty() || heartbeat_only || outbox_only {
        return 0;
    }
    let what =
        taken.into_iter().map(|(op, table)| format!("{op} {table}")).collect::<Vec<_>>().join(", ");
    committing(&what);
    0
}

/// One persisted step is about to commit: kills the process when the steps before it are the
/// ones asked for, else counts and records it.
fn committing(what: &str) {
    let Some(settings) = settings() else { return };
    let done = COMMITS.load(Ordering::SeqCst);
    if settings.kill_after == Some(done) {
        kill_self();
    }
    let n = COMMITS.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(path) = &settings.count_file {
        let _guard = FILE.lock();
        let line = format!("{n}\t{}\t{what}\n", std::process::id());
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path);
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
}

#[cfg(unix)]
fn kill_self() {
    // SAFETY: kill(2) on our own pid; SIGKILL cannot be caught, so this never returns.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_self() {
    std::process::abort();
}
