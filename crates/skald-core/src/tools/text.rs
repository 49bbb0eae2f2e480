//! Text-file helpers shared by the file tools: binary sniffing, line endings, numbered excerpts.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use super::ToolError;
use crate::regular_file::{self, NotRegular, ReadError};

/// How much of a file decides whether it is text.
pub(crate) const SNIFF_BYTES: usize = 8 * 1024;
/// Edit tools hold the whole file in memory twice; beyond this an edit tool is the wrong tool.
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// A NUL byte, or bytes that are not UTF-8 in more than one place in eight, mean binary. A few
/// stray bytes (a Latin-1 `é` in an otherwise ASCII file) do not: such a file is text with a
/// wrong byte here and there, which `read_file` shows as `�` and says so. A multi-byte char cut
/// by the end of the sniffed prefix is not an error.
pub(crate) fn looks_binary(prefix: &[u8]) -> bool {
    if prefix.contains(&0) {
        return true;
    }
    invalid_utf8_sequences(prefix) * 8 > prefix.len()
}

/// How many invalid UTF-8 sequences `bytes` holds (a char cut at the very end is not one).
pub(crate) fn invalid_utf8_sequences(bytes: &[u8]) -> usize {
    let mut count = 0;
    let mut rest = bytes;
    while let Err(e) = std::str::from_utf8(rest) {
        let Some(len) = e.error_len() else { break };
        count += 1;
        rest = &rest[e.valid_up_to() + len..];
    }
    count
}

/// The 1-based line of the first byte that is not UTF-8, if any.
fn first_invalid_line(bytes: &[u8]) -> Option<usize> {
    let at = match std::str::from_utf8(bytes) {
        Ok(_) => return None,
        Err(e) => e.valid_up_to(),
    };
    Some(bytes[..at].iter().filter(|b| **b == b'\n').count() + 1)
}

/// An IO error as a sentence naming the path.
pub(crate) fn io_error(action: &str, path: &Path, e: io::Error) -> ToolError {
    let shown = path.display();
    ToolError::Failed(match e.kind() {
        io::ErrorKind::NotFound => format!("{shown} does not exist"),
        io::ErrorKind::PermissionDenied => format!("permission denied: cannot {action} {shown}"),
        _ => format!("cannot {action} {shown}: {e}"),
    })
}

/// The whole content of an existing text file, for the edit tools.
pub(crate) fn read_text_for_edit(path: &Path, tool: &str) -> Result<String, ToolError> {
    let shown = path.display();
    let bytes = regular_file::read(path, Some(MAX_EDIT_BYTES)).map_err(|e| match e {
        e if e.is_not_found() => {
            ToolError::Failed(format!("{shown} does not exist; use write_file to create it"))
        }
        ReadError::TooLarge { len, .. } => ToolError::Failed(format!(
            "{shown} is too large to edit ({len} bytes; {tool} edits files up to {MAX_EDIT_BYTES} bytes)"
        )),
        e => refused(e, tool),
    })?;
    let len = bytes.len();
    if looks_binary(&bytes[..len.min(SNIFF_BYTES)]) {
        return Err(binary_error(path, len as u64, tool));
    }
    String::from_utf8(bytes).map_err(|e| {
        // An edit would write the file back as UTF-8 and change bytes nobody asked about.
        let line = first_invalid_line(e.as_bytes()).unwrap_or(1);
        ToolError::Failed(format!(
            "{} is not valid UTF-8 (the first byte that is not is on line {line}); {tool} would \
             change those bytes, so it edits UTF-8 text only: convert the file first (e.g. \
             `iconv -f latin1 -t utf-8`) or rewrite it whole with write_file",
            path.display()
        ))
    })
}

/// A file tool's answer when its file could not be read: a directory or a FIFO named as what it
/// is, any other failure as an IO error naming the path.
pub(crate) fn refused(e: ReadError, tool: &str) -> ToolError {
    match e {
        ReadError::NotRegular { path, kind: NotRegular::Directory } => {
            ToolError::Failed(if tool == super::names::READ_FILE {
                format!("{} is a directory; use list_dir to see its entries", path.display())
            } else {
                format!("{} is a directory, not a file", path.display())
            })
        }
        ReadError::NotRegular { path, kind } => {
            let verb = match tool {
                super::names::READ_FILE => "reads",
                super::names::WRITE_FILE => "writes",
                _ => "edits",
            };
            ToolError::Failed(format!(
                "{} is {}, not a regular file; {tool} {verb} regular files only",
                path.display(),
                kind.describe()
            ))
        }
        ReadError::Io { path, source } => io_error("read", &path, source),
        too_large @ ReadError::TooLarge { .. } => ToolError::Failed(too_large.to_string()),
    }
}

pub(crate) fn binary_error(path: &Path, len: u64, tool: &str) -> ToolError {
    let verb = if tool == super::names::READ_FILE { "reads" } else { "edits" };
    ToolError::Failed(format!(
        "{} is a binary file ({len} bytes); {tool} only {verb} text",
        path.display()
    ))
}

/// The line ending a file mostly uses; edits keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    Lf,
    CrLf,
}

impl LineEnding {
    pub(crate) fn detect(content: &str) -> Self {
        let crlf = content.matches("\r\n").count();
        let lf = content.matches('\n').count();
        if crlf > 0 && crlf * 2 >= lf { Self::CrLf } else { Self::Lf }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
        }
    }

    /// Model-written text uses `\n`; in a CRLF file it becomes `\r\n`. Text that already
    /// contains `\r` is taken as deliberate and left alone.
    pub(crate) fn apply(self, text: &str) -> Cow<'_, str> {
        if self == Self::CrLf && text.contains('\n') && !text.contains('\r') {
            Cow::Owned(text.replace('\n', "\r\n"))
        } else {
            Cow::Borrowed(text)
        }
    }
}

/// The lines of `content`, each with its terminator (the last may have none).
pub(crate) fn lines_inclusive(content: &str) -> Vec<&str> {
    content.split_inclusive('\n').collect()
}

/// The number of lines `text` adds when inserted (a final unterminated line counts).
pub(crate) fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// Lines `first..=last` (1-based) of `content` with `context` lines around, numbered like
/// `read_file` output, so the model sees the result of its edit without another read.
pub(crate) fn numbered_excerpt(content: &str, first: usize, last: usize, context: usize) -> String {
    let lines = lines_inclusive(content);
    if lines.is_empty() {
        return String::from("(the file is now empty)\n");
    }
    let from = first.saturating_sub(context).max(1);
    let to = (last + context).min(lines.len());
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate().take(to).skip(from - 1) {
        out.push_str(&number_line(i + 1, line.trim_end_matches(['\n', '\r'])));
    }
    out
}

/// The `read_file` line format: number right-aligned in 6 columns, a tab, the text.
pub(crate) fn number_line(number: usize, text: &str) -> String {
    format!("{number:>6}\t{text}\n")
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use crate::tools::{ToolContext, ToolError, ToolRegistry, names};

    fn mkfifo(path: &Path) {
        assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    }

    /// A working dir holding `pipe` (a FIFO nobody writes), `link.txt` (a link to it) and
    /// `zero` (a link to /dev/zero, which never ends).
    fn workdir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let wd = dir.path().canonicalize().unwrap();
        mkfifo(&wd.join("pipe"));
        std::os::unix::fs::symlink(wd.join("pipe"), wd.join("link.txt")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", wd.join("zero")).unwrap();
        (dir, wd)
    }

    /// What the model is told when `tool` runs with `args`; a hang fails the test (the call runs
    /// on a thread of its own, so a blocked read cannot hold the test up).
    fn told(tool: &'static str, args: serde_json::Value, wd: &Path) -> String {
        let wd = wd.to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let ctx = ToolContext::new(&wd, CancellationToken::new());
            let registry = ToolRegistry::builtin();
            let t = registry.get(tool).unwrap();
            // The approval diff of a write is refused the same way, before anyone is asked.
            let predicted = t.predict_write(&args, &ctx).map(|p| match p {
                Err(ToolError::Failed(message)) => message,
                other => panic!("{tool} {args}: predicted {other:?}"),
            });
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let message = match rt.block_on(t.run(&args, &ctx)) {
                Ok(out) => panic!("{tool} {args} succeeded: {}", out.text),
                Err(ToolError::Failed(message)) => message,
                Err(e) => panic!("{tool} {args}: {e}"),
            };
            if let Some(predicted) = predicted {
                assert_eq!(predicted, message);
            }
            let _ = tx.send(message);
        });
        rx.recv_timeout(Duration::from_secs(10)).expect("the tool blocked on a special file")
    }

    #[test]
    fn every_file_tool_refuses_a_fifo_a_link_to_one_and_a_device_without_blocking() {
        let (_d, wd) = workdir();
        let pipe = wd.join("pipe").display().to_string();
        let shown = |name: &str| wd.join(name).display().to_string();
        assert_eq!(
            told(names::READ_FILE, json!({"path": "pipe"}), &wd),
            format!(
                "{pipe} is a FIFO (named pipe), not a regular file; read_file reads regular files only"
            )
        );
        // The link resolves to the FIFO: the message names where it leads.
        assert_eq!(
            told(names::READ_FILE, json!({"path": "link.txt"}), &wd),
            format!(
                "{pipe} is a FIFO (named pipe), not a regular file; read_file reads regular files only"
            )
        );
        assert_eq!(
            told(names::READ_FILE, json!({"path": "/dev/zero"}), &wd),
            "/dev/zero is a character device, not a regular file; read_file reads regular files only"
        );
        assert!(told(names::READ_FILE, json!({"path": "zero"}), &wd).contains("character device"));
        assert_eq!(
            told(names::WRITE_FILE, json!({"path": "pipe", "content": "x"}), &wd),
            format!(
                "{pipe} is a FIFO (named pipe), not a regular file; write_file writes regular files only"
            )
        );
        assert_eq!(
            told(names::EDIT_FILE, json!({"path": "pipe", "old": "a", "new": "b"}), &wd),
            format!(
                "{pipe} is a FIFO (named pipe), not a regular file; edit_file edits regular files only"
            )
        );
        let insert = json!({"path": "link.txt", "line": 1, "content": "x"});
        assert!(
            told(names::INSERT_AT_LINE, insert, &wd)
                .contains("insert_at_line edits regular files only")
        );
        let replace = json!({"path": "pipe", "from_line": 1, "to_line": 1, "new": "x"});
        assert!(
            told(names::REPLACE_LINES, replace, &wd)
                .contains("replace_lines edits regular files only")
        );
        // Nothing was written in place of the FIFO.
        let kind = std::fs::symlink_metadata(shown("pipe")).unwrap().file_type();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
    }

    #[test]
    fn a_directory_keeps_its_own_advice() {
        let (_d, wd) = workdir();
        assert!(
            told(names::READ_FILE, json!({"path": "."}), &wd)
                .ends_with("is a directory; use list_dir to see its entries")
        );
        assert!(
            told(names::EDIT_FILE, json!({"path": ".", "old": "a", "new": "b"}), &wd)
                .ends_with("is a directory, not a file")
        );
        assert!(
            told(names::WRITE_FILE, json!({"path": ".", "content": "x"}), &wd)
                .ends_with("is a directory, not a file")
        );
    }
}
