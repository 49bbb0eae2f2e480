//! `config.yml` in the data dir: the typed configuration, its loading, validation and env overrides.

mod compaction_check;
mod edit;
mod env;
mod file;
mod mcp;
mod secrets;
mod watch;

pub use edit::{ClientEdit, McpEdit, MergeError, edit_mcp_servers, merge_clients};
pub use env::{ENV_API_KEY, EnvOverrides};
pub use file::{
    ClientConfig, CompactionConfig, Config, DatetimeConfig, LlmConfig, RequestLogConfig, Strength,
    default_config_text,
};
pub use mcp::{McpConfig, McpServerEntry};
pub use secrets::{KeyringSecrets, MemorySecrets, SecretError, SecretStore};
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
/// [`MAX_CONFIG_BYTES`] is refused without being read.
pub fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    use std::io::Read as _;
    let io =
        |e: std::io::Error| ConfigError::Io { path: path.to_path_buf(), message: e.to_string() };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let too_big = |len: u64| ConfigError::Semantic {
        path: path.to_path_buf(),
        message: format!(
            "the file is {:.1} MB, too large for a configuration (at most {} MB); is it the right \
             file?",
            len as f64 / (1024.0 * 1024.0),
            MAX_CONFIG_BYTES / (1024 * 1024)
        ),
    };
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_CONFIG_BYTES {
        return Err(too_big(len));
    }
    // Bounded even if the file grows between the size check and the read.
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text).map_err(io)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big(text.len() as u64));
    }
    Ok(Some(text))
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
