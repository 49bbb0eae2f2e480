//! Storage errors.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the database {path}: {source}")]
    Open { path: PathBuf, source: sqlx::Error },
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
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
}
