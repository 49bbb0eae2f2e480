//! `chat_llm_tools`: tool calls and their status machine.

use skald_protocol::ToolStatus;
use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::staged_events::events_staged;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToolCall {
    pub message_id: i64,
    pub name: String,
    /// JSON text exactly as the model produced it (may be invalid JSON).
    pub arguments: String,
    pub provider_call_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow, serde::Deserialize)]
pub struct ToolCallRow {
    pub id: i64,
    pub message_id: i64,
    pub name: String,
    pub arguments: Option<String>,
    pub result: Option<String>,
    pub status: String,
    pub result_type: String,
    pub preview_old: Option<String>,
    pub preview_new: Option<String>,
    pub provider_call_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// The change a write tool made (JSON `FileDiff`). Only `tool_calls_for_session` reads it:
    /// the model never sees it, so the per-round replay leaves it out.
    #[sqlx(default)]
    #[serde(default)]
    pub file_diff: Option<String>,
    /// The media and links an MCP call returned (JSON `ToolResultMedia`), read where the diff is.
    #[sqlx(default)]
    #[serde(default)]
    pub media: Option<String>,
    /// What a `pending` call waits for (an approval request or a question is recorded for it);
    /// `None` for a call that never reached the gate. Only the frame replay reads it.
    #[sqlx(skip)]
    #[serde(default)]
    pub awaits: Option<Awaits>,
}

/// The human a `pending` call waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Awaits {
    /// A decision on an approval request.
    Approval,
    /// The answer to a clarification question.
    Answer,
}

impl ToolCallRow {
    pub fn status(&self) -> Result<ToolStatus, StoreError> {
        ToolStatus::parse(&self.status).ok_or_else(|| StoreError::Corrupt {
            column: "chat_llm_tools.status",
            value: self.status.clone(),
        })
    }
}

pub(crate) const TOOL_COLUMNS: &str = "id, message_id, name, arguments, result, status, result_type, \
     preview_old, preview_new, provider_call_id, created_at, updated_at";

/// Every call status, in state machine order.
pub const ALL_STATUSES: [ToolStatus; 6] = [
    ToolStatus::Pending,
    ToolStatus::Running,
    ToolStatus::Done,
    ToolStatus::Failed,
    ToolStatus::Rejected,
    ToolStatus::Cancelled,
];

/// Whether `from → to` is an allowed step of the call state machine.
pub fn transition_allowed(from: ToolStatus, to: ToolStatus) -> bool {
    use ToolStatus::*;
    matches!(
        (from, to),
        (Pending, Running | Rejected | Cancelled | Failed | Done)
            | (Running, Pending | Done | Failed | Cancelled | Rejected)
    )
}

impl Store {
    /// Appends an assistant message and its calls in one transaction, so a crash never leaves a
    /// message whose calls were lost. Calls start `pending`; ids are allocated in call order.
    pub async fn append_assistant_with_calls(
        &self,
        msg: &crate::repo::history::NewMessage,
        calls: &[(String, String, Option<String>)],
    ) -> Result<(i64, Vec<i64>), StoreError> {
        let now = self.now();
        let usage = msg.usage;
        let mut tx = self.begin_write().await?;
        let message_id: i64 = sqlx::query_scalar(
            "INSERT INTO chat_history (session_stack_id, role, content, is_synthetic, \
             reasoning_content, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
             duration_ms, model, cost, metadata, created_at) \
             VALUES (?, 'assistant', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(msg.stack_id)
        .bind(&msg.content)
        .bind(msg.is_synthetic)
        .bind(&msg.reasoning)
        .bind(usage.map(|u| u.input_tokens))
        .bind(usage.map(|u| u.output_tokens))
        .bind(usage.map(|u| u.cache_read_tokens))
        .bind(usage.map(|u| u.cache_write_tokens))
        .bind(msg.duration_ms)
        .bind(&msg.model)
        .bind(msg.cost)
        .bind(&msg.metadata)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        let mut ids = Vec::with_capacity(calls.len());
        for (name, arguments, provider_call_id) in calls {
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO chat_llm_tools (message_id, name, arguments, status, provider_call_id, \
                 created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?, ?) RETURNING id",
            )
            .bind(message_id)
            .bind(name)
            .bind(arguments)
            .bind(provider_call_id)
            .bind(&now)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await?;
            ids.push(id);
        }
        self.commit_created(tx, Some(message_id)).await?;
        Ok((message_id, ids))
    }

    /// Records calls of one assistant message in call order (ids allocated up front, so completion
    /// order never leaks into the replay order). New calls start `pending`.
    pub async fn append_tool_calls(&self, calls: &[NewToolCall]) -> Result<Vec<i64>, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let mut ids = Vec::with_capacity(calls.len());
        for call in calls {
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO chat_llm_tools (message_id, name, arguments, status, provider_call_id, \
                 created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?, ?) RETURNING id",
            )
            .bind(call.message_id)
            .bind(&call.name)
            .bind(&call.arguments)
            .bind(&call.provider_call_id)
            .bind(&now)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await?;
            ids.push(id);
        }
        self.commit(tx).await?;
        Ok(ids)
    }

    pub async fn tool_call(&self, id: i64) -> Result<ToolCallRow, StoreError> {
        let sql = format!("SELECT {TOOL_COLUMNS} FROM chat_llm_tools WHERE id = ?");
        sqlx::query_as::<_, ToolCallRow>(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "tool call", id })
    }

    /// One call with the change it recorded (what the tree shows of it).
    pub async fn tool_call_with_diff(&self, id: i64) -> Result<ToolCallRow, StoreError> {
        let sql =
            format!("SELECT {TOOL_COLUMNS}, file_diff, media FROM chat_llm_tools WHERE id = ?");
        sqlx::query_as::<_, ToolCallRow>(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "tool call", id })
    }

    /// Advances a call along the state machine; a terminal call never changes again.
    ///
    /// One conditional UPDATE (the allowed previous states in its WHERE) instead of a read and a
    /// write in a transaction: atomic all the same, and it runs twice for every tool call.
    pub async fn set_tool_status(
        &self,
        id: i64,
        to: ToolStatus,
        result: Option<&str>,
    ) -> Result<(), StoreError> {
        let from: Vec<String> = ALL_STATUSES
            .iter()
            .filter(|f| transition_allowed(**f, to))
            .map(|f| format!("'{}'", f.as_str()))
            .collect();
        let sql = format!(
            "UPDATE chat_llm_tools SET status = ?, result = COALESCE(?, result), updated_at = ? \
             WHERE id = ? AND status IN ({})",
            from.join(", ")
        );
        let update = sqlx::query(&sql).bind(to.as_str()).bind(result).bind(self.now()).bind(id);
        let changed = if events_staged() {
            let mut tx = self.begin_write().await?;
            let changed = update.execute(&mut *tx).await?.rows_affected();
            if changed == 1 {
                self.commit(tx).await?;
            }
            changed
        } else {
            update.execute(&mut *self.write_conn().await?).await?.rows_affected()
        };
        if changed == 1 {
            return Ok(());
        }
        let current = self.tool_call(id).await?.status()?;
        Err(StoreError::Conflict(format!(
            "tool call {id} is {} and cannot become {}",
            current.as_str(),
            to.as_str()
        )))
    }

    /// `pending → running`, and nothing when the call is already running (a resumed re-run).
    pub async fn start_tool_call(&self, id: i64) -> Result<(), StoreError> {
        match self.set_tool_status(id, ToolStatus::Running, None).await {
            Err(StoreError::Conflict(_))
                if self.tool_call(id).await?.status()? == ToolStatus::Running =>
            {
                Ok(())
            }
            other => other,
        }
    }

    /// Calls of one frame's messages with a message id above `after_message_id`, in id order
    /// (read as one document, see `bulk`).
    pub async fn tool_calls_for_stack_after(
        &self,
        stack_id: i64,
        after_message_id: i64,
    ) -> Result<Vec<ToolCallRow>, StoreError> {
        let inner = format!(
            "SELECT {TOOL_COLUMNS} FROM chat_llm_tools WHERE message_id IN \
             (SELECT id FROM chat_history WHERE session_stack_id = ? AND id > ?) ORDER BY id"
        );
        let object = super::bulk::json_object(TOOL_COLUMNS, &[]);
        self.fetch_json_rows(&object, &inner, &[stack_id, after_message_id]).await
    }

    /// Open calls (`pending`/`running`) of one frame, oldest first.
    pub async fn open_tool_calls_for_stack(
        &self,
        stack_id: i64,
    ) -> Result<Vec<ToolCallRow>, StoreError> {
        let sql = format!(
            "SELECT {TOOL_COLUMNS} FROM chat_llm_tools WHERE status IN ('pending', 'running') \
             AND message_id IN (SELECT id FROM chat_history WHERE session_stack_id = ?) ORDER BY id"
        );
        Ok(sqlx::query_as::<_, ToolCallRow>(&sql)
            .bind(stack_id)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Open calls (`pending`/`running`) of a session, oldest first.
    pub async fn open_tool_calls(&self, session_id: i64) -> Result<Vec<ToolCallRow>, StoreError> {
        let sql = format!(
            "SELECT {TOOL_COLUMNS} FROM chat_llm_tools WHERE status IN ('pending', 'running') \
             AND message_id IN (SELECT h.id FROM chat_history h JOIN chat_sessions_stack s \
             ON h.session_stack_id = s.id WHERE s.session_id = ?) ORDER BY id"
        );
        Ok(sqlx::query_as::<_, ToolCallRow>(&sql)
            .bind(session_id)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Calls of a session that wait for a human: parked for an approval nobody decided yet, or
    /// asking a question nobody answered yet. Oldest first.
    pub async fn calls_awaiting_human(&self, session_id: i64) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(AWAITING_HUMAN_SQL)
            .bind(session_id)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Every call of a session in id order (one read for the whole tree).
    pub async fn tool_calls_for_session(
        &self,
        session_id: i64,
    ) -> Result<Vec<ToolCallRow>, StoreError> {
        let sql = format!(
            "SELECT {TOOL_COLUMNS}, file_diff, media FROM chat_llm_tools WHERE message_id IN \
             (SELECT h.id FROM chat_history h JOIN chat_sessions_stack s ON h.session_stack_id = s.id \
              WHERE s.session_id = ?) ORDER BY id"
        );
        Ok(sqlx::query_as::<_, ToolCallRow>(&sql)
            .bind(session_id)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Records the media and links an MCP call returned (a JSON `ToolResultMedia`), before it is
    /// marked done.
    pub async fn record_tool_media(&self, id: i64, media_json: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE chat_llm_tools SET media = ? WHERE id = ?")
            .bind(media_json)
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }

    /// The media a call recorded (JSON `ToolResultMedia`), `None` when it recorded none.
    pub async fn tool_media(&self, id: i64) -> Result<Option<String>, StoreError> {
        let row: Option<Option<String>> =
            sqlx::query_scalar("SELECT media FROM chat_llm_tools WHERE id = ?")
                .bind(id)
                .fetch_optional(&mut *self.read().await?)
                .await?;
        row.ok_or(StoreError::NotFound { what: "tool call", id })
    }

    /// Records the change a write call made (a JSON `FileDiff`), before it is marked done.
    pub async fn record_file_diff(&self, id: i64, diff_json: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE chat_llm_tools SET file_diff = ? WHERE id = ?")
            .bind(diff_json)
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }
}

/// The calls of session `?` waiting for a human. Every window reads it, so it starts from the
/// open calls (`idx_tools_open`, a handful) and looks up each one's session: left to itself,
/// SQLite walks the session's frames, every message and every call instead, which grows with
/// the session (a second at 550,000 messages).
pub(crate) const AWAITING_HUMAN_SQL: &str = "SELECT t.id FROM chat_llm_tools t INDEXED BY idx_tools_open \
     JOIN chat_history h ON h.id = t.message_id \
     JOIN chat_sessions_stack s ON s.id = h.session_stack_id \
     WHERE s.session_id = ? AND t.status IN ('pending', 'running') AND t.status = 'pending' AND ( \
       (EXISTS (SELECT 1 FROM approval_requests r WHERE r.tool_call_id = t.id) \
        AND NOT EXISTS (SELECT 1 FROM approval_decisions d WHERE d.tool_call_id = t.id)) \
       OR (EXISTS (SELECT 1 FROM clarification_questions q WHERE q.tool_call_id = t.id) \
        AND NOT EXISTS (SELECT 1 FROM clarification_answers a WHERE a.tool_call_id = t.id))) \
     ORDER BY t.id";
