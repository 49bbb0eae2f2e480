//! One plain log file per server (`logs/mcp/<name>.log`): its stderr and what happened to the
//! connection, each line stamped; rotated to `<name>.log.1` past 5 MB.

use std::io::Write as _;
use std::path::{Path, PathBuf};

const ROTATE_BYTES: u64 = 5 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct ServerLog {
    path: Option<PathBuf>,
}

impl ServerLog {
    /// The log of `server` under `dir` (`None`: log nowhere, for tests and one-off listings).
    pub fn new(dir: Option<&Path>, server: &str) -> Self {
        let file: String = server
            .chars()
            .map(
                |c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' },
            )
            .collect();
        Self { path: dir.map(|d| d.join(format!("{file}.log"))) }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends `text` under `tag` (`stderr`, `lifecycle`). A log that cannot be written is not
    /// worth failing a server for: the error goes to tracing instead.
    pub fn line(&self, tag: &str, text: &str) {
        let Some(path) = &self.path else { return };
        let stamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
        let write = || -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            if std::fs::metadata(path).is_ok_and(|m| m.len() > ROTATE_BYTES) {
                std::fs::rename(path, path.with_extension("log.1"))?;
            }
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
            writeln!(f, "{stamp} {:<11} {}", format!("[{tag}]"), text.trim_end())
        };
        if let Err(e) = write() {
            tracing::warn!(path = %path.display(), "cannot write the MCP server log: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{ROTATE_BYTES, ServerLog};

    #[test]
    fn lines_are_stamped_tagged_and_rotated() {
        let dir = tempfile::tempdir().unwrap();
        let log = ServerLog::new(Some(dir.path()), "my/srv");
        log.line("lifecycle", "connected (3 tools)\n");
        let path = dir.path().join("my_srv.log");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with(" [lifecycle] connected (3 tools)\n"), "{text}");
        std::fs::write(&path, vec![b'x'; ROTATE_BYTES as usize + 1]).unwrap();
        log.line("stderr", "after");
        assert!(dir.path().join("my_srv.log.1").exists());
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("[stderr]    after\n"));
    }
}
