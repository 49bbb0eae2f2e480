//! FTS5 snippets as data: the text split into plain and matched stretches.
//!
//! SQLite marks matches with two private-use characters (never HTML, so no surface has to
//! escape or trust markup); this module turns the marked text into `SnippetPart`s.

use skald_protocol::SnippetPart;

/// Opens a match in `snippet()`; `char(57344)` in SQL.
pub const OPEN: char = '\u{E000}';
/// Closes a match; `char(57345)` in SQL.
pub const CLOSE: char = '\u{E001}';

/// `snippet()` arguments after the table: the best column, the markers, the ellipsis and the
/// window in tokens (`words` for message text, trigrams, about one per character, for calls).
pub fn snippet_sql(table: &str, tokens: u32) -> String {
    format!("snippet({table}, -1, char(57344), char(57345), '…', {tokens})")
}

/// Splits marked text into stretches. Runs of whitespace (newlines in code, indentation) become
/// one space: a snippet is a one-line preview. A marker character that was in the stored text
/// itself only moves a highlight; it can never produce markup.
pub fn parts(marked: &str) -> Vec<SnippetPart> {
    let mut parts = Parts::default();
    for c in marked.chars() {
        match c {
            OPEN | CLOSE => {
                // A space before a marker belongs to the stretch the marker ends.
                parts.take_space();
                parts.flush();
                parts.hit = c == OPEN;
            }
            c if c.is_whitespace() => parts.space = true,
            c => {
                parts.take_space();
                parts.text.push(c);
            }
        }
    }
    parts.flush();
    parts.out
}

#[derive(Default)]
struct Parts {
    out: Vec<SnippetPart>,
    /// The stretch being read, and whether it is a match.
    text: String,
    hit: bool,
    /// Whitespace was seen and not yet written (none is written at the start or the end).
    space: bool,
}

impl Parts {
    fn take_space(&mut self) {
        if self.space && !(self.out.is_empty() && self.text.is_empty()) {
            self.text.push(' ');
        }
        self.space = false;
    }

    fn flush(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        match self.out.last_mut() {
            Some(last) if last.hit == self.hit => last.text.push_str(&text),
            _ => self.out.push(SnippetPart { text, hit: self.hit }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str, hit: bool) -> SnippetPart {
        SnippetPart { text: text.into(), hit }
    }

    #[test]
    fn markers_become_hit_parts_and_whitespace_collapses() {
        let marked = format!("…fix the\n\n  {OPEN}parser{CLOSE} in {OPEN}src{CLOSE}\t");
        assert_eq!(
            parts(&marked),
            vec![
                part("…fix the ", false),
                part("parser", true),
                part(" in ", false),
                part("src", true)
            ]
        );
    }

    #[test]
    fn adjacent_matches_merge_and_html_stays_text() {
        let marked = format!("{OPEN}<b>{CLOSE}{OPEN}x{CLOSE}");
        assert_eq!(parts(&marked), vec![part("<b>x", true)]);
        assert_eq!(parts(""), Vec::<SnippetPart>::new());
    }
}
