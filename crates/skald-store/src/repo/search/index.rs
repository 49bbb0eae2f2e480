//! Keeping the search indexes up to date off the write path (migration 0018).
//!
//! Writing a message or a call no longer indexes it: every FTS5 insert made in a round's own
//! transaction wrote a new index segment there (about 16 of a tool round's 36 WAL pages). The rows
//! above a watermark (`search_index_state`) are indexed here instead, many per transaction, by a
//! background step (`index_pending`) and by every search before it reads (`catch_up_search`), so
//! a search sees every row committed before it started. Edits and deletes of rows already
//! indexed still reach the indexes at once, through the triggers.

use crate::error::StoreError;
use crate::pool::Store;

/// Rows of each index a search's catch-up indexes per transaction: a long backlog is indexed in
/// several transactions, so the writes of a running turn wait at most one batch.
const CATCH_UP_BATCH: u32 = 2_000;

/// Indexes the messages with ids in `(?, ?]`.
const INDEX_MESSAGES: &str = "INSERT INTO message_fts (rowid, content, reasoning_content) \
     SELECT id, content, reasoning_content FROM chat_history WHERE id > ? AND id <= ? ORDER BY id";
/// Indexes the tool calls with ids in `(?, ?]`, as migration 0008's view extracts them.
const INDEX_CALLS: &str = "INSERT INTO tool_fts (rowid, name, path, command) \
     SELECT id, name, path, command FROM tool_search_doc WHERE id > ? AND id <= ? ORDER BY id";

/// What one `index_pending` step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Indexed {
    /// Messages and tool calls indexed by this step.
    pub messages: u64,
    pub calls: u64,
    /// Rows are still waiting (the step stopped at its limit).
    pub more: bool,
}

impl Store {
    /// Indexes up to `limit` messages and `limit` tool calls that are not in the search indexes
    /// yet, oldest first, in one write transaction; a store with nothing pending answers from
    /// one read, without taking the write lock. What a background service calls between turns.
    pub async fn index_pending(&self, limit: u32) -> Result<Indexed, StoreError> {
        if !self.index_behind().await? {
            return Ok(Indexed::default());
        }
        let limit = i64::from(limit.max(1));
        let mut tx = self.begin_write().await?;
        // Read again under the write lock: another connection may have caught up meanwhile.
        let (messages_upto, calls_upto): (i64, i64) =
            sqlx::query_as("SELECT messages_upto, calls_upto FROM search_index_state")
                .fetch_one(&mut *tx)
                .await?;
        let (messages_to, more_messages) =
            batch_end(&mut tx, "chat_history", messages_upto, limit).await?;
        let (calls_to, more_calls) =
            batch_end(&mut tx, "chat_llm_tools", calls_upto, limit).await?;
        let done = Indexed {
            messages: index_range(&mut tx, INDEX_MESSAGES, messages_upto, messages_to).await?,
            calls: index_range(&mut tx, INDEX_CALLS, calls_upto, calls_to).await?,
            more: more_messages || more_calls,
        };
        sqlx::query("UPDATE search_index_state SET messages_upto = ?, calls_upto = ?")
            .bind(messages_to)
            .bind(calls_to)
            .execute(&mut *tx)
            .await?;
        self.commit(tx).await?;
        Ok(done)
    }

    /// Indexes everything committed so far: run by every search before it reads, so none misses
    /// a row written just before it. Costs one read when the indexes are up to date.
    pub(crate) async fn catch_up_search(&self) -> Result<(), StoreError> {
        while self.index_pending(CATCH_UP_BATCH).await?.more {}
        Ok(())
    }

    /// Whether a message or call above the watermark exists (two primary-key lookups).
    async fn index_behind(&self) -> Result<bool, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COALESCE((SELECT MAX(id) FROM chat_history), 0) > messages_upto \
             OR COALESCE((SELECT MAX(id) FROM chat_llm_tools), 0) > calls_upto \
             FROM search_index_state",
        )
        .fetch_one(&mut *self.read().await?)
        .await?)
    }
}

/// The highest id of the next `limit` rows of `table` above `upto` (`upto` when there are none),
/// and whether rows remain above it.
async fn batch_end(
    tx: &mut crate::pool::WriteTx,
    table: &str,
    upto: i64,
    limit: i64,
) -> Result<(i64, bool), StoreError> {
    let sql = format!(
        "WITH batch(end_id) AS (SELECT COALESCE(MAX(id), ?1) \
           FROM (SELECT id FROM {table} WHERE id > ?1 ORDER BY id LIMIT ?2)) \
         SELECT end_id, EXISTS (SELECT 1 FROM {table} WHERE id > end_id) FROM batch"
    );
    let (end, more): (i64, bool) =
        sqlx::query_as(&sql).bind(upto).bind(limit).fetch_one(&mut **tx).await?;
    Ok((end, more))
}

/// Runs `sql` (`INDEX_MESSAGES` or `INDEX_CALLS`) over the ids in `(from, to]`; the rows indexed.
async fn index_range(
    tx: &mut crate::pool::WriteTx,
    sql: &str,
    from: i64,
    to: i64,
) -> Result<u64, StoreError> {
    if to <= from {
        return Ok(0);
    }
    Ok(sqlx::query(sql).bind(from).bind(to).execute(&mut **tx).await?.rows_affected())
}
