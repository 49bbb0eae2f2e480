//! Where an event comes from inside a session: the stack frame, its depth and, for sub-agents,
//! an origin label (`name#shortid`, nested with `>`), so every surface can draw agent lanes.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Separates the nested parts of an origin label (`researcher#0000002a>coder#0000002f`).
pub const ORIGIN_SEPARATOR: char = '>';

/// The stack frame an event comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FrameOrigin {
    /// The frame (`chat_sessions_stack` row).
    #[ts(type = "number")]
    pub stack_id: i64,
    /// 0 for the session's root frame, one more per sub-agent level.
    pub depth: u32,
    /// `null` for the root frame; for a sub-agent its chain of `agent#shortid` parts below the
    /// root, joined by `>`.
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
        let part = format!("{agent_id}#{}", short_id(stack_id));
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

/// The short id of a frame in origin labels: its id as eight hex digits, so labels line up and
/// name one frame across the database.
pub fn short_id(stack_id: i64) -> String {
    format!("{stack_id:08x}")
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
        assert_eq!(researcher.label.as_deref(), Some("researcher#0000002a"));
        let coder = researcher.child(47, "coder", 9);
        assert_eq!((coder.stack_id, coder.depth), (47, 2));
        assert_eq!(coder.label.as_deref(), Some("researcher#0000002a>coder#0000002f"));
        assert_eq!((root.parent_tool_call_id, coder.parent_tool_call_id), (None, Some(9)));
    }
}
