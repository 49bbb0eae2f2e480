//! The block structure of `config.yml` read from its lines: where `llm`, its `clients` items, their
//! keys and `fallback` sit, so an edit can replace exactly those bytes and leave the rest alone.

use std::ops::Range;

/// One line of the file.
#[derive(Debug, Clone)]
pub(super) struct Line<'a> {
    /// The text without its line break.
    pub text: &'a str,
    /// Byte range of the text, and where the next line starts (after `\n` or `\r\n`).
    pub start: usize,
    pub end: usize,
    pub next: usize,
    pub indent: usize,
    /// Neither blank nor a comment.
    pub content: bool,
}

pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        let (len, brk) = match rest.find('\n') {
            Some(i) if i > 0 && rest.as_bytes()[i - 1] == b'\r' => (i - 1, 2),
            Some(i) => (i, 1),
            None => (rest.len(), 0),
        };
        let line = &rest[..len];
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim_start();
        out.push(Line {
            text: line,
            start,
            end: start + len,
            next: start + len + brk,
            indent,
            content: !body.is_empty() && !body.starts_with('#'),
        });
        start += len + brk;
    }
    out
}

/// A `key:` of a block mapping: where the key starts and what follows its colon.
#[derive(Debug, Clone)]
pub(super) struct KeyAt {
    pub line: usize,
    /// Byte offset of the key in the file, and of the first byte after the colon.
    pub key_start: usize,
    pub after_colon: usize,
    /// The last line that belongs to the value (continuation lines included, trailing comments not).
    pub last: usize,
}

impl KeyAt {
    /// The value written on the key's own line, without its comment (empty for a block value).
    pub fn inline<'a>(&self, lines: &[Line<'a>]) -> &'a str {
        let line = &lines[self.line];
        let rest = &line.text[self.after_colon - line.start..];
        rest[..value_len(rest)].trim()
    }

    /// Bytes to replace to give the key a new one-line value: the inline value (the space before it
    /// included, its comment kept) when the value fits on the key's line, else everything up to the
    /// end of the value's last line.
    pub fn value_range(&self, lines: &[Line<'_>]) -> Range<usize> {
        let line = &lines[self.line];
        if self.last == self.line {
            let rest = &line.text[self.after_colon - line.start..];
            let len = value_len(rest);
            let trimmed = rest[..len].trim_end().len();
            self.after_colon..self.after_colon + trimmed
        } else {
            self.after_colon..lines[self.last].end
        }
    }
}

/// Length of the value part of `rest` (what follows a colon): up to a ` #` comment outside quotes.
fn value_len(rest: &str) -> usize {
    let bytes = rest.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'"') if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'#' && (i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') => {
                return i;
            }
            None => {}
        }
        i += 1;
    }
    bytes.len()
}

/// A plain `key:` (or `key: value`) at the start of `body`; returns the key's length.
fn key_len(body: &str, key: &str) -> Option<usize> {
    let rest = body.strip_prefix(key)?.strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some(key.len())
}

/// The last content line of the value that starts on line `from` (a key's or an item's line):
/// following lines belong to it while they are indented deeper than `indent`, or at `indent`
/// when `items_at_indent` and they are `-` items (a sequence may sit at its key's indent).
pub(super) fn value_end(
    lines: &[Line<'_>],
    from: usize,
    indent: usize,
    items_at_indent: bool,
) -> usize {
    let mut last = from;
    for (i, line) in lines.iter().enumerate().skip(from + 1) {
        if !line.content {
            continue;
        }
        let item = items_at_indent && line.indent == indent && is_dash(line.text.trim_start());
        if line.indent > indent || item {
            last = i;
        } else {
            break;
        }
    }
    last
}

fn is_dash(body: &str) -> bool {
    body == "-" || body.starts_with("- ")
}

/// The key `key` among the content lines `range` at exactly `indent` (a mapping's own keys).
pub(super) fn find_key(
    lines: &[Line<'_>],
    range: Range<usize>,
    indent: usize,
    key: &str,
) -> Option<KeyAt> {
    range.into_iter().find_map(|i| {
        let line = &lines[i];
        if !line.content || line.indent != indent {
            return None;
        }
        let len = key_len(&line.text[indent..], key)?;
        let key_start = line.start + indent;
        Some(KeyAt {
            line: i,
            key_start,
            after_colon: key_start + len + 1,
            last: value_end(lines, i, indent, true),
        })
    })
}

/// One `- ` item of a block sequence.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub first: usize,
    pub last: usize,
    /// Column of the item's mapping keys; `None` for an item that is not a block mapping
    /// (`- {name: a, ...}`, a scalar), which an edit rewrites whole.
    pub key_indent: Option<usize>,
}

/// The items of the block sequence that is the value of `key` (`None` when it is not one).
pub(super) fn items(lines: &[Line<'_>], key: &KeyAt) -> Option<Vec<Item>> {
    let first_item = (key.line + 1..=key.last).find(|&i| lines[i].content)?;
    let dash = lines[first_item].indent;
    let starts: Vec<usize> = (first_item..=key.last)
        .filter(|&i| {
            let l = &lines[i];
            l.content && l.indent == dash && is_dash(&l.text[dash..])
        })
        .collect();
    if starts.first() != Some(&first_item) {
        return None;
    }
    let items = starts
        .iter()
        .map(|&first| {
            let last = value_end(lines, first, dash, false);
            Item { first, last, key_indent: item_key_indent(lines, first, last, dash) }
        })
        .collect();
    Some(items)
}

/// Where an item's keys start: after `- ` on its first line, or on the next line for a bare `-`.
fn item_key_indent(lines: &[Line<'_>], first: usize, last: usize, dash: usize) -> Option<usize> {
    let text = lines[first].text;
    let after = &text[dash + 1..];
    let body = after.trim_start_matches(' ');
    if body.is_empty() || body.starts_with('#') {
        return (first + 1..=last).find(|&i| lines[i].content).map(|i| lines[i].indent);
    }
    let looks_like_key = body
        .split_once(':')
        .is_some_and(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'));
    looks_like_key.then_some(text.len() - body.len())
}

/// The keys of a block-mapping item, in file order.
pub(super) fn item_keys(lines: &[Line<'_>], item: &Item) -> Vec<(String, KeyAt)> {
    let Some(k) = item.key_indent else { return Vec::new() };
    let mut keys = Vec::new();
    for i in item.first..=item.last {
        let line = &lines[i];
        if !line.content || line.text.len() < k {
            continue;
        }
        // The first key shares the dash's line; the others start their own line at `k`.
        let at_key = if i == item.first { true } else { line.indent == k };
        if !at_key {
            continue;
        }
        let body = &line.text[k..];
        let Some((name, _)) = body.split_once(':') else { continue };
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if key_len(body, name).is_none() {
            continue;
        }
        let key_start = line.start + k;
        keys.push((
            name.to_owned(),
            KeyAt {
                line: i,
                key_start,
                after_colon: key_start + name.len() + 1,
                last: value_end(lines, i, k, true).min(item.last),
            },
        ));
    }
    keys
}
