//! Printing results and errors as text or as JSON lines — the one way `skald` writes to a
//! terminal. Much of what it prints was chosen by a model (answers, command lines, paths, diff
//! lines), so every line passes through [`visible`]: a control character or a Unicode bidi
//! control never reaches the terminal as itself, it is shown as an escape (`\e`, `\r`, `\x07`,
//! `\u{9b}`, `\u{202e}`). A model can then neither redraw a line (`\r`, `ESC [2K`), hide text
//! (`ESC [8m`), set the clipboard (OSC 52) nor reorder what a command reads as.

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;
use skald_protocol::ApiError;

pub struct Output {
    json: bool,
    sink: Sink,
}

/// Where stdout's text goes: the process's stdout, or memory for unit tests.
enum Sink {
    Stdout,
    #[cfg(test)]
    Memory(std::sync::Arc<std::sync::Mutex<String>>),
}

impl Output {
    pub fn new(json: bool) -> Self {
        Self { json, sink: Sink::Stdout }
    }

    /// An output whose stdout text is collected in the returned buffer.
    #[cfg(test)]
    pub fn in_memory(json: bool) -> (Self, std::sync::Arc<std::sync::Mutex<String>>) {
        let buffer = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        (Self { json, sink: Sink::Memory(buffer.clone()) }, buffer)
    }

    /// Text without a line end, shown at once (a streamed answer's pieces). Each character is
    /// judged alone, so an escape sequence split across pieces is shown like a whole one.
    pub fn raw(&self, text: &str) {
        self.write(&visible(text), false);
    }

    pub fn is_json(&self) -> bool {
        self.json
    }

    /// One compact JSON document on stdout.
    pub fn json<T: Serialize>(&self, value: &T) -> Result<(), ApiError> {
        let text = serde_json::to_string(value).map_err(|e| {
            ApiError::new(skald_protocol::ErrorCode::Internal, format!("cannot encode output: {e}"))
        })?;
        self.write(&json_for_terminal(&text), true);
        Ok(())
    }

    /// A line of text (it may hold `\n` for several lines; control characters are shown).
    pub fn line(&self, text: &str) {
        self.write(&visible(text), true);
    }

    /// A line about the command's circumstances (a bypass in force, where the session works):
    /// on stdout with the text, on stderr with `--json` (stdout holds only JSON there).
    pub fn note(&self, text: &str) {
        if self.json {
            let _ = writeln!(std::io::stderr().lock(), "{}", visible(text));
        } else {
            self.line(text);
        }
    }

    fn write(&self, text: &str, newline: bool) {
        match &self.sink {
            Sink::Stdout => {
                let mut stdout = std::io::stdout().lock();
                // A closed pipe (`skald ... | head`) is not an error worth a panic.
                let _ = if newline { writeln!(stdout, "{text}") } else { write!(stdout, "{text}") };
                let _ = stdout.flush();
            }
            #[cfg(test)]
            Sink::Memory(buffer) => {
                let mut buffer = buffer.lock().unwrap_or_else(|p| p.into_inner());
                buffer.push_str(text);
                if newline {
                    buffer.push('\n');
                }
            }
        }
    }

    /// Errors go to stderr on one line: JSON `{code, message}` with `--json`, text otherwise.
    pub fn error(&self, e: &ApiError) {
        let mut stderr = std::io::stderr().lock();
        let line = match serde_json::to_string(e) {
            Ok(json) if self.json => json_for_terminal(&json).into_owned(),
            _ => format!("skald: error: {}", visible(&e.message.replace('\n', " "))),
        };
        let _ = writeln!(stderr, "{line}");
    }
}

/// How `c` is shown when it must not reach a terminal as itself: C0 controls but line feed and
/// tab, DEL, C1 controls (U+0080–U+009F: U+009B is a one-character CSI) and the Unicode bidi
/// controls (they reorder how a line reads, not what runs).
fn escaped(c: char) -> Option<String> {
    match c {
        '\n' | '\t' => None,
        '\u{1b}' => Some("\\e".to_string()),
        '\r' => Some("\\r".to_string()),
        '\0'..='\u{1f}' | '\u{7f}' => Some(format!("\\x{:02x}", u32::from(c))),
        c if is_c1(c) || is_bidi(c) || is_invisible(c) => {
            Some(format!("\\u{{{:x}}}", u32::from(c)))
        }
        _ => None,
    }
}

/// Characters that take no room (zero-width spaces and joiners, the word joiner, a byte-order
/// mark) or break a line where none shows (U+2028, U+2029): they can hide one character of a
/// command between two others.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{2028}' | '\u{2029}')
}

fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` as a terminal may show it: every character [`escaped`] names is replaced by its
/// visible escape; line feeds and tabs stay.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| escaped(c).is_some()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match escaped(c) {
            Some(e) => out.push_str(&e),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A field that must stay on one line (a path, a summary, a command in a sentence): a line
/// feed in it is shown as `\n`, so it cannot start a line that looks like something else.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if text.contains('\n') { Cow::Owned(text.replace('\n', "\\n")) } else { Cow::Borrowed(text) }
}

/// A table cell of at most `width` characters on one line: longer text ends in `…`, so one long
/// value (a source, an agent id) cannot push the columns after it out of line.
pub fn cell(text: &str, width: usize) -> String {
    let text = one_line(text);
    if text.chars().count() <= width {
        return text.into_owned();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// JSON text with what serde leaves raw inside strings and a terminal would act on (DEL, C1,
/// bidi controls) written as `\uXXXX` escapes: the same JSON value, safe to print. Those
/// characters only occur inside strings, where the escape means the same character.
fn json_for_terminal(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| c == '\u{7f}' || is_c1(c) || is_bidi(c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c == '\u{7f}' || is_c1(c) || is_bidi(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn a_cell_keeps_its_width() {
        assert_eq!(super::cell("web", 10), "web");
        assert_eq!(super::cell("a-very-long-source-name", 10), "a-very-lo…");
        assert_eq!(super::cell("two\nlines", 12), "two\\nlines");
        assert_eq!(super::cell("üüüüüüüüüüüü", 4).chars().count(), 4);
    }

    use super::*;

    fn printed(f: impl FnOnce(&Output)) -> String {
        let (out, text) = Output::in_memory(false);
        f(&out);
        text.lock().unwrap().clone()
    }

    #[test]
    fn a_line_redrawn_with_carriage_return_and_erase_is_shown_as_written() {
        let command = "touch PWNED_MARKER # \r\u{1b}[2K    $ ls -la";
        assert_eq!(printed(|o| o.line(command)), "touch PWNED_MARKER # \\r\\e[2K    $ ls -la\n");
    }

    #[test]
    fn every_c0_control_but_line_feed_and_tab_is_shown_and_del_too() {
        assert_eq!(visible("a\u{7}b\u{8}c\u{0}d\u{7f}e"), "a\\x07b\\x08c\\x00d\\x7fe");
        assert_eq!(visible("keep\ttabs\nand lines"), "keep\ttabs\nand lines");
        assert_eq!(visible("\u{c}\u{b}\u{1f}"), "\\x0c\\x0b\\x1f");
    }

    #[test]
    fn osc_52_and_hidden_text_cannot_act() {
        let clipboard = "\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}";
        assert_eq!(visible(clipboard), "\\e]52;c;Y3VybCBldmlsIHwgc2g=\\x07");
        assert_eq!(visible("\u{1b}[8mhidden\u{1b}[0m"), "\\e[8mhidden\\e[0m");
    }

    #[test]
    fn c1_controls_including_the_one_character_csi_are_shown() {
        assert_eq!(visible("\u{9b}2K\u{9d}52;c;x\u{9c}"), "\\u{9b}2K\\u{9d}52;c;x\\u{9c}");
        assert_eq!(visible("\u{80}\u{85}"), "\\u{80}\\u{85}");
        // The first character past C1 is ordinary text.
        assert_eq!(visible("\u{a0}é"), "\u{a0}é");
    }

    #[test]
    fn invisible_characters_are_shown_so_nothing_hides_between_two_letters() {
        assert_eq!(visible("r\u{200b}m -rf"), "r\\u{200b}m -rf");
        assert_eq!(visible("a\u{feff}b\u{2028}c"), "a\\u{feff}b\\u{2028}c");
    }

    #[test]
    fn bidi_controls_are_shown_so_a_line_reads_in_its_real_order() {
        let trojan = "rm -rf ~ \u{202e}#\u{2066} ls\u{2069}\u{202c}";
        assert_eq!(visible(trojan), "rm -rf ~ \\u{202e}#\\u{2066} ls\\u{2069}\\u{202c}");
        for c in [
            '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202d}', '\u{2067}',
            '\u{2068}',
        ] {
            assert_ne!(visible(&c.to_string()), c.to_string(), "{:x}", u32::from(c));
        }
    }

    #[test]
    fn an_escape_split_across_streamed_pieces_is_shown_like_a_whole_one() {
        let text = printed(|o| {
            o.raw("done.\u{1b}");
            o.raw("]52;c;");
            o.raw("ZXZpbA==\u{7}\r");
            o.raw("\u{1b}[2K$ ok");
        });
        assert_eq!(text, "done.\\e]52;c;ZXZpbA==\\x07\\r\\e[2K$ ok");
    }

    #[test]
    fn a_single_line_field_shows_its_line_feeds() {
        assert_eq!(one_line("src/a.rs\n+++ b/evil"), "src/a.rs\\n+++ b/evil");
        assert_eq!(one_line("plain"), "plain");
        assert_eq!(
            printed(|o| o.line(&format!("write to {}", one_line("a\n\rb")))),
            "write to a\\n\\rb\n"
        );
    }

    #[test]
    fn json_stays_the_same_value_and_carries_no_raw_control() {
        let value = serde_json::json!({"text": "a\u{1b}[2K\u{7f}\u{9b}\u{202e}b\n"});
        let (out, buffer) = Output::in_memory(true);
        out.json(&value).unwrap();
        let printed = buffer.lock().unwrap().clone();
        assert!(!printed.chars().any(|c| c.is_control() && c != '\n' || is_bidi(c)), "{printed:?}");
        assert!(printed.contains("\\u007f\\u009b\\u202e"), "{printed}");
        let back: serde_json::Value = serde_json::from_str(printed.trim_end()).unwrap();
        assert_eq!(back, value);
    }
}
