//! Questions MCP servers ask the user during a call (`mcp_elicitations`): stored open, answered
//! once, from any process.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ElicitationRow {
    pub id: i64,
    pub tool_call_id: i64,
    pub session_id: i64,
    pub server: String,
    /// The form as JSON.
    pub form: String,
    pub created_at: String,
    /// `None` while open; then `accept`, `decline` or `cancel`.
    pub action: Option<String>,
    /// The accepted values as JSON, each secret replaced by `true`.
    pub answer: Option<String>,
    pub source: String,
}

const SELECT: &str = "SELECT e.id, e.tool_call_id, e.session_id, e.server, e.form, e.created_at, \
     e.action, e.answer, s.source FROM mcp_elicitations e JOIN chat_sessions s ON s.id = e.session_id";

impl Store {
    /// Stores an open question of `server` during call `tool_call_id`; its id.
    pub async fn create_elicitation(
        &self,
        tool_call_id: i64,
        session_id: i64,
        server: &str,
        form: &str,
    ) -> Result<i64, StoreError> {
        let mut tx = self.begin_write().await?;
        let id = sqlx::query_scalar(
            "INSERT INTO mcp_elicitations (tool_call_id, session_id, server, form, created_at) \
             VALUES (?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(tool_call_id)
        .bind(session_id)
        .bind(server)
        .bind(form)
        .bind(self.now())
        .fetch_one(&mut *tx)
        .await?;
        self.commit(tx).await?;
        Ok(id)
    }

    pub async fn elicitation(&self, id: i64) -> Result<Option<ElicitationRow>, StoreError> {
        Ok(sqlx::query_as::<_, ElicitationRow>(&format!("{SELECT} WHERE e.id = ?"))
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Questions still open whose call still runs, oldest first (one a crashed process left
    /// behind is not shown: nobody waits for its answer).
    pub async fn open_elicitations(&self) -> Result<Vec<ElicitationRow>, StoreError> {
        Ok(sqlx::query_as::<_, ElicitationRow>(&format!(
            "{SELECT} JOIN chat_llm_tools t ON t.id = e.tool_call_id \
             WHERE e.action IS NULL AND t.status = 'running' ORDER BY e.created_at, e.id"
        ))
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Records how the question ended, if it is still open; whether this write did.
    pub async fn resolve_elicitation(
        &self,
        id: i64,
        action: &str,
        answer: Option<&str>,
        decided_by: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "UPDATE mcp_elicitations SET action = ?, answer = ?, decided_by = ?, decided_at = ? \
             WHERE id = ? AND action IS NULL",
        )
        .bind(action)
        .bind(answer)
        .bind(decided_by)
        .bind(self.now())
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        self.commit(tx).await?;
        Ok(done)
    }
}
