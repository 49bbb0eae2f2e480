//! RunContext: per-session working directory, prompt fragments and pre-authorised paths.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Stored as JSON on the session (and on jobs); read at the start of every turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct RunContext {
    /// Effective cwd of the tools; `None` = the process cwd.
    pub working_directory: Option<String>,
    /// Fragments joined into the dynamic tail of every request.
    pub system_prompt: Vec<String>,
    /// Extra read-only roots (plain paths, prefix match on canonical paths).
    pub allow_fs_reads: Vec<String>,
    /// Write pre-authorisation (implies read).
    pub allow_fs_writes: Vec<String>,
    /// Permission group evaluated before `default`.
    pub security_group: Option<String>,
}

impl RunContext {
    pub fn parse(json: Option<&str>) -> Result<Self, serde_json::Error> {
        match json.map(str::trim).filter(|s| !s.is_empty() && *s != "null") {
            Some(j) => serde_json::from_str(j),
            None => Ok(Self::default()),
        }
    }

    /// The working directory, absolute: relative entries resolve against `fallback`.
    pub fn effective_workdir(&self, fallback: &Path) -> PathBuf {
        match self.working_directory.as_deref().filter(|w| !w.trim().is_empty()) {
            Some(w) if Path::new(w).is_absolute() => PathBuf::from(w),
            Some(w) => fallback.join(w),
            None => fallback.to_path_buf(),
        }
    }
}
