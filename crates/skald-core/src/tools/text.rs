//! Text-file helpers shared by the file tools: binary sniffing, line endings, numbered excerpts.

use std::borrow::Cow;
use std::fs;
use std::io;
use std::path::Path;

use super::ToolError;

/// How much of a file decides whether it is text.
pub(crate) const SNIFF_BYTES: usize = 8 * 1024;
/// Edit tools hold the whole file in memory twice; beyond this an edit tool is the wrong tool.
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// A NUL byte or invalid UTF-8 means binary. A multi-byte char cut by the end of the sniffed
/// prefix is not an error.
pub(crate) fn looks_binary(prefix: &[u8]) -> bool {
    if prefix.contains(&0) {
        return true;
    }
    match std::str::from_utf8(prefix) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some(),
    }
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
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => {
            ToolError::Failed(format!("{shown} does not exist; use write_file to create it"))
        }
        _ => io_error("read", path, e),
    })?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!("{shown} is a directory, not a file")));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::Failed(format!(
            "{shown} is too large to edit ({} bytes; {tool} edits files up to {MAX_EDIT_BYTES} bytes)",
            meta.len()
        )));
    }
    let bytes = fs::read(path).map_err(|e| io_error("read", path, e))?;
    let len = bytes.len();
    if looks_binary(&bytes[..len.min(SNIFF_BYTES)]) {
        return Err(binary_error(path, len as u64, tool));
    }
    String::from_utf8(bytes).map_err(|_| binary_error(path, len as u64, tool))
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
