//! `sources`: which session is live for an interactive source.

use crate::error::StoreError;
use crate::pool::Store;

impl Store {
    /// The active session of `source`, if one was provisioned.
    pub async fn active_session(&self, source: &str) -> Result<Option<i64>, StoreError> {
        let id: Option<Option<i64>> =
            sqlx::query_scalar("SELECT active_session_id FROM sources WHERE id = ?")
                .bind(source)
                .fetch_optional(&mut *self.read().await?)
                .await?;
        Ok(id.flatten())
    }

    /// Points `source` at `session_id` (insert or replace).
    pub async fn set_active_session(
        &self,
        source: &str,
        session_id: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO sources (id, active_session_id, updated_at) VALUES (?, ?, ?) \
             ON CONFLICT(id) DO UPDATE SET active_session_id = excluded.active_session_id, \
             updated_at = excluded.updated_at",
        )
        .bind(source)
        .bind(session_id)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }
}
