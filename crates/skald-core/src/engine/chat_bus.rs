//! The chat event bus: completed turns (user message + final answer + the turn's tool calls) for
//! in-process consumers such as memory or analytics. Published only for turns that end `Final`,
//! after their rows are committed.

use serde::Serialize;
use skald_store::StoreError;
use skald_store::repo::history::Role;

use super::Engine;

/// Capacity of the chat bus; a consumer that falls further behind sees `Lagged`.
pub const CHAT_BUS_CAPACITY: usize = 256;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletedToolCall {
    pub name: String,
    pub arguments: Option<String>,
    pub status: String,
    pub result: Option<String>,
}

/// One finished root turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletedTurn {
    pub session_id: i64,
    pub stack_id: i64,
    pub user_message_id: Option<i64>,
    pub user_content: String,
    pub assistant_message_id: i64,
    pub assistant_content: String,
    pub is_interactive: bool,
    pub is_ephemeral: bool,
    pub tool_calls: Vec<CompletedToolCall>,
}

impl Engine {
    /// Completed turns from now on.
    pub fn subscribe_chat(&self) -> tokio::sync::broadcast::Receiver<CompletedTurn> {
        self.inner.chat_bus.subscribe()
    }

    pub(super) async fn publish_completed_turn(
        &self,
        session_id: i64,
        assistant_message_id: i64,
    ) -> Result<(), StoreError> {
        if self.inner.chat_bus.receiver_count() == 0 {
            return Ok(());
        }
        let store = self.store();
        let session = store.session(session_id).await?;
        let root = store.root_frame(session_id).await?;
        let rows = store.messages_for_stack_after(root.id, 0).await?;
        let Some(end) = rows.iter().position(|r| r.id == assistant_message_id) else {
            return Ok(());
        };
        // The turn starts after the last prompt before the answer (steers coalesce into it).
        let start = rows[..end]
            .iter()
            .rposition(|r| !r.is_failed() && matches!(r.role(), Ok(Role::User)))
            .unwrap_or(0);
        let prompt_start = rows[..=start]
            .iter()
            .rposition(|r| r.is_failed() || !matches!(r.role(), Ok(Role::User)))
            .map_or(0, |i| i + 1);
        let user_content = rows[prompt_start..=start]
            .iter()
            .filter(|r| !r.is_failed())
            .map(|r| r.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let first_id = rows.get(prompt_start).map_or(0, |r| r.id);
        let tool_calls = store
            .tool_calls_for_stack_after(root.id, first_id)
            .await?
            .into_iter()
            .filter(|t| t.message_id < assistant_message_id)
            .map(|t| CompletedToolCall {
                name: t.name,
                arguments: t.arguments,
                status: t.status,
                result: t.result,
            })
            .collect();
        let _ = self.inner.chat_bus.send(CompletedTurn {
            session_id,
            stack_id: root.id,
            user_message_id: rows.get(start).map(|r| r.id),
            user_content,
            assistant_message_id,
            assistant_content: rows[end].content.clone(),
            is_interactive: session.is_interactive,
            is_ephemeral: session.is_ephemeral,
            tool_calls,
        });
        Ok(())
    }
}
