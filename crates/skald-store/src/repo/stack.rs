//! `chat_sessions_stack`: agent call frames (root and sub-agents).

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct StackFrame {
    pub id: i64,
    pub session_id: i64,
    pub agent_id: String,
    pub agent_prompt: Option<String>,
    pub depth: i64,
    pub parent_tool_call_id: Option<i64>,
    pub terminated_at: Option<String>,
    pub created_at: String,
}

/// Deeper than any agent nesting the engine allows: a cycle in the links stops here.
const MAX_LINEAGE: u32 = 64;

pub(crate) const FRAME_COLUMNS: &str = "id, session_id, agent_id, agent_prompt, depth, parent_tool_call_id, \
     terminated_at, created_at";

impl Store {
    /// Every frame of a session in creation order.
    pub async fn frames(&self, session_id: i64) -> Result<Vec<StackFrame>, StoreError> {
        let sql = format!(
            "SELECT {FRAME_COLUMNS} FROM chat_sessions_stack WHERE session_id = ? ORDER BY id"
        );
        Ok(sqlx::query_as::<_, StackFrame>(&sql)
            .bind(session_id)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// One frame by id.
    pub async fn frame(&self, stack_id: i64) -> Result<StackFrame, StoreError> {
        let sql = format!("SELECT {FRAME_COLUMNS} FROM chat_sessions_stack WHERE id = ?");
        sqlx::query_as::<_, StackFrame>(&sql)
            .bind(stack_id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "frame", id: stack_id })
    }

    /// The session's root frame (depth 0).
    pub async fn root_frame(&self, session_id: i64) -> Result<StackFrame, StoreError> {
        let sql = format!(
            "SELECT {FRAME_COLUMNS} FROM chat_sessions_stack WHERE session_id = ? AND depth = 0 \
             ORDER BY id LIMIT 1"
        );
        sqlx::query_as::<_, StackFrame>(&sql)
            .bind(session_id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "root frame of session", id: session_id })
    }

    /// Frame `stack_id` and the frames above it, root first: each frame's parent is the frame
    /// of the call that spawned it. A malformed link ends the chain rather than looping.
    pub async fn frame_lineage(&self, stack_id: i64) -> Result<Vec<StackFrame>, StoreError> {
        let sql = format!(
            "WITH RECURSIVE up(id, parent_call, n) AS ( \
               SELECT id, parent_tool_call_id, 0 FROM chat_sessions_stack WHERE id = ? \
               UNION ALL \
               SELECT s.id, s.parent_tool_call_id, up.n + 1 FROM up \
               JOIN chat_llm_tools t ON t.id = up.parent_call \
               JOIN chat_history h ON h.id = t.message_id \
               JOIN chat_sessions_stack s ON s.id = h.session_stack_id \
               WHERE up.n < {MAX_LINEAGE}) \
             SELECT {FRAME_COLUMNS} FROM up JOIN chat_sessions_stack USING (id) ORDER BY up.n DESC"
        );
        let frames = sqlx::query_as::<_, StackFrame>(&sql)
            .bind(stack_id)
            .fetch_all(&mut *self.read().await?)
            .await?;
        if frames.is_empty() {
            return Err(StoreError::NotFound { what: "frame", id: stack_id });
        }
        Ok(frames)
    }

    /// Opens a child frame spawned by `parent_tool_call_id`.
    pub async fn create_child_frame(
        &self,
        session_id: i64,
        agent_id: &str,
        prompt: &str,
        depth: i64,
        parent_tool_call_id: i64,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO chat_sessions_stack \
             (session_id, agent_id, agent_prompt, depth, parent_tool_call_id, created_at) \
             VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(session_id)
        .bind(agent_id)
        .bind(prompt)
        .bind(depth)
        .bind(parent_tool_call_id)
        .bind(self.now())
        .fetch_one(&mut *self.write_conn().await?)
        .await?)
    }

    /// The frame call `tool_call_id` opened, if it opened one (the newest, should a retry have
    /// opened another).
    pub async fn child_frame_of_call(
        &self,
        tool_call_id: i64,
    ) -> Result<Option<StackFrame>, StoreError> {
        let sql = format!(
            "SELECT {FRAME_COLUMNS} FROM chat_sessions_stack WHERE parent_tool_call_id = ? \
             ORDER BY id DESC LIMIT 1"
        );
        Ok(sqlx::query_as::<_, StackFrame>(&sql)
            .bind(tool_call_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Marks a child frame finished. The root frame is never terminated.
    pub async fn terminate_frame(&self, stack_id: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE chat_sessions_stack SET terminated_at = ? \
             WHERE id = ? AND depth > 0 AND terminated_at IS NULL",
        )
        .bind(self.now())
        .bind(stack_id)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }
}
