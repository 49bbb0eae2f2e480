//! The one error shape every shell returns: a small code the UI can switch on, and a message.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of failure happened, coarse enough for a UI to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    NotFound,
    InvalidInput,
    Conflict,
    Config,
    Storage,
    Llm,
    Cancelled,
    Unauthorized,
    Internal,
}

/// Error returned at the boundary (Tauri command, HTTP, CLI `--json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}
