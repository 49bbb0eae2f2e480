//! The diff a human reviews before a write: line hunks with word-level changes inside changed
//! lines, plus the unified text, computed with `similar` when the call is parked.

use similar::{ChangeTag, DiffOp, DiffTag, TextDiff};
use skald_protocol::{DiffHunk, DiffKind, DiffLine, DiffLineTag, FileDiff};

use super::word_diff::line_spans;

/// Above this many bytes on either side only a summary is shown.
pub const MAX_DIFF_BYTES: usize = 1_000_000;
/// Above this many lines on either side only a summary is shown.
pub const MAX_DIFF_LINES: usize = 20_000;
const CONTEXT_LINES: usize = 3;

/// Diff of `old` (None = the file does not exist) → `new` (None = the file is deleted).
pub fn file_diff(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> FileDiff {
    let old_text = old.map(std::str::from_utf8);
    let new_text = new.map(std::str::from_utf8);
    let binary = old.is_some_and(|b| b.contains(&0))
        || new.is_some_and(|b| b.contains(&0))
        || matches!(old_text, Some(Err(_)))
        || matches!(new_text, Some(Err(_)));
    let mut d = FileDiff {
        path: path.to_string(),
        kind: DiffKind::Modify,
        hunks: Vec::new(),
        added: 0,
        removed: 0,
        unified: String::new(),
        summary: String::new(),
        crlf: false,
        old_missing_newline: false,
        new_missing_newline: false,
    };
    if binary {
        d.kind = DiffKind::Binary;
        d.summary =
            format!("binary file: {} → {}", size(old.map(<[u8]>::len)), size(new.map(<[u8]>::len)));
        return d;
    }
    let old_s = old_text.and_then(Result::ok).unwrap_or("");
    let new_s = new_text.and_then(Result::ok).unwrap_or("");
    d.crlf = old_s.contains("\r\n") || (old.is_none() && new_s.contains("\r\n"));
    d.old_missing_newline = !old_s.is_empty() && !old_s.ends_with('\n');
    d.new_missing_newline = !new_s.is_empty() && !new_s.ends_with('\n');
    let too_large = old_s.len().max(new_s.len()) > MAX_DIFF_BYTES
        || old_s.lines().count().max(new_s.lines().count()) > MAX_DIFF_LINES;
    if too_large {
        d.kind = DiffKind::TooLarge;
        d.summary = format!(
            "file too large to show line by line: {} → {}",
            size(old.map(<[u8]>::len)),
            size(new.map(<[u8]>::len))
        );
        return d;
    }
    let diff = TextDiff::from_lines(old_s, new_s);
    for group in diff.grouped_ops(CONTEXT_LINES) {
        d.hunks.push(hunk(&diff, &group));
    }
    for h in &d.hunks {
        for l in &h.lines {
            match l.tag {
                DiffLineTag::Insert => d.added += 1,
                DiffLineTag::Delete => d.removed += 1,
                DiffLineTag::Context => {}
            }
        }
    }
    let sep = if path.starts_with('/') { "" } else { "/" };
    let (a, b) = match (old, new) {
        (None, _) => ("/dev/null".to_string(), format!("b{sep}{path}")),
        (_, None) => (format!("a{sep}{path}"), "/dev/null".to_string()),
        _ => (format!("a{sep}{path}"), format!("b{sep}{path}")),
    };
    d.unified = diff.unified_diff().context_radius(CONTEXT_LINES).header(&a, &b).to_string();
    let lines = new_s.lines().count();
    (d.kind, d.summary) = match (old, new) {
        (None, _) => (DiffKind::Create, format!("new file, {lines} line{}", plural(lines))),
        (_, None) => (DiffKind::Delete, format!("delete file ({} removed)", d.removed)),
        _ if d.hunks.is_empty() => (DiffKind::Unchanged, "no changes".to_string()),
        _ => (DiffKind::Modify, format!("+{} −{}", d.added, d.removed)),
    };
    // Lines that differ only in `\r` look the same on both sides: say what changed.
    if let (Some(_), Some(_)) = (old, new)
        && let (Some(before), Some(after)) = (ending(old_s), ending(new_s))
        && before != after
    {
        d.summary.push_str(&format!(" · line endings {before} → {after}"));
    }
    d
}

/// The line ending a text mostly uses, `None` for a text without line breaks.
fn ending(text: &str) -> Option<&'static str> {
    let breaks = text.matches('\n').count();
    if breaks == 0 {
        return None;
    }
    let crlf = text.matches("\r\n").count();
    Some(if crlf * 2 > breaks { "CRLF" } else { "LF" })
}

fn hunk<'a>(diff: &'a TextDiff<'a, 'a, 'a, str>, ops: &[DiffOp]) -> DiffHunk {
    let (first, last) = match (ops.first(), ops.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => {
            return DiffHunk {
                old_start: 0,
                old_lines: 0,
                new_start: 0,
                new_lines: 0,
                lines: vec![],
            };
        }
    };
    let old_range = first.old_range().start..last.old_range().end;
    let new_range = first.new_range().start..last.new_range().end;
    let mut lines = Vec::new();
    for op in ops {
        let first = lines.len();
        for change in diff.iter_changes(op) {
            let tag = match change.tag() {
                ChangeTag::Equal => DiffLineTag::Context,
                ChangeTag::Delete => DiffLineTag::Delete,
                ChangeTag::Insert => DiffLineTag::Insert,
            };
            lines.push(DiffLine {
                tag,
                old_line: change.old_index().map(|i| line_no(i + 1)),
                new_line: change.new_index().map(|i| line_no(i + 1)),
                text: strip_eol(change.value()).to_string(),
                spans: Vec::new(),
            });
        }
        if op.tag() == DiffTag::Replace {
            mark_words(&mut lines[first..]);
        }
    }
    DiffHunk {
        old_start: line_no(old_range.start + usize::from(!old_range.is_empty())),
        old_lines: line_no(old_range.len()),
        new_start: line_no(new_range.start + usize::from(!new_range.is_empty())),
        new_lines: line_no(new_range.len()),
        lines,
    }
}

/// Pairs the n-th deleted line of a replacement with its n-th inserted line, as the side-by-side
/// view shows them, and marks the words that differ within each pair.
fn mark_words(replaced: &mut [DiffLine]) {
    let deleted = replaced.iter().take_while(|l| l.tag == DiffLineTag::Delete).count();
    let (old, new) = replaced.split_at_mut(deleted);
    for (o, n) in old.iter_mut().zip(new.iter_mut()) {
        (o.spans, n.spans) = line_spans(&o.text, &n.text);
    }
}

fn strip_eol(s: &str) -> &str {
    s.strip_suffix("\r\n").or_else(|| s.strip_suffix('\n')).unwrap_or(s)
}

fn line_no(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn size(n: Option<usize>) -> String {
    match n {
        None => "none".to_string(),
        Some(b) if b < 1024 => format!("{b} B"),
        Some(b) if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        Some(b) => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}
