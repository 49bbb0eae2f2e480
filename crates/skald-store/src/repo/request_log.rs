//! `llm_requests`: the opt-in log of what the model received each round.

use crate::error::StoreError;
use crate::pool::Store;

impl Store {
    pub async fn log_llm_request(
        &self,
        session_id: i64,
        stack_id: i64,
        message_id: i64,
        model: &str,
        request_json: &str,
        duration_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO llm_requests (session_id, stack_id, message_id, model, request_json, \
             duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(session_id)
        .bind(stack_id)
        .bind(message_id)
        .bind(model)
        .bind(request_json)
        .bind(duration_ms)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// The request that produced an assistant row, if it was logged.
    pub async fn llm_request_for_message(
        &self,
        message_id: i64,
    ) -> Result<Option<(String, String)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT model, request_json FROM llm_requests WHERE message_id = ? ORDER BY id DESC \
             LIMIT 1",
        )
        .bind(message_id)
        .fetch_optional(&mut *self.read().await?)
        .await?)
    }

    /// Deletes log rows older than `days`. Returns how many.
    pub async fn purge_llm_requests(&self, days: u32) -> Result<u64, StoreError> {
        let cutoff =
            crate::clock::format_ts(self.clock().now() - chrono::Duration::days(i64::from(days)));
        Ok(sqlx::query("DELETE FROM llm_requests WHERE created_at < ?")
            .bind(cutoff)
            .execute(&mut *self.write_conn().await?)
            .await?
            .rows_affected())
    }
}
