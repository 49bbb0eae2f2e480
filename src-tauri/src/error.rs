//! Errors of the desktop shell itself (window setup); engine errors reach the UI as `ApiError`.

/// Why the shell could not set itself up.
#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    #[error("tauri.conf.json declares no window labelled `{0}`")]
    MissingWindowConfig(&'static str),
    #[error("could not build the startup error page: {0}")]
    ErrorPageUrl(#[from] url::ParseError),
    #[error(transparent)]
    Tauri(#[from] tauri::Error),
}
