//! Keyset pages of a session's tree: the messages of a frame, the calls of messages and the
//! frames of calls, each after or before a row id (never OFFSET), with long texts cut to
//! previews inside SQLite so a page reads and decodes only what it shows.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::history::MessageRow;
use crate::repo::stack::{FRAME_COLUMNS, StackFrame};
use crate::repo::tools::ToolCallRow;

/// Which way a page reads from its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending ids after the bound.
    Forward,
    /// Descending ids before the bound.
    Backward,
}

impl Direction {
    fn sql(self) -> (&'static str, &'static str) {
        match self {
            Self::Forward => (">", "ASC"),
            Self::Backward => ("<", "DESC"),
        }
    }

    /// The bound that lets every row through.
    fn open_bound(self) -> i64 {
        match self {
            Self::Forward => 0,
            Self::Backward => i64::MAX,
        }
    }
}

/// How much of the long columns a page carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviewLimits {
    /// Characters of a message's text and of its reasoning.
    pub text_chars: u32,
    /// Characters of a tool result.
    pub result_chars: u32,
    /// A recorded diff (JSON) longer than this is left out.
    pub diff_chars: u32,
}

/// A message cut to its preview, with the full lengths.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct MessagePreview {
    #[sqlx(flatten)]
    pub row: MessageRow,
    pub content_chars: i64,
    pub reasoning_chars: i64,
    /// The message asked for tool calls (the tree shows it as thinking).
    pub has_calls: bool,
}

/// A tool call cut to its preview: its result cut, its diff left out when large.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct ToolPreview {
    #[sqlx(flatten)]
    pub row: ToolCallRow,
    pub result_chars: i64,
    pub diff_omitted: bool,
}

/// `?, ?, ...` for `n` binds.
fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn message_select(limits: PreviewLimits) -> String {
    let l = limits.text_chars;
    format!(
        "SELECT id, session_stack_id, role, substr(content, 1, {l}) AS content, status, \
         input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, duration_ms, model, \
         is_synthetic, substr(reasoning_content, 1, {l}) AS reasoning_content, cost, metadata, \
         created_at, length(content) AS content_chars, \
         COALESCE(length(reasoning_content), 0) AS reasoning_chars, \
         EXISTS (SELECT 1 FROM chat_llm_tools t WHERE t.message_id = chat_history.id) AS has_calls \
         FROM chat_history"
    )
}

fn tool_select(limits: PreviewLimits) -> String {
    let (r, d) = (limits.result_chars, limits.diff_chars);
    format!(
        "SELECT id, message_id, name, arguments, substr(result, 1, {r}) AS result, status, \
         result_type, NULL AS preview_old, NULL AS preview_new, provider_call_id, created_at, \
         updated_at, CASE WHEN length(file_diff) <= {d} THEN file_diff END AS file_diff, media, \
         COALESCE(length(result), 0) AS result_chars, \
         COALESCE(length(file_diff) > {d}, 0) AS diff_omitted \
         FROM chat_llm_tools"
    )
}

fn messages_sql(dir: Direction, limits: PreviewLimits) -> String {
    let (cmp, order) = dir.sql();
    format!(
        "{} WHERE session_stack_id = ? AND id {cmp} ? ORDER BY id {order} LIMIT ?",
        message_select(limits)
    )
}

fn calls_sql(dir: Direction, parents: usize, limits: PreviewLimits) -> String {
    let (cmp, order) = dir.sql();
    format!(
        "{} WHERE message_id IN ({}) AND id {cmp} ? ORDER BY message_id {order}, id {order} LIMIT ?",
        tool_select(limits),
        marks(parents)
    )
}

fn frames_sql(dir: Direction, parents: usize) -> String {
    let (cmp, order) = dir.sql();
    format!(
        "SELECT {FRAME_COLUMNS} FROM chat_sessions_stack WHERE parent_tool_call_id IN ({}) \
         AND id {cmp} ? ORDER BY parent_tool_call_id {order}, id {order} LIMIT ?",
        marks(parents)
    )
}

impl Store {
    /// Up to `limit` messages of frame `stack_id` after (or before) message `bound`, nearest
    /// first; `None` starts at the frame's first (or last) message.
    pub async fn page_messages(
        &self,
        stack_id: i64,
        bound: Option<i64>,
        dir: Direction,
        limit: u32,
        limits: PreviewLimits,
    ) -> Result<Vec<MessagePreview>, StoreError> {
        let sql = messages_sql(dir, limits);
        Ok(sqlx::query_as::<_, MessagePreview>(&sql)
            .bind(stack_id)
            .bind(bound.unwrap_or(dir.open_bound()))
            .bind(limit)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Up to `limit` calls of `message_ids` in tree order (by message, then call id; reversed
    /// backwards), each after (or before) call `bound` when one is given.
    pub async fn page_calls(
        &self,
        message_ids: &[i64],
        bound: Option<i64>,
        dir: Direction,
        limit: u32,
        limits: PreviewLimits,
    ) -> Result<Vec<ToolPreview>, StoreError> {
        if message_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = calls_sql(dir, message_ids.len(), limits);
        let mut query = sqlx::query_as::<_, ToolPreview>(&sql);
        for id in message_ids {
            query = query.bind(id);
        }
        Ok(query
            .bind(bound.unwrap_or(dir.open_bound()))
            .bind(limit)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Up to `limit` frames spawned by `call_ids` in tree order (by call, then frame id), each
    /// after (or before) frame `bound` when one is given.
    pub async fn page_child_frames(
        &self,
        call_ids: &[i64],
        bound: Option<i64>,
        dir: Direction,
        limit: u32,
    ) -> Result<Vec<StackFrame>, StoreError> {
        if call_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = frames_sql(dir, call_ids.len());
        let mut query = sqlx::query_as::<_, StackFrame>(&sql);
        for id in call_ids {
            query = query.bind(id);
        }
        Ok(query
            .bind(bound.unwrap_or(dir.open_bound()))
            .bind(limit)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// One message as a page shows it.
    pub async fn message_preview(
        &self,
        id: i64,
        limits: PreviewLimits,
    ) -> Result<MessagePreview, StoreError> {
        let sql = format!("{} WHERE id = ?", message_select(limits));
        sqlx::query_as::<_, MessagePreview>(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "message", id })
    }

    /// One call as a page shows it.
    pub async fn tool_preview(
        &self,
        id: i64,
        limits: PreviewLimits,
    ) -> Result<ToolPreview, StoreError> {
        let sql = format!("{} WHERE id = ?", tool_select(limits));
        sqlx::query_as::<_, ToolPreview>(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "tool call", id })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const LIMITS: PreviewLimits =
        PreviewLimits { text_chars: 10, result_chars: 10, diff_chars: 10 };

    /// SQLite's plan for `sql`, one line per step.
    async fn plan(store: &Store, sql: &str, binds: usize) -> String {
        let explain = format!("EXPLAIN QUERY PLAN {sql}");
        let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(&explain);
        for _ in 0..binds {
            query = query.bind(1_i64);
        }
        let rows = query.fetch_all(store.pool()).await.unwrap();
        rows.into_iter().map(|r| r.3).collect::<Vec<_>>().join("\n")
    }

    /// Every page read seeks through an index in its keyset order: no table scan and no sort
    /// of the whole session, so a page costs the same at 100 rows or 500,000.
    #[tokio::test]
    async fn every_page_query_seeks_an_index_and_never_scans_or_sorts_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_dir(dir.path()).await.unwrap();
        for dir in [Direction::Forward, Direction::Backward] {
            let messages = plan(&store, &messages_sql(dir, LIMITS), 3).await;
            assert!(
                messages.contains("SEARCH chat_history USING INDEX idx_history_stack"),
                "{messages}"
            );
            let calls = plan(&store, &calls_sql(dir, 3, LIMITS), 5).await;
            assert!(
                calls.contains("SEARCH chat_llm_tools USING INDEX idx_tools_message"),
                "{calls}"
            );
            let frames = plan(&store, &frames_sql(dir, 3), 5).await;
            assert!(
                frames.contains("SEARCH chat_sessions_stack USING INDEX idx_stack_parent_call"),
                "{frames}"
            );
            for p in [&messages, &frames] {
                assert!(!p.contains("SCAN"), "{p}");
                assert!(!p.contains("TEMP B-TREE"), "{p}");
            }
        }
    }

    /// The calls waiting for a human, which every window carries, are found from the open calls,
    /// not by walking every message of the session.
    #[tokio::test]
    async fn the_calls_awaiting_a_human_are_read_from_the_open_calls() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_dir(dir.path()).await.unwrap();
        let p = plan(&store, crate::repo::tools::AWAITING_HUMAN_SQL, 1).await;
        assert!(p.contains("SEARCH t USING INDEX idx_tools_open"), "{p}");
        assert!(!p.contains("idx_history_stack") && !p.contains("SCAN"), "{p}");
    }
}
