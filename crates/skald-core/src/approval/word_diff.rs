//! Word-level marks inside a changed line: which runs of an old line and its replacement differ.

use similar::{Algorithm, DiffOp, capture_diff_slices};
use skald_protocol::DiffSpan;

/// Lines with more tokens than this on either side get no marks (a minified line would make the
/// token diff quadratic for nothing a reviewer could read).
const MAX_TOKENS: usize = 2_000;
/// Below this share of unchanged text the two lines are a rewrite, not an edit: marking the
/// few bits they share by chance (a bracket, a space) would only be noise.
const MIN_SHARED: f64 = 0.5;

/// Marked runs of `old` and `new`, or two empty lists when marks would not help: the lines are
/// equal, share too little, or one side changed as a whole.
pub fn line_spans(old: &str, new: &str) -> (Vec<DiffSpan>, Vec<DiffSpan>) {
    let (a, b) = (tokens(old), tokens(new));
    if a.len() > MAX_TOKENS || b.len() > MAX_TOKENS {
        return (Vec::new(), Vec::new());
    }
    let mut old_spans = Vec::new();
    let mut new_spans = Vec::new();
    let mut shared = 0;
    for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
        let (_, old_range, new_range) = op.as_tag_tuple();
        let changed = !matches!(op, DiffOp::Equal { .. });
        if !changed {
            shared += a[old_range.clone()].iter().map(|t| t.len()).sum::<usize>();
        }
        push(&mut old_spans, a[old_range].concat(), changed);
        push(&mut new_spans, b[new_range].concat(), changed);
    }
    let total = old.len() + new.len();
    if total == 0 || (2 * shared) as f64 / (total as f64) < MIN_SHARED {
        return (Vec::new(), Vec::new());
    }
    (finish(old_spans), finish(new_spans))
}

/// Runs of letters, digits and `_`; runs of whitespace; every other character alone. Finer than
/// whitespace-separated words, so `println!("hello");` and `println!("hello, world");` share
/// `println`, `!`, `(`, `"` and `hello`.
fn tokens(line: &str) -> Vec<&str> {
    #[derive(PartialEq)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<Class> = None;
    for (i, c) in line.char_indices() {
        let now = class(c);
        let joins = prev.as_ref().is_some_and(|p| *p == now && now != Class::Other);
        if !joins && i > start {
            out.push(&line[start..i]);
            start = i;
        }
        prev = Some(now);
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

/// Appends a run, merging it into the previous one when both are marked alike.
fn push(spans: &mut Vec<DiffSpan>, text: String, changed: bool) {
    if text.is_empty() {
        return;
    }
    match spans.last_mut() {
        Some(last) if last.changed == changed => last.text.push_str(&text),
        _ => spans.push(DiffSpan { text, changed }),
    }
}

/// Folds blanks between two marked runs into one mark (`hello` `, world` reads as one change,
/// not two with a gap), then drops the marks when they say nothing: none or all changed.
fn finish(spans: Vec<DiffSpan>) -> Vec<DiffSpan> {
    let mut out: Vec<DiffSpan> = Vec::with_capacity(spans.len());
    let mut iter = spans.into_iter().peekable();
    while let Some(mut span) = iter.next() {
        let between_marks = !span.changed
            && span.text.chars().all(char::is_whitespace)
            && out.last().is_some_and(|l| l.changed)
            && iter.peek().is_some_and(|n| n.changed);
        if between_marks {
            span.changed = true;
        }
        push(&mut out, span.text, span.changed);
    }
    if out.iter().all(|s| s.changed) || out.iter().all(|s| !s.changed) {
        out.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(spans: &[DiffSpan]) -> Vec<&str> {
        spans.iter().filter(|s| s.changed).map(|s| s.text.as_str()).collect()
    }

    #[test]
    fn indentation_and_words_changed_are_both_marked() {
        let (old, new) = line_spans("    println!(\"hello\");", "\tprintln!(\"hello, world\");");
        assert_eq!(marks(&old), ["    "]);
        assert_eq!(marks(&new), ["\t", ", world"]);
        let text = |s: &[DiffSpan]| s.iter().map(|s| s.text.as_str()).collect::<String>();
        assert_eq!(text(&old), "    println!(\"hello\");");
        assert_eq!(text(&new), "\tprintln!(\"hello, world\");");
    }

    #[test]
    fn a_renamed_word_is_marked_without_its_punctuation() {
        let (old, new) = line_spans("let total = price * qty;", "let total = price * quantity;");
        assert_eq!(marks(&old), ["qty"]);
        assert_eq!(marks(&new), ["quantity"]);
    }

    #[test]
    fn blanks_between_two_changes_join_them() {
        let (old, new) = line_spans("call(a, b, keep, more)", "call(x y, keep, more)");
        assert_eq!(marks(&old), ["a, b"]);
        assert_eq!(marks(&new), ["x y"]);
    }

    #[test]
    fn rewrites_equal_lines_and_huge_lines_get_no_marks() {
        assert_eq!(line_spans("alpha (beta);", "gamma (delta);"), (vec![], vec![]));
        assert_eq!(line_spans("same", "same"), (vec![], vec![]));
        assert_eq!(line_spans("", "new"), (vec![], vec![]));
        let long = "x ".repeat(MAX_TOKENS);
        assert_eq!(line_spans(&long, &format!("{long}y")), (vec![], vec![]));
    }

    #[test]
    fn tokens_split_words_blanks_and_each_symbol() {
        assert_eq!(tokens("  a_1+=\"é\""), ["  ", "a_1", "+", "=", "\"", "é", "\""]);
        assert!(tokens("").is_empty());
    }
}
