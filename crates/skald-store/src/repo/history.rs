//! `chat_history`: the messages of each frame, in id order.

use serde::{Deserialize, Serialize};
use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

/// `chat_history.role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// A prompt from a parent agent to a sub-agent; the model sees it as a user message.
    Agent,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Agent => "agent",
        }
    }

    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "user" => Ok(Self::User),
            "assistant" => Ok(Self::Assistant),
            "agent" => Ok(Self::Agent),
            other => Err(StoreError::Corrupt { column: "chat_history.role", value: other.into() }),
        }
    }
}

/// Token usage reported for an assistant row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
}

/// Sums over a session's model replies.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageTotals {
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// `None` when no reply carried a cost.
    pub cost: Option<f64>,
    /// Replies that carried a cost.
    pub priced: i64,
    pub replies: i64,
}

/// A message to append.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewMessage {
    pub stack_id: i64,
    pub role: Option<Role>,
    pub content: String,
    pub is_synthetic: bool,
    pub reasoning: Option<String>,
    pub usage: Option<TokenUsage>,
    pub duration_ms: Option<i64>,
    pub model: Option<String>,
    pub cost: Option<f64>,
    /// JSON metadata (attachments, command reference), stored beside the clean text.
    pub metadata: Option<String>,
}

#[derive(Debug, Clone, PartialEq, FromRow, Deserialize)]
pub struct MessageRow {
    pub id: i64,
    pub session_stack_id: i64,
    pub role: String,
    pub content: String,
    pub status: String,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cache_read_tokens: Option<i64>,
    pub cache_write_tokens: Option<i64>,
    pub duration_ms: Option<i64>,
    pub model: Option<String>,
    pub is_synthetic: bool,
    pub reasoning_content: Option<String>,
    pub cost: Option<f64>,
    pub metadata: Option<String>,
    pub created_at: String,
}

impl MessageRow {
    pub fn role(&self) -> Result<Role, StoreError> {
        Role::parse(&self.role)
    }

    pub fn is_failed(&self) -> bool {
        self.status == "failed"
    }
}

pub(crate) const MESSAGE_COLUMNS: &str = "id, session_stack_id, role, content, status, input_tokens, \
     output_tokens, cache_read_tokens, cache_write_tokens, duration_ms, model, is_synthetic, \
     reasoning_content, cost, metadata, created_at";

impl Store {
    /// Appends a message and returns its id.
    pub async fn append_message(&self, msg: &NewMessage) -> Result<i64, StoreError> {
        let role = msg.role.unwrap_or(Role::User);
        let usage = msg.usage;
        let insert = sqlx::query_scalar(
            "INSERT INTO chat_history (session_stack_id, role, content, is_synthetic, \
             reasoning_content, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
             duration_ms, model, cost, metadata, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(msg.stack_id)
        .bind(role.as_str())
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
        .bind(self.now());
        self.insert_carrying_events(insert).await
    }

    /// Messages of one frame in id order (failed rows included; callers decide).
    pub async fn messages_for_stack(&self, stack_id: i64) -> Result<Vec<MessageRow>, StoreError> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE session_stack_id = ? ORDER BY id"
        );
        Ok(sqlx::query_as::<_, MessageRow>(&sql)
            .bind(stack_id)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Messages of one frame with an id above `after_id`, in id order (`after_id = 0` for all),
    /// read as one document (see `bulk`). Model rounds read through `frame_replay` instead.
    pub async fn messages_for_stack_after(
        &self,
        stack_id: i64,
        after_id: i64,
    ) -> Result<Vec<MessageRow>, StoreError> {
        let inner = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE session_stack_id = ? AND id > ? \
             ORDER BY id"
        );
        let object = super::bulk::json_object(MESSAGE_COLUMNS, &["is_synthetic"]);
        self.fetch_json_rows(&object, &inner, &[stack_id, after_id]).await
    }

    /// The newest live (not failed) row of a frame.
    pub async fn last_live_message(&self, stack_id: i64) -> Result<Option<MessageRow>, StoreError> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE session_stack_id = ? \
             AND status = 'ok' ORDER BY id DESC LIMIT 1"
        );
        Ok(sqlx::query_as::<_, MessageRow>(&sql)
            .bind(stack_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// The text of the newest live user row of a frame (the prompt a turn answers), if any.
    pub async fn last_prompt(&self, stack_id: i64) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT content FROM chat_history WHERE session_stack_id = ? AND role = 'user' \
             AND status = 'ok' ORDER BY id DESC LIMIT 1",
        )
        .bind(stack_id)
        .fetch_optional(&mut *self.read().await?)
        .await?)
    }

    /// The newest assistant row of a frame above `after_id` that carries provider usage.
    pub async fn last_reported_usage(
        &self,
        stack_id: i64,
        after_id: i64,
    ) -> Result<Option<MessageRow>, StoreError> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE session_stack_id = ? AND id > ? \
             AND role = 'assistant' AND input_tokens IS NOT NULL ORDER BY id DESC LIMIT 1"
        );
        Ok(sqlx::query_as::<_, MessageRow>(&sql)
            .bind(stack_id)
            .bind(after_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Token and cost totals of every model reply in a session's frames.
    pub async fn usage_totals(&self, session_id: i64) -> Result<UsageTotals, StoreError> {
        let (input, output, cost, priced, replies): (i64, i64, Option<f64>, i64, i64) =
            sqlx::query_as(
                "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), \
                 SUM(cost), COUNT(cost), COUNT(*) FROM chat_history WHERE role = 'assistant' \
                 AND session_stack_id IN (SELECT id FROM chat_sessions_stack WHERE session_id = ?)",
            )
            .bind(session_id)
            .fetch_one(&mut *self.read().await?)
            .await?;
        Ok(UsageTotals { input_tokens: input, output_tokens: output, cost, priced, replies })
    }

    /// Messages of every frame of a session in id order: one read for the whole tree.
    pub async fn messages_for_session(
        &self,
        session_id: i64,
    ) -> Result<Vec<MessageRow>, StoreError> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE session_stack_id IN \
             (SELECT id FROM chat_sessions_stack WHERE session_id = ?) ORDER BY id"
        );
        Ok(sqlx::query_as::<_, MessageRow>(&sql)
            .bind(session_id)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// One message by id.
    pub async fn message(&self, id: i64) -> Result<MessageRow, StoreError> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM chat_history WHERE id = ?");
        sqlx::query_as::<_, MessageRow>(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "message", id })
    }

    /// The frame a message belongs to.
    pub async fn message_frame(&self, id: i64) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT session_stack_id FROM chat_history WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "message", id })
    }

    /// Whether the model asked for tool calls in this message.
    pub async fn message_has_calls(&self, id: i64) -> Result<bool, StoreError> {
        Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM chat_llm_tools WHERE message_id = ?)")
            .bind(id)
            .fetch_one(&mut *self.read().await?)
            .await?)
    }

    /// `ok → failed` for an orphaned trailing user/agent row; the only status change allowed.
    /// A prompt a reply already follows is left alone: rows the model has answered never change
    /// (the engine's context cache relies on it, see `replay_delta`).
    pub async fn mark_message_failed(&self, message_id: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE chat_history SET status = 'failed' WHERE id = ? AND role != 'assistant' \
             AND NOT EXISTS (SELECT 1 FROM chat_history later \
               WHERE later.session_stack_id = chat_history.session_stack_id \
               AND later.id > chat_history.id AND later.role = 'assistant')",
        )
        .bind(message_id)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }
}
