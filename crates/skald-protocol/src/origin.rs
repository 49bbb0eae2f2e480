//! Where an event comes from inside a session: the stack frame, its depth and, for sub-agents,
//! an origin label (`name#N`, nested with `>`), so every surface can draw agent lanes; and the one
//! way every surface names an agent's run (`agent_label`).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Separates the nested parts of an origin label (`researcher#42>coder#47`).
pub const ORIGIN_SEPARATOR: char = '>';

/// The stack frame an event comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FrameOrigin {
    /// The frame (`chat_sessions_stack` row).
    #[ts(type = "number")]
    pub stack_id: i64,
    /// 0 for the session's root frame, one more per sub-agent level.
    pub depth: u32,
    /// `null` for the root frame; for a sub-agent its chain of `agent#N` parts (N its frame)
    /// below the root, joined by `>`.
    pub label: Option<String>,
    /// The tool call (in the parent frame) that opened this frame; `null` for the root. Lets a
    /// surface draw a sub-agent's lane under the call that spawned it.
    #[ts(type = "number | null")]
    pub parent_tool_call_id: Option<i64>,
}

impl FrameOrigin {
    /// The session's root frame (the user's own agent): no label.
    pub fn root(stack_id: i64) -> Self {
        Self { stack_id, depth: 0, label: None, parent_tool_call_id: None }
    }

    /// A sub-agent frame `stack_id` running agent `agent_id`, opened from this frame by call
    /// `parent_tool_call_id`.
    pub fn child(&self, stack_id: i64, agent_id: &str, parent_tool_call_id: i64) -> Self {
        let part = agent_label(agent_id, stack_id);
        let label = match &self.label {
            Some(parent) => format!("{parent}{ORIGIN_SEPARATOR}{part}"),
            None => part,
        };
        Self {
            stack_id,
            depth: self.depth + 1,
            label: Some(label),
            parent_tool_call_id: Some(parent_tool_call_id),
        }
    }
}

/// Longest agent name a label shows; past it the name is cut with `…` (agent ids are short
/// folder names, a label is no place for a paragraph).
const LABEL_NAME_MAX: usize = 48;

/// How every surface names one run of an agent: `name#N`, N the id that names the run across
/// the database (a sub-agent's frame, an async task's session). The CLI, the app, events, the
/// inbox and what the model reads all take their labels from here (the UI's `agentLabel`
/// mirrors it). A name is not trusted to be printable: control characters, bidi controls and
/// invisible characters are shown as `\u{…}` escapes (and so is the nesting separator `>`) and a
/// long name is cut, so a label can neither drive a terminal nor hide or reorder what follows it.
pub fn agent_label(agent_id: &str, id: i64) -> String {
    let mut name = String::with_capacity(agent_id.len().min(LABEL_NAME_MAX * 4));
    for (i, c) in agent_id.chars().enumerate() {
        if i == LABEL_NAME_MAX {
            name.push('…');
            break;
        }
        if hides_text(c) || c == ORIGIN_SEPARATOR {
            let _ = write!(name, "\\u{{{:x}}}", u32::from(c));
        } else {
            name.push(c);
        }
    }
    format!("{name}#{id}")
}

/// `text` with every character that `hides_text` shown as a `\u{…}` escape, as labels show
/// them: for surfaces that draw untrusted text where no richer rendering exists (the tray menu).
pub fn shown_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if hides_text(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters a label shows escaped: controls (C0, DEL, C1), bidi controls, zero-width and
/// line-separating characters, the byte-order mark.
pub fn hides_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_has_no_label_and_children_nest_theirs() {
        let root = FrameOrigin::root(1);
        assert_eq!((root.depth, root.label.as_deref()), (0, None));
        let researcher = root.child(42, "researcher", 5);
        assert_eq!(researcher.depth, 1);
        assert_eq!(researcher.label.as_deref(), Some("researcher#42"));
        let coder = researcher.child(47, "coder", 9);
        assert_eq!((coder.stack_id, coder.depth), (47, 2));
        assert_eq!(coder.label.as_deref(), Some("researcher#42>coder#47"));
        assert_eq!((root.parent_tool_call_id, coder.parent_tool_call_id), (None, Some(9)));
    }

    #[test]
    fn a_label_is_the_name_and_the_number_and_shows_a_hostile_name_escaped() {
        assert_eq!(agent_label("scout", 2), "scout#2");
        assert_eq!(agent_label("scout", 1_234_567_890_123), "scout#1234567890123");
        // A terminal escape, a bidi override, a zero-width space, a newline: all shown.
        let label = agent_label("evil\u{1b}]0;pwned\u{7}\u{202e}x\u{200b}\ny", 3);
        assert_eq!(label, "evil\\u{1b}]0;pwned\\u{7}\\u{202e}x\\u{200b}\\u{a}y#3");
        assert!(!label.chars().any(hides_text), "{label:?}");
        // A long name is cut; the number always stays.
        let long = agent_label(&"a".repeat(10_000), 7);
        assert_eq!(long, format!("{}…#7", "a".repeat(LABEL_NAME_MAX)));
        // Non-ASCII letters are names like any other.
        assert_eq!(agent_label("späher", 9), "späher#9");
        assert_eq!(shown_escaped("a\u{202e}b\tc"), "a\\u{202e}b\\u{9}c");
        assert_eq!(shown_escaped("plain > text"), "plain > text");
        // A name cannot fake a nesting level.
        assert_eq!(agent_label("a>b", 4), "a\\u{3e}b#4");
    }
}
