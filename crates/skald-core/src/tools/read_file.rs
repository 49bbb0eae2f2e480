//! `read_file`: numbered lines of a text file, with a line range and a size cap.
//!
//! Output format: one line per file line, the 1-based number right-aligned in 6 columns, a tab,
//! then the text without its line terminator (`    12\tfn main() {`). Markers in `[… ]` say when
//! more lines exist or the output was cut.

use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::args::{Args, to_usize};
use super::blocking::run_blocking;
use super::text::{self, io_error};
use super::{
    Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolLimits, ToolOutput, label, names,
    paths,
};
use crate::regular_file;

/// Most lines one call returns.
const MAX_LINES: u64 = 2000;

pub(crate) struct ReadFile {
    def: ToolDef,
}

impl ReadFile {
    pub(crate) fn new() -> Self {
        Self {
            def: ToolDef {
                name: names::READ_FILE,
                description: "Read a text file. Returns numbered lines (`number<TAB>text`), at most \
                    2000 per call; use start_line/end_line to page through long files. Binary \
                    files are refused. Relative paths are resolved against the working directory.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File to read"},
                        "start_line": {"type": "integer", "minimum": 1, "description": "First line (1-based, default 1)"},
                        "end_line": {"type": "integer", "minimum": 1, "description": "Last line (inclusive)"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LINES, "description": "Most lines to return (default and max 2000)"}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
                category: ToolCategory::Filesystem,
                read_only: true,
            },
        }
    }
}

struct Request {
    path: PathBuf,
    start: usize,
    /// Last line the caller asked for (explicitly or through the limit).
    last: usize,
    /// Whether `last` came from the limit rather than `end_line` (then a "more" marker helps).
    limited: bool,
}

fn parse(args: &serde_json::Value, workdir: &Path) -> Result<Request, ToolError> {
    let a = Args::new(args)?;
    let raw = a.non_empty("path")?;
    let start = a.opt_positive("start_line")?.unwrap_or(1);
    let end = a.opt_positive("end_line")?;
    let limit = a.opt_positive("limit")?.unwrap_or(MAX_LINES);
    if limit > MAX_LINES {
        return Err(ToolError::InvalidArguments(format!(
            "`limit` must be between 1 and {MAX_LINES}"
        )));
    }
    if let Some(end) = end
        && end < start
    {
        return Err(ToolError::InvalidArguments(format!(
            "`end_line` ({end}) is before `start_line` ({start})"
        )));
    }
    let by_limit = start.saturating_add(limit - 1);
    let (last, limited) = match end {
        Some(end) if end <= by_limit => (end, false),
        _ => (by_limit, true),
    };
    let path = paths::resolve_path(workdir, raw)?;
    Ok(Request { path, start: to_usize(start), last: to_usize(last), limited })
}

/// Reads one line into `buf` keeping at most `cap` bytes; the rest of a huge line is skipped
/// so a file without newlines cannot exhaust memory. Returns None at end of file.
fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<bool>> {
    buf.clear();
    let mut cut = false;
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(any.then_some(cut));
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        if take > room {
            cut = true;
        }
        buf.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(take);
        if done {
            return Ok(Some(cut));
        }
    }
}

fn read(req: &Request, limits: ToolLimits) -> Result<String, ToolError> {
    let path = &req.path;
    let shown = path.display();
    // A FIFO, a device or a directory is refused before anything is read (and opening one
    // cannot block this call).
    let (mut file, meta) =
        regular_file::open(path).map_err(|e| text::refused(e, names::READ_FILE))?;
    let size = meta.len();
    let mut sniff = Vec::with_capacity(text::SNIFF_BYTES);
    (&mut file)
        .take(text::SNIFF_BYTES as u64)
        .read_to_end(&mut sniff)
        .map_err(|e| io_error("read", path, e))?;
    if text::looks_binary(&sniff) {
        return Err(text::binary_error(path, size, names::READ_FILE));
    }
    if size == 0 {
        return Ok(format!("{shown} is empty (0 bytes)"));
    }
    let mut reader = BufReader::new(Cursor::new(sniff).chain(file));
    let budget = limits.max_read_bytes;
    let mut out = String::new();
    let mut buf = Vec::new();
    let mut number = 0usize;
    let mut shown_range: Option<(usize, usize)> = None;
    let mut cut_by_size = false;
    let mut more_after = false;
    // The first shown line with bytes that are not UTF-8 (shown as `�`).
    let mut first_invalid: Option<usize> = None;
    while let Some(line_cut) =
        read_line_capped(&mut reader, &mut buf, budget).map_err(|e| io_error("read", path, e))?
    {
        number += 1;
        if number < req.start {
            continue;
        }
        if number > req.last {
            more_after = true;
            break;
        }
        if first_invalid.is_none() && std::str::from_utf8(&buf).is_err() {
            first_invalid = Some(number);
        }
        let body = String::from_utf8_lossy(&buf);
        let body = body.trim_end_matches(['\n', '\r']);
        let mut entry = text::number_line(number, body);
        if line_cut {
            entry = text::number_line(number, &format!("{body} [… line cut]"));
        }
        if out.len() + entry.len() > budget {
            cut_by_size = true;
            if out.is_empty() {
                // One giant line: show its start rather than nothing.
                let mut end = budget.min(entry.len());
                while !entry.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&entry[..end]);
                out.push('\n');
                shown_range = Some((number, number));
            }
            break;
        }
        out.push_str(&entry);
        shown_range = Some(match shown_range {
            Some((first, _)) => (first, number),
            None => (number, number),
        });
    }
    let Some((first, last)) = shown_range else {
        return Err(ToolError::Failed(format!(
            "start_line {} is past the end of {shown} ({number} lines)",
            req.start
        )));
    };
    if let Some(line) = first_invalid {
        out.push_str(&format!(
            "[note: this file is not all valid UTF-8; bytes that are not are shown as \u{fffd} \
             (the first on line {line}). Editing tools refuse it until it is converted.]\n"
        ));
    }
    if cut_by_size {
        out.push_str(&format!(
            "[… truncated: file is {size} bytes, showing lines {first}-{last}; use start_line/end_line]\n"
        ));
    } else if more_after && req.limited {
        out.push_str(&format!("[… more lines follow; continue with start_line={}]\n", last + 1));
    }
    Ok(out)
}

impl Tool for ReadFile {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let req = parse(args, &ctx.workdir)?;
            let limits = ctx.limits;
            run_blocking(&ctx.cancel, "read", move || read(&req, limits)).await
        })
    }

    fn target_path(&self, args: &serde_json::Value, workdir: &Path) -> Option<PathBuf> {
        paths::resolve_path_arg(args, workdir)
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        let n = |k: &str| args.get(k).map(|v| v.to_string().trim_matches('"').to_string());
        let range = match (n("start_line"), n("end_line")) {
            (Some(s), Some(e)) => format!(":{s}-{e}"),
            (Some(s), None) => format!(":{s}-"),
            (None, Some(e)) => format!(":1-{e}"),
            (None, None) => String::new(),
        };
        label::label(self.def.name, &format!("{}{range}", label::path_arg(args)), full)
    }
}
