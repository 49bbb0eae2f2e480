//! `memory_edits`: each write to a memory file (an agent's `memory_write` call or a save by the
//! person), with the file's content before and after, and whether it was undone.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

/// Who wrote a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryAuthor {
    /// An agent, through recorded tool call `tool_call_id` (its session and agent are looked
    /// up from the call).
    Agent { tool_call_id: Option<i64> },
    /// The person, from the Memory page or the CLI.
    User,
}

/// One recorded write.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct MemoryEditRow {
    pub id: i64,
    pub path: String,
    pub author: String,
    pub session_id: Option<i64>,
    pub tool_call_id: Option<i64>,
    pub agent_id: Option<String>,
    pub before_content: Option<String>,
    pub after_content: String,
    pub created_at: String,
    pub undone_at: Option<String>,
}

const COLUMNS: &str = "id, path, author, session_id, tool_call_id, agent_id, before_content, \
                       after_content, created_at, undone_at";

impl Store {
    /// Records a write of memory file `path` (relative to `memory/`) from `before` to `after`.
    /// An agent's edit carries the session of its call. Returns the edit's id.
    pub async fn record_memory_edit(
        &self,
        path: &str,
        author: &MemoryAuthor,
        before: Option<&str>,
        after: &str,
    ) -> Result<i64, StoreError> {
        let (kind, call) = match author {
            MemoryAuthor::Agent { tool_call_id } => ("agent", *tool_call_id),
            MemoryAuthor::User => ("user", None),
        };
        let id = sqlx::query_scalar(
            "INSERT INTO memory_edits (path, author, session_id, tool_call_id, agent_id, \
             before_content, after_content, created_at) \
             SELECT ?1, ?2, s.session_id, ?3, s.agent_id, ?4, ?5, ?6 \
             FROM (SELECT 1) LEFT JOIN chat_llm_tools t ON t.id = ?3 \
             LEFT JOIN chat_history h ON h.id = t.message_id \
             LEFT JOIN chat_sessions_stack s ON s.id = h.session_stack_id RETURNING id",
        )
        .bind(path)
        .bind(kind)
        .bind(call)
        .bind(before)
        .bind(after)
        .bind(self.now())
        .fetch_one(&mut *self.write_conn().await?)
        .await?;
        Ok(id)
    }

    /// The recorded writes, newest first, of `path` only when given, at most `limit`.
    pub async fn memory_edits(
        &self,
        path: Option<&str>,
        limit: u32,
    ) -> Result<Vec<MemoryEditRow>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM memory_edits WHERE (?1 IS NULL OR path = ?1) \
             ORDER BY id DESC LIMIT ?2"
        );
        Ok(sqlx::query_as(&sql).bind(path).bind(limit).fetch_all(&mut *self.read().await?).await?)
    }

    /// Edit `id`. `NotFound` when none has it.
    pub async fn memory_edit(&self, id: i64) -> Result<MemoryEditRow, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM memory_edits WHERE id = ?");
        sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "memory edit", id })
    }

    /// Marks edit `id` undone; `false` when it was already.
    pub async fn mark_memory_edit_undone(&self, id: i64) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE memory_edits SET undone_at = ? WHERE id = ? AND undone_at IS NULL")
                .bind(self.now())
                .bind(id)
                .execute(&mut *self.write_conn().await?)
                .await?;
        Ok(done.rows_affected() == 1)
    }
}
