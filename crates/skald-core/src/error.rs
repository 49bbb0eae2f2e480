//! Engine errors and their mapping to the wire `ApiError`.

use skald_protocol::{ApiError, ErrorCode};
use skald_store::StoreError;

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("configuration error: {0}")]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no data directory: pass --data-dir or set SKALD_DATA_DIR")]
    NoDataDir,
    #[error("cannot use the data directory {path}: {message}")]
    DataDir { path: String, message: String },
    #[error("{0}")]
    InvalidInput(String),
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let code = match &e {
            EngineError::Config(_) => ErrorCode::Config,
            EngineError::Store(StoreError::NotFound { .. }) => ErrorCode::NotFound,
            EngineError::Store(StoreError::Conflict(_)) => ErrorCode::Conflict,
            EngineError::Store(_) | EngineError::NoDataDir | EngineError::DataDir { .. } => {
                ErrorCode::Storage
            }
            EngineError::InvalidInput(_) => ErrorCode::InvalidInput,
        };
        ApiError::new(code, e.to_string())
    }
}
