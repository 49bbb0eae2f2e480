//! Stored rows as tree rows (`DebugMessage`): whole for the full tree and `session_item`, cut to
//! previews for a window.

use skald_protocol::{DebugMessage, ToolStatus};
use skald_store::StoreError;
use skald_store::repo::history::{MessageRow, Role};
use skald_store::repo::stack::StackFrame;
use skald_store::repo::tools::ToolCallRow;
use skald_store::repo::tree_page::{MessagePreview, PreviewLimits, ToolPreview};

/// Describes a call from its tool name and parsed arguments (`Tool::describe`).
pub type Labeler<'a> = &'a (dyn Fn(&str, &serde_json::Value) -> Option<String> + Sync);

/// What a window carries of long texts. A chat answer is read whole far more often than a tool
/// result, so texts keep much more than results.
pub const PREVIEW: PreviewLimits =
    PreviewLimits { text_chars: 20_000, result_chars: 2_000, diff_chars: 50_000 };

/// Characters kept of each string inside a previewed call's arguments (a write's content).
pub const ARGUMENT_PREVIEW_CHARS: usize = 2_000;

fn depth_of(frame: &StackFrame) -> u32 {
    u32::try_from(frame.depth).unwrap_or(0)
}

fn chars(s: &str) -> u64 {
    u64::try_from(s.chars().count()).unwrap_or(u64::MAX)
}

/// A message row; `content_chars` and `truncated` describe what a preview cut.
fn message(
    m: &MessageRow,
    has_calls: bool,
    frame: &StackFrame,
    content_chars: u64,
    truncated: bool,
) -> Result<DebugMessage, StoreError> {
    let (message_id, stack_id, depth) = (m.id, frame.id, depth_of(frame));
    let created_at = m.created_at.clone();
    Ok(match m.role()? {
        Role::User | Role::Agent => DebugMessage::User {
            message_id,
            content: m.content.clone(),
            is_synthetic: m.is_synthetic,
            failed: m.is_failed(),
            stack_id,
            depth,
            created_at,
            content_chars,
            truncated,
        },
        Role::Assistant if has_calls => DebugMessage::Thinking {
            message_id,
            content: m.content.clone(),
            reasoning: m.reasoning_content.clone(),
            is_synthetic: m.is_synthetic,
            input_tokens: m.input_tokens,
            output_tokens: m.output_tokens,
            cost_usd: m.cost,
            stack_id,
            depth,
            created_at,
            content_chars,
            truncated,
        },
        Role::Assistant => DebugMessage::Assistant {
            message_id,
            content: m.content.clone(),
            reasoning: m.reasoning_content.clone(),
            is_synthetic: m.is_synthetic,
            input_tokens: m.input_tokens,
            output_tokens: m.output_tokens,
            cost_usd: m.cost,
            stack_id,
            depth,
            created_at,
            content_chars,
            truncated,
        },
    })
}

/// A whole message row.
pub fn full_message(
    m: &MessageRow,
    has_calls: bool,
    frame: &StackFrame,
) -> Result<DebugMessage, StoreError> {
    message(m, has_calls, frame, chars(&m.content), false)
}

/// A message as a window shows it.
pub fn preview_message(p: &MessagePreview, frame: &StackFrame) -> Result<DebugMessage, StoreError> {
    let full = |n: i64| u64::try_from(n).unwrap_or(0);
    let (content_chars, reasoning_chars) = (full(p.content_chars), full(p.reasoning_chars));
    let shown_reasoning = p.row.reasoning_content.as_deref().map_or(0, chars);
    let truncated = content_chars > chars(&p.row.content) || reasoning_chars > shown_reasoning;
    message(&p.row, p.has_calls, frame, content_chars, truncated)
}

/// A tool call row; `cut_arguments` shortens long argument strings for a preview.
fn tool(
    call: &ToolCallRow,
    frame: &StackFrame,
    labeler: Labeler<'_>,
    result_chars: u64,
    truncated: bool,
    cut_arguments: bool,
) -> Result<DebugMessage, StoreError> {
    let status: ToolStatus = call.status()?;
    let raw = call.arguments.clone().unwrap_or_default();
    // Arguments are shown as JSON when they parse, and as the raw text the model sent otherwise.
    let parsed = serde_json::from_str::<serde_json::Value>(&raw).ok();
    let label = parsed.as_ref().and_then(|args| labeler(&call.name, args));
    let mut arguments = parsed.unwrap_or_else(|| serde_json::Value::String(raw.clone()));
    let cut = cut_arguments && cut_strings(&mut arguments, ARGUMENT_PREVIEW_CHARS);
    Ok(DebugMessage::Tool {
        tool_call_id: call.id,
        message_id: call.message_id,
        name: call.name.clone(),
        label: label.unwrap_or_else(|| call.name.clone()),
        diff: recorded_diff(call),
        media: recorded_media(call),
        arguments,
        status,
        result: call.result.clone(),
        stack_id: frame.id,
        depth: depth_of(frame),
        created_at: call.created_at.clone(),
        result_chars,
        truncated: truncated || cut,
    })
}

/// A whole tool call.
pub fn full_tool(
    call: &ToolCallRow,
    frame: &StackFrame,
    labeler: Labeler<'_>,
) -> Result<DebugMessage, StoreError> {
    let result_chars = call.result.as_deref().map_or(0, chars);
    tool(call, frame, labeler, result_chars, false, false)
}

/// A tool call as a window shows it.
pub fn preview_tool(
    p: &ToolPreview,
    frame: &StackFrame,
    labeler: Labeler<'_>,
) -> Result<DebugMessage, StoreError> {
    let result_chars = u64::try_from(p.result_chars).unwrap_or(0);
    let shown = p.row.result.as_deref().map_or(0, chars);
    tool(&p.row, frame, labeler, result_chars, result_chars > shown || p.diff_omitted, true)
}

/// The row opening a sub-agent frame.
pub fn agent_start(child: &StackFrame) -> DebugMessage {
    DebugMessage::Agent {
        stack_id: child.id,
        agent_id: child.agent_id.clone(),
        depth: depth_of(child),
        prompt: child.agent_prompt.clone(),
        parent_tool_call_id: child.parent_tool_call_id,
    }
}

/// The row closing a sub-agent frame.
pub fn agent_end(child: &StackFrame) -> DebugMessage {
    DebugMessage::AgentEnd {
        stack_id: child.id,
        agent_id: child.agent_id.clone(),
        depth: depth_of(child),
    }
}

/// Cuts every string inside `value` longer than `max` characters; true when one was cut.
fn cut_strings(value: &mut serde_json::Value, max: usize) -> bool {
    match value {
        serde_json::Value::String(s) => match s.char_indices().nth(max) {
            Some((at, _)) => {
                s.truncate(at);
                s.push('…');
                true
            }
            None => false,
        },
        serde_json::Value::Array(items) => {
            items.iter_mut().fold(false, |cut, v| cut_strings(v, max) | cut)
        }
        serde_json::Value::Object(map) => {
            map.values_mut().fold(false, |cut, v| cut_strings(v, max) | cut)
        }
        _ => false,
    }
}

/// The change a write call recorded. A diff that no longer decodes (written by another version)
/// is left out rather than failing the whole tree: it only illustrates the call.
fn recorded_diff(call: &ToolCallRow) -> Option<skald_protocol::FileDiff> {
    let json = call.file_diff.as_deref()?;
    match serde_json::from_str(json) {
        Ok(diff) => Some(diff),
        Err(error) => {
            tracing::warn!(call = call.id, %error, "a recorded file diff does not decode");
            None
        }
    }
}

/// The media and links a call recorded; like a diff, one that no longer decodes is left out.
pub fn recorded_media(call: &ToolCallRow) -> skald_protocol::ToolResultMedia {
    decode_media(call.id, call.media.as_deref())
}

/// A recorded `ToolResultMedia` (JSON), empty when absent or undecodable.
pub fn decode_media(call_id: i64, json: Option<&str>) -> skald_protocol::ToolResultMedia {
    let Some(json) = json else { return Default::default() };
    serde_json::from_str(json).unwrap_or_else(|error| {
        tracing::warn!(call = call_id, %error, "recorded tool media does not decode");
        Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::cut_strings;

    #[test]
    fn long_argument_strings_are_cut_and_short_ones_and_structure_kept() {
        let mut v =
            serde_json::json!({"path": "a.txt", "content": "é".repeat(10), "n": [1, "xyzw"]});
        assert!(cut_strings(&mut v, 3));
        assert_eq!(v, serde_json::json!({"path": "a.t…", "content": "ééé…", "n": [1, "xyz…"]}));
        let mut short = serde_json::json!({"path": "a"});
        assert!(!cut_strings(&mut short, 3));
    }
}
