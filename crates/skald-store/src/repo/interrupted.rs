//! `interrupted_calls`: calls a crash cut off while they ran, which the user reconciles ("it
//! ran", "it did not run", "run it again"). Decision 3 of the spec.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

/// One flagged call with what the user decided so far.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct InterruptedCallRow {
    pub tool_call_id: i64,
    pub session_id: i64,
    pub tool_name: String,
    pub arguments: Option<String>,
    /// The frame the call belongs to (its message's).
    pub stack_id: i64,
    pub flagged_at: String,
    /// `ran`, `did_not_run` or `run_again`; `None` while the user has not said.
    pub choice: Option<String>,
    pub decided_by: Option<String>,
    pub decided_at: Option<String>,
    pub rerun_status: Option<String>,
    pub rerun_result: Option<String>,
    pub note_message_id: Option<i64>,
}

const COLUMNS: &str = "i.tool_call_id, i.session_id, t.name AS tool_name, t.arguments, \
     h.session_stack_id AS stack_id, i.flagged_at, i.choice, i.decided_by, i.decided_at, \
     i.rerun_status, i.rerun_result, i.note_message_id";
const FROM: &str = "FROM interrupted_calls i JOIN chat_llm_tools t ON t.id = i.tool_call_id \
     JOIN chat_history h ON h.id = t.message_id";

impl Store {
    /// Settles a call left `running` by a process that ended as `failed` with `result`, and flags
    /// it for the user, in one transaction: a flagged call always carries its interrupted result.
    pub async fn fail_interrupted_call(
        &self,
        tool_call_id: i64,
        session_id: i64,
        result: &str,
    ) -> Result<(), StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let changed = sqlx::query(
            "UPDATE chat_llm_tools SET status = 'failed', result = ?, updated_at = ? \
             WHERE id = ? AND status = 'running'",
        )
        .bind(result)
        .bind(&now)
        .bind(tool_call_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed != 1 {
            return Err(StoreError::Conflict(format!("tool call {tool_call_id} is not running")));
        }
        sqlx::query(
            "INSERT OR IGNORE INTO interrupted_calls (tool_call_id, session_id, flagged_at) \
             VALUES (?, ?, ?)",
        )
        .bind(tool_call_id)
        .bind(session_id)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        self.commit(tx).await?;
        Ok(())
    }

    /// The flag of one call, `None` when it was never flagged.
    pub async fn interrupted_call(
        &self,
        tool_call_id: i64,
    ) -> Result<Option<InterruptedCallRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} {FROM} WHERE i.tool_call_id = ?");
        Ok(sqlx::query_as(&sql).bind(tool_call_id).fetch_optional(&mut *self.read().await?).await?)
    }

    /// A session's flagged calls, oldest first.
    pub async fn interrupted_calls(
        &self,
        session_id: i64,
    ) -> Result<Vec<InterruptedCallRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} {FROM} WHERE i.session_id = ? ORDER BY i.tool_call_id");
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_all(&mut *self.read().await?).await?)
    }

    /// Flagged calls of every session the user has not reconciled yet, oldest first.
    pub async fn unreconciled_interrupted_calls(
        &self,
    ) -> Result<Vec<InterruptedCallRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} {FROM} WHERE i.choice IS NULL ORDER BY i.tool_call_id");
        Ok(sqlx::query_as(&sql).fetch_all(&mut *self.read().await?).await?)
    }

    /// Records the user's choice once: `false` when a choice was recorded before (nothing changes).
    pub async fn reconcile_interrupted_call(
        &self,
        tool_call_id: i64,
        choice: &str,
        decided_by: &str,
    ) -> Result<bool, StoreError> {
        let changed = sqlx::query(
            "UPDATE interrupted_calls SET choice = ?, decided_by = ?, decided_at = ? \
             WHERE tool_call_id = ? AND choice IS NULL",
        )
        .bind(choice)
        .bind(decided_by)
        .bind(self.now())
        .bind(tool_call_id)
        .execute(&mut *self.write_conn().await?)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    /// Records how a re-run the user asked for ended.
    pub async fn record_rerun(
        &self,
        tool_call_id: i64,
        status: &str,
        result: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE interrupted_calls SET rerun_status = ?, rerun_result = ? \
             WHERE tool_call_id = ? AND choice = 'run_again'",
        )
        .bind(status)
        .bind(result)
        .bind(tool_call_id)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Links the history row that told the model what the user confirmed.
    pub async fn set_reconcile_note(
        &self,
        tool_call_id: i64,
        message_id: i64,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE interrupted_calls SET note_message_id = ? WHERE tool_call_id = ?")
            .bind(message_id)
            .bind(tool_call_id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }
}
