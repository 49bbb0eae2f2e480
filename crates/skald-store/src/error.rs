//! Storage errors.

use std::path::{Path, PathBuf};

use crate::db_file::{self, DiskProblem};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the database {path}: {source}")]
    Open { path: PathBuf, source: sqlx::Error },
    /// The database file, its folder or its disk refuses writes.
    #[error("{}", db_file::read_only_message(path))]
    ReadOnly { path: PathBuf },
    /// The database (or its `-wal` or `-shm`) is a FIFO, a device or a folder.
    #[error(
        "{} is {kind}, not a regular file: Skald keeps its database in a regular file; move it \
         away and start Skald again",
        path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    /// No space left for the database (its `-wal` grows with every write).
    #[error("the disk holding {} is full: free space, then try again", path.display())]
    DiskFull { path: PathBuf },
    #[error(
        "the database {path} has schema version {found}, newer than this Skald build supports \
         ({supported}); upgrade Skald, or point --data-dir at another folder"
    )]
    SchemaTooNew { path: PathBuf, found: i64, supported: i64 },
    #[error("migrating the database {path} failed: {source}")]
    Migrate { path: PathBuf, source: sqlx::migrate::MigrateError },
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: i64 },
    #[error("invalid stored value in {column}: {value}")]
    Corrupt { column: &'static str, value: String },
    #[error("conflict: {0}")]
    Conflict(String),
    /// Any other failure of SQLite; a read-only database or a full disk met where the file is
    /// not known is still said as such.
    #[error("{}", sql_message(.0))]
    Sql(#[from] sqlx::Error),
}

impl StoreError {
    /// The read-only file or full disk behind this error, if that is what it is.
    pub fn disk_problem(&self) -> Option<DiskProblem> {
        match self {
            StoreError::ReadOnly { .. } => Some(DiskProblem::ReadOnly),
            StoreError::DiskFull { .. } => Some(DiskProblem::Full),
            StoreError::Open { source: e, .. } | StoreError::Sql(e) => db_file::problem_of(e),
            StoreError::Migrate { source: sqlx::migrate::MigrateError::Execute(e), .. } => {
                db_file::problem_of(e)
            }
            _ => None,
        }
    }

    /// This error with the database file named, when it is a read-only file or a full disk.
    pub fn naming(self, path: &Path) -> StoreError {
        let path = path.to_path_buf();
        match self.disk_problem() {
            Some(DiskProblem::ReadOnly) => StoreError::ReadOnly { path },
            Some(DiskProblem::Full) => StoreError::DiskFull { path },
            None => self,
        }
    }
}

fn sql_message(e: &sqlx::Error) -> String {
    match db_file::problem_of(e) {
        Some(DiskProblem::ReadOnly) => format!(
            "Skald's database (skald.db in the data dir) is read-only: Skald needs to write it \
             ({e})"
        ),
        Some(DiskProblem::Full) => format!(
            "the disk holding Skald's database (skald.db in the data dir) is full: free space, \
             then try again ({e})"
        ),
        None => format!("database error: {e}"),
    }
}
