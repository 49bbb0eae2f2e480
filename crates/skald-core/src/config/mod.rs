//! `config.yml` in the data dir: the typed configuration, its loading, validation and env overrides.

mod compaction_check;
mod edit;
mod env;
mod file;
mod secrets;
mod watch;

pub use edit::{ClientEdit, merge_clients};
pub use env::{ENV_API_KEY, EnvOverrides};
pub use file::{
    ClientConfig, CompactionConfig, Config, DatetimeConfig, LlmConfig, RequestLogConfig, Strength,
    default_config_text,
};
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

/// Loads `dir/config.yml` (defaults when the file is absent) and applies env overrides.
pub fn load(dir: &Path, env: &EnvOverrides) -> Result<Config, ConfigError> {
    let path = dir.join(CONFIG_FILE_NAME);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ConfigError::Io { path, message: e.to_string() }),
    };
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
