//! What changed in a frame since a context build read it, in one statement: the rows added since,
//! the calls added since, the current state of the calls that were still open, the id of the
//! latest summary and the scratchpad notes.
//!
//! The engine's context cache extends a built request with this instead of replaying the frame.
//! It relies on what the store allows to change after a row is written: a call moves only while
//! `pending`/`running` (a settled call never changes, see `set_tool_status`), a prompt is marked
//! failed only while no reply follows it (`mark_message_failed`), summaries and rows are appended
//! and never edited or deleted, and ids grow in commit order (SQLite has one writer at a time).

use serde::Deserialize;

use super::bulk::json_object;
use super::history::{MESSAGE_COLUMNS, MessageRow};
use super::replay::{AWAITS, MAX_TOOL_ID, NOTES};
use super::tools::{TOOL_COLUMNS, ToolCallRow};
use crate::error::StoreError;
use crate::pool::Store;

/// Where a cached build left off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeltaCursor {
    /// Rows of the frame with a higher id are returned (failed ones included).
    pub after_message_id: i64,
    /// Calls of the frame with a higher id are returned (`max_tool_id` of the last read).
    pub after_tool_id: i64,
    /// Calls that were `pending`/`running`: returned as they are now, whatever their id.
    pub open_calls: Vec<i64>,
}

/// What [`Store::frame_delta`] returns (its tool rows carry `awaits`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FrameDelta {
    /// The frame's latest summary; a different one than the build saw means a compaction.
    pub summary_id: Option<i64>,
    /// The highest tool call id in the database, for the next cursor.
    pub max_tool_id: i64,
    pub messages: Vec<MessageRow>,
    /// New calls of the frame and the open calls asked for, in id order.
    pub tools: Vec<ToolCallRow>,
    /// Scratchpad notes sorted by key.
    pub notes: Vec<(String, String)>,
}

impl Store {
    /// The changes to `stack_id` after `cursor`, and the notes of `notes_session_id`, read in one
    /// statement (one snapshot) as one JSON document.
    pub async fn frame_delta(
        &self,
        stack_id: i64,
        notes_session_id: i64,
        cursor: &DeltaCursor,
    ) -> Result<FrameDelta, StoreError> {
        let open = serde_json::to_string(&cursor.open_calls)
            .map_err(|e| StoreError::Corrupt { column: "open call ids", value: e.to_string() })?;
        let doc: String = sqlx::query_scalar(delta_sql())
            .bind(stack_id)
            .bind(notes_session_id)
            .bind(cursor.after_message_id)
            .bind(cursor.after_tool_id)
            .bind(open)
            .fetch_one(&mut *self.read().await?)
            .await?;
        serde_json::from_str(&doc)
            .map_err(|e| StoreError::Corrupt { column: "frame delta", value: e.to_string() })
    }
}

/// ?1 = stack id, ?2 = session whose notes are read, ?3 = last message id seen, ?4 = last call id
/// seen, ?5 = JSON array of open call ids. Every part is an index or primary-key range, so the
/// cost follows what changed, not the frame's length.
fn delta_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let message = json_object(MESSAGE_COLUMNS, &["is_synthetic"]);
        let tool = json_object(&format!("{TOOL_COLUMNS}, awaits"), &[]);
        format!(
            "SELECT json_object( \
               'summary_id', (SELECT id FROM chat_summaries WHERE stack_id = ?1 \
                 ORDER BY id DESC LIMIT 1), \
               'max_tool_id', {MAX_TOOL_ID}, \
               'messages', json((SELECT json_group_array({message}) FROM \
                 (SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE session_stack_id = ?1 \
                   AND id > ?3 ORDER BY id))), \
               'tools', json((SELECT json_group_array({tool}) FROM \
                 (SELECT {TOOL_COLUMNS}, {AWAITS} FROM chat_llm_tools c WHERE c.id > ?4 \
                   AND EXISTS (SELECT 1 FROM chat_history h WHERE h.id = c.message_id \
                     AND h.session_stack_id = ?1) \
                  UNION ALL \
                  SELECT {TOOL_COLUMNS}, {AWAITS} FROM chat_llm_tools c WHERE c.id <= ?4 \
                   AND c.id IN (SELECT value FROM json_each(?5)) \
                  ORDER BY id))), \
               'notes', {NOTES})"
        )
    })
}
