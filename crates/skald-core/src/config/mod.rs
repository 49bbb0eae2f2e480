//! `config.yml` in the data dir: the typed configuration, its loading, validation and env overrides.

mod compaction_check;
mod edit;
mod env;
mod file;
mod mcp;
mod secrets;
mod sources;
mod tic;
mod watch;

pub use edit::{ClientEdit, McpEdit, MergeError, edit_mcp_servers, merge_clients};
pub use env::{ENV_API_KEY, ENV_CLIENT_NAME, EnvOverrides};
pub use file::{
    ClientConfig, CompactionConfig, Config, DatetimeConfig, LlmConfig, MemoryConfig,
    RequestLogConfig, Strength, default_config_text,
};
pub use mcp::{McpConfig, McpOAuthEntry, McpServerEntry};
pub use secrets::{KeyringSecrets, MemorySecrets, SecretError, SecretStore};
pub use sources::{MAX_SOURCE_TEXT_CHARS, SourceContext, SourceContextConfig, is_substitution_key};
pub use tic::{ActiveHours, TicConfig};
pub use watch::ConfigWatcher;

use std::path::{Path, PathBuf};

/// File name of the configuration inside the data dir.
pub const CONFIG_FILE_NAME: &str = "config.yml";

/// A configuration problem, always naming the file and, when known, the line and field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}:{line}:{column}: {message}", path = path.display())]
    Invalid { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path}: {message}", path = path.display())]
    Semantic { path: PathBuf, message: String },
    #[error("cannot read {path}: {message}", path = path.display())]
    Io { path: PathBuf, message: String },
}

/// Largest `config.yml` that is read. Real ones are a few kilobytes; a file this big is a
/// mistake (a log written into it, say), and parsing it at every change would stall the app.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The text of the configuration file at `path`, `None` when it does not exist. A file over
/// [`MAX_CONFIG_BYTES`] is refused without being read, and so is anything but a regular file (a
/// FIFO put in its place must not hang every reader of the configuration).
pub fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    use crate::regular_file::{self, ReadError};
    match regular_file::read_to_string(path, Some(MAX_CONFIG_BYTES)) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(ReadError::TooLarge { len, .. }) => Err(ConfigError::Semantic {
            path: path.to_path_buf(),
            message: format!(
                "the file is {:.1} MB, too large for a configuration (at most {} MB); is it the \
                 right file?",
                len as f64 / (1024.0 * 1024.0),
                MAX_CONFIG_BYTES / (1024 * 1024)
            ),
        }),
        Err(e @ ReadError::NotRegular { .. }) => Err(ConfigError::Io {
            path: path.to_path_buf(),
            message: format!(
                "{}; Skald reads its configuration from a regular file only (put one back, or \
                 remove it for the defaults)",
                e.reason()
            ),
        }),
        Err(e) => Err(ConfigError::Io { path: path.to_path_buf(), message: e.reason() }),
    }
}

/// Loads `dir/config.yml` (defaults when the file is absent) and applies env overrides.
pub fn load(dir: &Path, env: &EnvOverrides) -> Result<Config, ConfigError> {
    let path = dir.join(CONFIG_FILE_NAME);
    let text = read_text(&path)?;
    let mut config = match &text {
        Some(t) => file::parse(&path, t)?,
        None => Config::default(),
    };
    env.apply(&mut config);
    file::validate(&path, text.as_deref(), &config)?;
    compaction_check::check(&path, &config)?;
    Ok(config)
}

/// The configuration a file's text gives, checked like `load` checks it (no env overrides).
pub fn parse_text(path: &Path, text: &str) -> Result<Config, ConfigError> {
    let config = file::parse(path, text)?;
    file::validate(path, Some(text), &config)?;
    Ok(config)
}
