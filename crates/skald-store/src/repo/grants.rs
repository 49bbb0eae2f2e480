//! `session_mcp_grants` / `stack_mcp_grants`: tool groups (MCP servers, `config`) an agent
//! activated, so their tools are offered from the next round on.

use crate::error::StoreError;
use crate::pool::Store;

impl Store {
    /// Activates a tool group for the session's root agent (idempotent).
    pub async fn grant_session_tool_group(
        &self,
        session_id: i64,
        group: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO session_mcp_grants (session_id, mcp_name, granted_at) VALUES (?, ?, ?) \
             ON CONFLICT (session_id, mcp_name) DO NOTHING",
        )
        .bind(session_id)
        .bind(group)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// The groups active for the session's root agent, by name.
    pub async fn session_tool_groups(&self, session_id: i64) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT mcp_name FROM session_mcp_grants WHERE session_id = ? ORDER BY mcp_name",
        )
        .bind(session_id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// The groups a sub-agent frame activated (kept so a resumed frame keeps them).
    pub async fn stack_tool_groups(&self, stack_id: i64) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT mcp_name FROM stack_mcp_grants WHERE stack_id = ? ORDER BY mcp_name",
        )
        .bind(stack_id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Activates a tool group for one sub-agent frame only (idempotent).
    pub async fn grant_stack_tool_group(
        &self,
        stack_id: i64,
        group: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO stack_mcp_grants (stack_id, mcp_name, granted_at) VALUES (?, ?, ?) \
             ON CONFLICT (stack_id, mcp_name) DO NOTHING",
        )
        .bind(stack_id)
        .bind(group)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Drops a finished sub-agent frame's groups: they never outlive the frame.
    pub async fn revoke_stack_tool_groups(&self, stack_id: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query("DELETE FROM stack_mcp_grants WHERE stack_id = ?")
            .bind(stack_id)
            .execute(&mut *self.write_conn().await?)
            .await?
            .rows_affected())
    }

    /// `/resettools`: revokes every group activated in the session, by its root agent or any
    /// sub-agent frame. Returns how many grants were removed.
    pub async fn revoke_tool_groups(&self, session_id: i64) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        let root = sqlx::query("DELETE FROM session_mcp_grants WHERE session_id = ?")
            .bind(session_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        let frames = sqlx::query(
            "DELETE FROM stack_mcp_grants WHERE stack_id IN \
             (SELECT id FROM chat_sessions_stack WHERE session_id = ?)",
        )
        .bind(session_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        self.commit(tx).await?;
        Ok(root + frames)
    }
}
