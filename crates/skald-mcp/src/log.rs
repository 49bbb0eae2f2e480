//! One plain log file per server (`logs/mcp/<name>.log`): its stderr, its log messages
//! (`notifications/message`) and what happened to the connection, each line stamped; rotated to
//! `<name>.log.1` past 5 MB. The last lines are also kept in memory for listings.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const ROTATE_BYTES: u64 = 5 * 1024 * 1024;
/// How many of the last lines a listing shows.
pub const RECENT_LINES: usize = 50;
/// Longest line kept (a server's log message can be any JSON value): the rest is cut.
const MAX_LINE_CHARS: usize = 2000;

#[derive(Debug, Clone)]
pub struct ServerLog {
    path: Option<PathBuf>,
    recent: Arc<Mutex<VecDeque<String>>>,
}

/// `text` fit for one log line: control characters (a newline, an escape sequence that would
/// move a terminal's cursor) become spaces, and it is cut at [`MAX_LINE_CHARS`].
pub fn sanitize(text: &str) -> String {
    let kept: String =
        text.chars().take(MAX_LINE_CHARS).map(|c| if c.is_control() { ' ' } else { c }).collect();
    let mut out = kept.trim_end().to_string();
    if text.chars().nth(MAX_LINE_CHARS).is_some() {
        out.push('…');
    }
    out
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
        Self {
            path: dir.map(|d| d.join(format!("{file}.log"))),
            recent: Arc::new(Mutex::new(VecDeque::with_capacity(RECENT_LINES))),
        }
    }

    /// The last [`RECENT_LINES`] lines, oldest first, as the file has them.
    pub fn recent(&self) -> Vec<String> {
        self.recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends `text` under `tag` (`stderr`, `lifecycle`, a log message's level), sanitised. A
    /// log that cannot be written is not worth failing a server for: the error goes to tracing
    /// instead.
    pub fn line(&self, tag: &str, text: &str) {
        let stamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
        let line = format!("{stamp} {:<11} {}", format!("[{}]", sanitize(tag)), sanitize(text));
        {
            let mut recent = self.recent.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if recent.len() == RECENT_LINES {
                recent.pop_front();
            }
            recent.push_back(line.clone());
        }
        let Some(path) = &self.path else { return };
        let write = || -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            if std::fs::metadata(path).is_ok_and(|m| m.len() > ROTATE_BYTES) {
                std::fs::rename(path, path.with_extension("log.1"))?;
            }
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
            writeln!(f, "{line}")
        };
        if let Err(e) = write() {
            tracing::warn!(path = %path.display(), "cannot write the MCP server log: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{MAX_LINE_CHARS, RECENT_LINES, ROTATE_BYTES, ServerLog};

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

    #[test]
    fn the_last_lines_are_kept_sanitised_and_bounded() {
        let log = ServerLog::new(None, "srv");
        log.line("info", "two\nlines \u{1b}[2J and a bell \u{7}");
        let recent = log.recent();
        assert_eq!(recent.len(), 1);
        assert!(recent[0].ends_with(" [info]      two lines  [2J and a bell"), "{recent:?}");
        log.line("debug", &"y".repeat(MAX_LINE_CHARS + 10));
        assert!(log.recent()[1].ends_with(&format!("{}…", "y".repeat(10))));
        for i in 0..RECENT_LINES + 5 {
            log.line("stderr", &format!("line {i}"));
        }
        let recent = log.recent();
        assert_eq!(recent.len(), RECENT_LINES);
        assert!(recent[0].ends_with("line 5"), "{}", recent[0]);
        assert!(recent[RECENT_LINES - 1].ends_with(&format!("line {}", RECENT_LINES + 4)));
    }
}
