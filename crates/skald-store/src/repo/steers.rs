//! `pending_inputs`: messages sent during a turn, folded into the history at a round boundary.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct Steer {
    pub id: i64,
    pub session_id: i64,
    pub content: String,
    pub metadata: Option<String>,
    pub is_synthetic: bool,
    pub created_at: String,
    pub consumed_message_id: Option<i64>,
    pub discarded_at: Option<String>,
}

/// A steer that became a history row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldedSteer {
    pub steer_id: i64,
    pub message_id: i64,
    pub content: String,
}

impl Store {
    pub async fn add_steer(
        &self,
        session_id: i64,
        content: &str,
        metadata: Option<&str>,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO pending_inputs (session_id, content, metadata, created_at) \
             VALUES (?, ?, ?, ?) RETURNING id",
        )
        .bind(session_id)
        .bind(content)
        .bind(metadata)
        .bind(self.now())
        .fetch_one(self.pool())
        .await?)
    }

    /// Steers neither folded nor discarded, oldest first.
    pub async fn open_steers(&self, session_id: i64) -> Result<Vec<Steer>, StoreError> {
        Ok(sqlx::query_as::<_, Steer>(
            "SELECT id, session_id, content, metadata, is_synthetic, created_at, \
             consumed_message_id, discarded_at FROM pending_inputs \
             WHERE session_id = ? AND consumed_message_id IS NULL AND discarded_at IS NULL \
             ORDER BY id",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Every steer of a session (debug view), oldest first.
    pub async fn all_steers(&self, session_id: i64) -> Result<Vec<Steer>, StoreError> {
        Ok(sqlx::query_as::<_, Steer>(
            "SELECT id, session_id, content, metadata, is_synthetic, created_at, \
             consumed_message_id, discarded_at FROM pending_inputs WHERE session_id = ? ORDER BY id",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Appends each open steer as a user row of `stack_id` and marks it consumed, in one
    /// transaction: a steer is never lost and never doubled.
    pub async fn fold_steers(
        &self,
        session_id: i64,
        stack_id: i64,
    ) -> Result<Vec<FoldedSteer>, StoreError> {
        // Almost every round boundary finds nothing to fold: answer that from one read instead
        // of taking the write lock. A steer stored after this read is folded at the next boundary.
        let any: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM pending_inputs WHERE session_id = ? AND consumed_message_id IS NULL \
             AND discarded_at IS NULL LIMIT 1",
        )
        .bind(session_id)
        .fetch_optional(self.pool())
        .await?;
        if any.is_none() {
            return Ok(Vec::new());
        }
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let open: Vec<(i64, String, Option<String>, bool)> = sqlx::query_as(
            "SELECT id, content, metadata, is_synthetic FROM pending_inputs \
             WHERE session_id = ? AND consumed_message_id IS NULL AND discarded_at IS NULL \
             ORDER BY id",
        )
        .bind(session_id)
        .fetch_all(&mut *tx)
        .await?;
        let mut folded = Vec::with_capacity(open.len());
        for (steer_id, content, metadata, synthetic) in open {
            let message_id: i64 = sqlx::query_scalar(
                "INSERT INTO chat_history (session_stack_id, role, content, is_synthetic, metadata, \
                 created_at) VALUES (?, 'user', ?, ?, ?, ?) RETURNING id",
            )
            .bind(stack_id)
            .bind(&content)
            .bind(synthetic)
            .bind(&metadata)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await?;
            sqlx::query("UPDATE pending_inputs SET consumed_message_id = ? WHERE id = ?")
                .bind(message_id)
                .bind(steer_id)
                .execute(&mut *tx)
                .await?;
            folded.push(FoldedSteer { steer_id, message_id, content });
        }
        tx.commit().await?;
        Ok(folded)
    }

    /// `/stop`: open steers are kept but marked discarded. Returns their ids, oldest first.
    pub async fn discard_steers(&self, session_id: i64) -> Result<Vec<i64>, StoreError> {
        let mut ids: Vec<i64> = sqlx::query_scalar(
            "UPDATE pending_inputs SET discarded_at = ? WHERE session_id = ? \
             AND consumed_message_id IS NULL AND discarded_at IS NULL RETURNING id",
        )
        .bind(self.now())
        .bind(session_id)
        .fetch_all(self.pool())
        .await?;
        // RETURNING gives no order guarantee.
        ids.sort_unstable();
        Ok(ids)
    }
}
