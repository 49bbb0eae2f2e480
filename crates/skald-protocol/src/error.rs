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

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &[ErrorCode] = &[
        ErrorCode::NotFound,
        ErrorCode::InvalidInput,
        ErrorCode::Conflict,
        ErrorCode::Config,
        ErrorCode::Storage,
        ErrorCode::Llm,
        ErrorCode::Cancelled,
        ErrorCode::Unauthorized,
        ErrorCode::Internal,
    ];

    /// The code as it is on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "not_found",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Config => "config",
            ErrorCode::Storage => "storage",
            ErrorCode::Llm => "llm",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Internal => "internal",
        }
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn all_lists_every_code_once_under_its_wire_name() {
        // The wire's own union, as ts-rs renders it from serde's attributes.
        let decl = ErrorCode::decl();
        let wire: Vec<&str> = decl.split('"').skip(1).step_by(2).collect();
        let ours: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(wire, ours);
        for code in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }
}
