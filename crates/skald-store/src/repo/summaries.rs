//! `chat_summaries`: compaction boundaries. Appended, never deleted; the latest per frame wins.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

#[derive(Debug, Clone, PartialEq, Eq, FromRow, serde::Deserialize)]
pub struct SummaryRow {
    pub id: i64,
    pub stack_id: i64,
    pub content: String,
    pub covers_up_to_message_id: i64,
    pub tokens_before: Option<i64>,
    pub tokens_after: Option<i64>,
    pub created_at: String,
}

impl Store {
    pub async fn append_summary(
        &self,
        stack_id: i64,
        content: &str,
        covers_up_to_message_id: i64,
        tokens_before: i64,
        tokens_after: i64,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO chat_summaries (stack_id, content, covers_up_to_message_id, tokens_before, \
             tokens_after, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(stack_id)
        .bind(content)
        .bind(covers_up_to_message_id)
        .bind(tokens_before)
        .bind(tokens_after)
        .bind(self.now())
        .fetch_one(&mut *self.write_conn().await?)
        .await?)
    }

    pub async fn latest_summary(&self, stack_id: i64) -> Result<Option<SummaryRow>, StoreError> {
        Ok(sqlx::query_as::<_, SummaryRow>(
            "SELECT id, stack_id, content, covers_up_to_message_id, tokens_before, tokens_after, \
             created_at FROM chat_summaries WHERE stack_id = ? ORDER BY id DESC LIMIT 1",
        )
        .bind(stack_id)
        .fetch_optional(&mut *self.read().await?)
        .await?)
    }
}
