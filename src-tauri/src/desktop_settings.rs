//! `desktop.json` in the data dir: settings of the desktop shell that `config.yml` does not know.
//!
//! `{"notifications": false}` turns native notifications off (documented as the
//! `desktop.notifications` setting). Read on every use, so an edit applies without a restart.

use std::path::Path;

use serde::Deserialize;

/// The file name, next to `config.yml` and the database.
pub const FILE_NAME: &str = "desktop.json";

/// The desktop shell's own settings; a missing file or key means the default.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct DesktopSettings {
    /// Show native notifications for approvals and failed turns.
    pub notifications: bool,
}

impl Default for DesktopSettings {
    fn default() -> Self {
        Self { notifications: true }
    }
}

impl DesktopSettings {
    /// Reads `desktop.json` from `data_dir`. A broken file keeps the defaults and says why in
    /// the log: a typo must not silence approvals without a trace.
    pub fn load(data_dir: &Path) -> Self {
        let path = data_dir.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Self::default(),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read desktop settings");
                return Self::default();
            }
        };
        serde_json::from_str(&text).unwrap_or_else(|error| {
            tracing::warn!(path = %path.display(), %error, "desktop settings ignored");
            Self::default()
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn load(contents: Option<&str>) -> DesktopSettings {
        let dir = tempfile::tempdir().unwrap();
        if let Some(contents) = contents {
            std::fs::write(dir.path().join(FILE_NAME), contents).unwrap();
        }
        DesktopSettings::load(dir.path())
    }

    #[test]
    fn notifications_are_on_unless_the_file_turns_them_off() {
        assert!(load(None).notifications);
        assert!(load(Some("{}")).notifications);
        assert!(!load(Some(r#"{"notifications": false}"#)).notifications);
        assert!(load(Some(r#"{"notifications": true, "later": 1}"#)).notifications);
    }

    #[test]
    fn a_broken_file_keeps_the_defaults() {
        assert!(load(Some("notifications: false")).notifications);
        assert!(load(Some(r#"{"notifications": "no"}"#)).notifications);
    }
}
