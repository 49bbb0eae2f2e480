//! `session_scratchpad` and `stack_todos`: small shared notes and each frame's todo list.

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::pool::Store;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

impl Store {
    /// Upsert; an empty value removes the note.
    pub async fn set_scratchpad(
        &self,
        session_id: i64,
        key: &str,
        value: &str,
    ) -> Result<(), StoreError> {
        if value.is_empty() {
            sqlx::query("DELETE FROM session_scratchpad WHERE session_id = ? AND key = ?")
                .bind(session_id)
                .bind(key)
                .execute(&mut *self.write_conn().await?)
                .await?;
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO session_scratchpad (session_id, key, value, updated_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT(session_id, key) DO UPDATE SET value = excluded.value, \
             updated_at = excluded.updated_at",
        )
        .bind(session_id)
        .bind(key)
        .bind(value)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Notes sorted by key, so the injected message is stable.
    pub async fn scratchpad(&self, session_id: i64) -> Result<Vec<(String, String)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT key, value FROM session_scratchpad WHERE session_id = ? ORDER BY key",
        )
        .bind(session_id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Replaces the frame's whole todo list.
    pub async fn replace_todos(&self, stack_id: i64, todos: &[Todo]) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM stack_todos WHERE stack_id = ?")
            .bind(stack_id)
            .execute(&mut *tx)
            .await?;
        for (i, t) in todos.iter().enumerate() {
            sqlx::query(
                "INSERT INTO stack_todos (stack_id, position, content, status) VALUES (?, ?, ?, ?)",
            )
            .bind(stack_id)
            .bind(i64::try_from(i).unwrap_or(i64::MAX))
            .bind(&t.content)
            .bind(&t.status)
            .execute(&mut *tx)
            .await?;
        }
        self.commit(tx).await?;
        Ok(())
    }

    pub async fn todos(&self, stack_id: i64) -> Result<Vec<Todo>, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT content, status FROM stack_todos WHERE stack_id = ? ORDER BY position",
        )
        .bind(stack_id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows.into_iter().map(|(content, status)| Todo { content, status }).collect())
    }
}
