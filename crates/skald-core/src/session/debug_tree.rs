//! Builds the session debug tree (`GET /api/sessions/:id`) from one read of the whole session.

use std::collections::HashMap;

use skald_protocol::{DebugMessage, PendingInput, SessionDetail, ToolStatus};
use skald_store::repo::history::{MessageRow, Role};
use skald_store::repo::stack::StackFrame;
use skald_store::repo::tools::ToolCallRow;
use skald_store::{Store, StoreError};

/// Describes a call from its tool name and parsed arguments (`Tool::describe`).
pub type Labeler<'a> = &'a (dyn Fn(&str, &serde_json::Value) -> Option<String> + Sync);

/// Loads a session and lays its frames out in replay order, children after their spawning call.
pub async fn load(
    store: &Store,
    session_id: i64,
    labeler: Labeler<'_>,
) -> Result<SessionDetail, StoreError> {
    let session = store.session(session_id).await?;
    // Read before the messages: a steer folded in between then shows twice rather than not at
    // all, and the `steer_folded` event a live client gets settles it.
    let pending_inputs = store
        .open_steers(session_id)
        .await?
        .into_iter()
        .map(|s| PendingInput { id: s.id, content: s.content, created_at: s.created_at })
        .collect();
    let frames = store.frames(session_id).await?;
    let messages = store.messages_for_session(session_id).await?;
    let tools = store.tool_calls_for_session(session_id).await?;
    let tree = Tree::new(&frames, &messages, &tools, labeler);
    let mut out = Vec::with_capacity(messages.len() + tools.len());
    if let Some(root) = frames.iter().find(|f| f.depth == 0) {
        let mut seen = std::collections::HashSet::new();
        tree.emit_frame(root, &mut out, &mut seen)?;
    }
    let turn_ends = store.turn_ends(session_id).await?;
    Ok(SessionDetail { session: session.meta(), messages: out, pending_inputs, turn_ends })
}

struct Tree<'a> {
    messages_by_stack: HashMap<i64, Vec<&'a MessageRow>>,
    tools_by_message: HashMap<i64, Vec<&'a ToolCallRow>>,
    children_by_call: HashMap<i64, Vec<&'a StackFrame>>,
    labeler: Labeler<'a>,
}

impl<'a> Tree<'a> {
    fn new(
        frames: &'a [StackFrame],
        messages: &'a [MessageRow],
        tools: &'a [ToolCallRow],
        labeler: Labeler<'a>,
    ) -> Self {
        let mut messages_by_stack: HashMap<i64, Vec<&MessageRow>> = HashMap::new();
        for m in messages {
            messages_by_stack.entry(m.session_stack_id).or_default().push(m);
        }
        let mut tools_by_message: HashMap<i64, Vec<&ToolCallRow>> = HashMap::new();
        for t in tools {
            tools_by_message.entry(t.message_id).or_default().push(t);
        }
        let mut children_by_call: HashMap<i64, Vec<&StackFrame>> = HashMap::new();
        for f in frames {
            if let Some(call) = f.parent_tool_call_id {
                children_by_call.entry(call).or_default().push(f);
            }
        }
        Self { messages_by_stack, tools_by_message, children_by_call, labeler }
    }

    fn emit_frame(
        &self,
        frame: &StackFrame,
        out: &mut Vec<DebugMessage>,
        seen: &mut std::collections::HashSet<i64>,
    ) -> Result<(), StoreError> {
        // A malformed link can never loop: each frame expands at most once.
        if !seen.insert(frame.id) {
            return Ok(());
        }
        let depth = u32::try_from(frame.depth).unwrap_or(0);
        for m in self.messages_by_stack.get(&frame.id).into_iter().flatten() {
            let calls = self.tools_by_message.get(&m.id);
            match m.role()? {
                Role::User | Role::Agent => out.push(DebugMessage::User {
                    message_id: m.id,
                    content: m.content.clone(),
                    is_synthetic: m.is_synthetic,
                    failed: m.is_failed(),
                    stack_id: frame.id,
                    depth,
                    created_at: m.created_at.clone(),
                }),
                Role::Assistant if calls.is_some() => out.push(DebugMessage::Thinking {
                    message_id: m.id,
                    content: m.content.clone(),
                    reasoning: m.reasoning_content.clone(),
                    is_synthetic: m.is_synthetic,
                    input_tokens: m.input_tokens,
                    output_tokens: m.output_tokens,
                    stack_id: frame.id,
                    depth,
                    created_at: m.created_at.clone(),
                }),
                Role::Assistant => out.push(DebugMessage::Assistant {
                    message_id: m.id,
                    content: m.content.clone(),
                    reasoning: m.reasoning_content.clone(),
                    is_synthetic: m.is_synthetic,
                    input_tokens: m.input_tokens,
                    output_tokens: m.output_tokens,
                    stack_id: frame.id,
                    depth,
                    created_at: m.created_at.clone(),
                }),
            }
            for call in calls.into_iter().flatten() {
                out.push(tool_row(call, frame.id, depth, self.labeler)?);
                for child in self.children_by_call.get(&call.id).into_iter().flatten() {
                    let child_depth = u32::try_from(child.depth).unwrap_or(0);
                    out.push(DebugMessage::Agent {
                        stack_id: child.id,
                        agent_id: child.agent_id.clone(),
                        depth: child_depth,
                        prompt: child.agent_prompt.clone(),
                        parent_tool_call_id: child.parent_tool_call_id,
                    });
                    self.emit_frame(child, out, seen)?;
                    out.push(DebugMessage::AgentEnd {
                        stack_id: child.id,
                        agent_id: child.agent_id.clone(),
                        depth: child_depth,
                    });
                }
            }
        }
        Ok(())
    }
}

fn tool_row(
    call: &ToolCallRow,
    stack_id: i64,
    depth: u32,
    labeler: Labeler<'_>,
) -> Result<DebugMessage, StoreError> {
    let status: ToolStatus = call.status()?;
    let raw = call.arguments.clone().unwrap_or_default();
    // Arguments are shown as JSON when they parse, and as the raw text the model sent otherwise.
    let parsed = serde_json::from_str::<serde_json::Value>(&raw).ok();
    let label = parsed.as_ref().and_then(|args| labeler(&call.name, args));
    let arguments = parsed.unwrap_or_else(|| serde_json::Value::String(raw.clone()));
    Ok(DebugMessage::Tool {
        tool_call_id: call.id,
        message_id: call.message_id,
        name: call.name.clone(),
        label: label.unwrap_or_else(|| call.name.clone()),
        diff: recorded_diff(call),
        arguments,
        status,
        result: call.result.clone(),
        stack_id,
        depth,
        created_at: call.created_at.clone(),
    })
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
