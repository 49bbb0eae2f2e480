//! Builds the session debug tree (`GET /api/sessions/:id`) from one read of the whole session.

use std::collections::HashMap;

use skald_protocol::{DebugMessage, PendingInput, SessionDetail};
use skald_store::repo::history::MessageRow;
use skald_store::repo::stack::StackFrame;
use skald_store::repo::tools::ToolCallRow;
use skald_store::{Store, StoreError};

use super::items::{self, Labeler};

/// Loads a session and lays its frames out in replay order, children after their spawning call.
pub async fn load(
    store: &Store,
    session_id: i64,
    labeler: Labeler<'_>,
) -> Result<SessionDetail, StoreError> {
    let session = store.session(session_id).await?;
    // Read before the messages: a steer folded in between then shows twice rather than not at
    // all, and the `steer_folded` event a live client gets settles it.
    let pending_inputs = pending_inputs(store, session_id).await?;
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
    let tasks = store.tasks_of_parent(session_id).await?.iter().map(|t| t.info()).collect();
    Ok(SessionDetail { session: session.meta(), messages: out, pending_inputs, turn_ends, tasks })
}

/// Messages of the session waiting to be folded into its history, oldest first.
pub(crate) async fn pending_inputs(
    store: &Store,
    session_id: i64,
) -> Result<Vec<PendingInput>, StoreError> {
    Ok(store
        .open_steers(session_id)
        .await?
        .into_iter()
        .map(|s| PendingInput { id: s.id, content: s.content, created_at: s.created_at })
        .collect())
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
        for m in self.messages_by_stack.get(&frame.id).into_iter().flatten() {
            let calls = self.tools_by_message.get(&m.id);
            out.push(items::full_message(m, calls.is_some(), frame)?);
            for call in calls.into_iter().flatten() {
                out.push(items::full_tool(call, frame, self.labeler)?);
                for child in self.children_by_call.get(&call.id).into_iter().flatten() {
                    out.push(items::agent_start(child));
                    self.emit_frame(child, out, seen)?;
                    out.push(items::agent_end(child));
                }
            }
        }
        Ok(())
    }
}
