//! The crate's error type.

/// Errors from loading a reply script.
#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    #[error("cannot read script {path}: {source}")]
    ReadScript { path: String, source: std::io::Error },
    #[error("invalid reply script: {0}")]
    ParseScript(#[from] serde_json::Error),
}
