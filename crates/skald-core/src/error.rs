//! Engine errors, and the one place they become the wire's `ApiError`.

use std::path::Path;

use skald_protocol::{ApiError, ErrorCode};
use skald_store::{DiskProblem, StoreError};

use crate::agents::AgentError;
use crate::config::{ConfigError, SecretError};

/// Why an engine operation failed. Each variant says whose fault it is, which is what the
/// `ErrorCode` a shell shows is chosen by: the caller's input, the configuration, the machine,
/// the model, or the engine itself.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The caller named something that does not exist (a question, a client, a logged request).
    #[error("{0}")]
    NotFound(String),
    /// The caller's input is wrong (an empty message, a bad source name, an invalid edit).
    #[error("{0}")]
    InvalidInput(String),
    /// The request clashes with the state (a turn is running, the call was decided already).
    #[error("{0}")]
    Conflict(String),
    /// The session is held by a unit of work (a turn, a resume, a compaction) here or in another
    /// process; only one runs at a time.
    #[error(
        "session {session_id} is busy: a turn or a compaction runs it{}; try again once it ends",
        holder.where_()
    )]
    SessionBusy { session_id: i64, holder: Holder },
    /// The engine is shutting down and starts no new work.
    #[error("Skald is shutting down")]
    ShuttingDown,
    #[error("configuration error: {0}")]
    Config(#[from] ConfigError),
    /// Something the operation needs is not configured (no LLM client).
    #[error("{0}")]
    NotConfigured(String),
    /// The session's agent is missing or its files are invalid.
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Store(StoreError),
    #[error("no data directory: pass --data-dir or set SKALD_DATA_DIR")]
    NoDataDir,
    #[error("cannot use the data directory {path}: {message}")]
    DataDir { path: String, message: String },
    #[error("cannot write {file}: {source}")]
    Write { file: &'static str, source: std::io::Error },
    #[error(transparent)]
    Keychain(#[from] SecretError),
    /// The model could not do what the operation asked of it (e.g. summarise for `/compact`).
    #[error("{0}")]
    Llm(String),
    /// The operation was stopped before it finished (a `/stop` during `/compact`).
    #[error("{0}")]
    Cancelled(String),
    /// A failure of the engine itself, never of the caller's input.
    #[error("{0}")]
    Internal(String),
}

/// Who holds a busy session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// This engine (a turn or a compaction of this process).
    Here,
    /// Another process (the app, `skald serve`, a `skald chat`).
    OtherProcess,
}

impl Holder {
    fn where_(self) -> &'static str {
        match self {
            Holder::Here => "",
            Holder::OtherProcess => " in another process",
        }
    }
}

impl EngineError {
    /// The wire code of this error: what a UI can branch on.
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::NotFound(_) | EngineError::Store(StoreError::NotFound { .. }) => {
                ErrorCode::NotFound
            }
            EngineError::InvalidInput(_) => ErrorCode::InvalidInput,
            EngineError::Conflict(_) | EngineError::SessionBusy { .. } => ErrorCode::Conflict,
            EngineError::Config(_) | EngineError::NotConfigured(_) | EngineError::Agent(_) => {
                ErrorCode::Config
            }
            EngineError::Store(_)
            | EngineError::NoDataDir
            | EngineError::DataDir { .. }
            | EngineError::Write { .. }
            | EngineError::Keychain(_) => ErrorCode::Storage,
            EngineError::Llm(_) => ErrorCode::Llm,
            EngineError::Cancelled(_) | EngineError::ShuttingDown => ErrorCode::Cancelled,
            EngineError::Internal(_) => ErrorCode::Internal,
        }
    }
}

impl EngineError {
    /// How a turn of `session_id` that failed with this error says why: a full disk or a
    /// read-only database names the file (`db`) and says how to go on once it is fixed.
    pub fn turn_failure(&self, db: &Path, session_id: i64) -> String {
        let EngineError::Store(e) = self else { return self.to_string() };
        let resume = format!("`skald resume {session_id}`");
        match e.disk_problem() {
            Some(DiskProblem::Full) => {
                format!("the disk holding {} is full: free space, then {resume}", db.display())
            }
            Some(DiskProblem::ReadOnly) => {
                let named = StoreError::ReadOnly { path: db.to_path_buf() };
                format!("{named}; then {resume}")
            }
            None => self.to_string(),
        }
    }
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        match e {
            // A single-assignment clash (a call decided twice) is the caller's conflict, said in
            // the store's words.
            StoreError::Conflict(message) => EngineError::Conflict(message),
            other => EngineError::Store(other),
        }
    }
}

/// The only mapping from engine errors to the wire; every shell goes through it.
impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        ApiError::new(e.code(), e.to_string())
    }
}
