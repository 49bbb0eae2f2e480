//! Everything one context build reads about a frame, in a single statement: the latest summary,
//! the messages and calls after its boundary (or only a count-capped tail) and the session's
//! scratchpad notes.
//!
//! Every model round builds a context. Read one by one these were four or five statements, each
//! a round trip to sqlx's worker thread; most of a round's engine overhead was those wake-ups.

use serde::Deserialize;

use super::bulk::json_object;
use super::history::{MESSAGE_COLUMNS, MessageRow};
use super::summaries::SummaryRow;
use super::tools::{TOOL_COLUMNS, ToolCallRow};
use crate::error::StoreError;
use crate::pool::Store;

const SUMMARY_COLUMNS: &str =
    "id, stack_id, content, covers_up_to_message_id, tokens_before, tokens_after, created_at";

/// Which history rows the replay holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayWindow {
    /// Everything after the latest summary's boundary.
    SinceSummary,
    /// Only what a cap of this many messages can keep: from before the `keep + 1`-th newest
    /// live row, or before the current turn's prompt if that is older (one row more than the cap
    /// so the caller can snap the cut to a prompt). Keeps a round's cost independent of the
    /// session's length.
    Tail(usize),
}

/// What [`Store::frame_replay`] returns (its tool rows carry `awaits`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FrameReplay {
    pub summary: Option<SummaryRow>,
    /// The message id the rows start after.
    pub from: i64,
    /// The highest tool call id in the database when read (any frame): every call added later
    /// has a higher id, which is how a cached build finds them (`frame_delta`).
    pub max_tool_id: i64,
    pub messages: Vec<MessageRow>,
    pub tools: Vec<ToolCallRow>,
    /// Scratchpad notes sorted by key.
    pub notes: Vec<(String, String)>,
}

impl Store {
    /// One frame's replay and the notes of `notes_session_id`, read in one statement as one JSON
    /// document: the rows `latest_summary`, `messages_for_stack_after`,
    /// `tool_calls_for_stack_after` and `scratchpad` return, for the window's start.
    pub async fn frame_replay(
        &self,
        stack_id: i64,
        notes_session_id: i64,
        window: ReplayWindow,
    ) -> Result<FrameReplay, StoreError> {
        let keep: Option<i64> = match window {
            ReplayWindow::SinceSummary => None,
            ReplayWindow::Tail(keep) => Some(i64::try_from(keep).unwrap_or(i64::MAX)),
        };
        let sql = replay_sql();
        let doc: String = sqlx::query_scalar(sql)
            .bind(stack_id)
            .bind(notes_session_id)
            .bind(keep)
            .fetch_one(&mut *self.read().await?)
            .await?;
        serde_json::from_str(&doc)
            .map_err(|e| StoreError::Corrupt { column: "frame replay", value: e.to_string() })
    }
}

/// What a `pending` call waits for, as the `awaits` column of a call row aliased `c`. Only pending
/// calls look further (two primary-key probes): what they wait for decides what the model is told.
pub(crate) const AWAITS: &str = "CASE WHEN status = 'pending' THEN CASE \
     WHEN EXISTS (SELECT 1 FROM clarification_questions q WHERE q.tool_call_id = c.id) \
       THEN 'answer' \
     WHEN EXISTS (SELECT 1 FROM approval_requests a WHERE a.tool_call_id = c.id) \
       THEN 'approval' END END AS awaits";

/// The scratchpad notes of session ?2 as a JSON array of `[key, value]`, sorted by key.
pub(crate) const NOTES: &str = "json((SELECT json_group_array(json_array(key, value)) FROM \
     (SELECT key, value FROM session_scratchpad WHERE session_id = ?2 ORDER BY key)))";

/// The highest tool call id in the database (a primary-key probe).
pub(crate) const MAX_TOOL_ID: &str = "(SELECT COALESCE(MAX(id), 0) FROM chat_llm_tools)";

/// ?1 = stack id, ?2 = session whose notes are read, ?3 = the tail's size or NULL.
fn replay_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let summary = json_object(SUMMARY_COLUMNS, &[]);
        let message = json_object(MESSAGE_COLUMNS, &["is_synthetic"]);
        let tool = json_object(&format!("{TOOL_COLUMNS}, awaits"), &[]);
        // The tail's start as `ReplayWindow::Tail` describes it. The newest prompt is found by
        // walking back from the end (`MAX(id)` with these filters scans the whole frame).
        format!(
            "WITH s AS (SELECT {SUMMARY_COLUMNS} FROM chat_summaries WHERE stack_id = ?1 \
               ORDER BY id DESC LIMIT 1), \
             b AS (SELECT COALESCE((SELECT covers_up_to_message_id FROM s), 0) AS boundary), \
             t AS (SELECT \
               (SELECT id FROM chat_history WHERE session_stack_id = ?1 \
                 AND id > (SELECT boundary FROM b) AND status = 'ok' \
                 ORDER BY id DESC LIMIT 1 OFFSET COALESCE(?3, 0)) AS nth, \
               (SELECT id FROM chat_history WHERE session_stack_id = ?1 \
                 AND id > (SELECT boundary FROM b) AND status = 'ok' \
                 AND role IN ('user', 'agent') ORDER BY id DESC LIMIT 1) AS prompt), \
             w AS (SELECT CASE WHEN ?3 IS NULL OR (SELECT nth FROM t) IS NULL \
               THEN (SELECT boundary FROM b) \
               ELSE MIN(COALESCE((SELECT prompt FROM t), (SELECT nth FROM t)), (SELECT nth FROM t)) - 1 \
               END AS start) \
             SELECT json_object( \
               'summary', json((SELECT {summary} FROM s)), \
               'from', (SELECT start FROM w), \
               'max_tool_id', {MAX_TOOL_ID}, \
               'messages', json((SELECT json_group_array({message}) FROM \
                 (SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE session_stack_id = ?1 \
                   AND id > (SELECT start FROM w) ORDER BY id))), \
               'tools', json((SELECT json_group_array({tool}) FROM \
                 (SELECT {TOOL_COLUMNS}, {AWAITS} FROM chat_llm_tools c WHERE message_id IN \
                   (SELECT id FROM chat_history WHERE session_stack_id = ?1 \
                     AND id > (SELECT start FROM w)) ORDER BY id))), \
               'notes', {NOTES})"
        )
    })
}
