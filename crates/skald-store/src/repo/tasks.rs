//! Async tasks: the child session an `execute_task` (mode async) call starts, its status, and its
//! report, delivered to the parent exactly once.

use serde::Deserialize;
use skald_protocol::{TaskInfo, TaskState};
use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

/// A task's row.
#[derive(Debug, Clone, PartialEq, Eq, FromRow, Deserialize)]
pub struct TaskRow {
    pub id: i64,
    pub parent_session_id: i64,
    pub parent_tool_call_id: i64,
    pub child_session_id: i64,
    pub agent_id: String,
    pub label: String,
    /// `queued`, `running`, `done`, `failed` or `cancelled`.
    pub status: String,
    pub report: Option<String>,
    pub reported_at: Option<String>,
    pub delivered_message_id: Option<i64>,
    pub delivered_at: Option<String>,
    pub created_at: String,
}

impl TaskRow {
    /// The task as the API shows it.
    pub fn info(&self) -> TaskInfo {
        TaskInfo {
            task_id: self.id,
            parent_session_id: self.parent_session_id,
            child_session_id: self.child_session_id,
            tool_call_id: self.parent_tool_call_id,
            label: self.label.clone(),
            agent_id: self.agent_id.clone(),
            state: self.state(),
            report: self.report.clone(),
            delivered: self.delivered_message_id.is_some(),
        }
    }

    pub fn state(&self) -> TaskState {
        match self.status.as_str() {
            "queued" => TaskState::Queued,
            "running" => TaskState::Running,
            "done" => TaskState::Done,
            "failed" => TaskState::Failed,
            _ => TaskState::Cancelled,
        }
    }

    /// Whether the task has ended (its report is recorded).
    pub fn ended(&self) -> bool {
        matches!(self.status.as_str(), "done" | "failed" | "cancelled")
    }

    /// The labelled block the parent's model reads.
    pub fn report_block(&self) -> String {
        let text = self.report.as_deref().unwrap_or("").trim();
        match self.status.as_str() {
            "done" => format!("[task {} reported] {text}", self.label),
            "failed" => format!("[task {} failed] {text}", self.label),
            "cancelled" => format!("[task {} was stopped] {text}", self.label),
            other => format!("[task {} ended: {other}] {text}", self.label),
        }
        .trim_end()
        .to_string()
    }
}

/// What starting a task needs.
#[derive(Debug, Clone)]
pub struct NewTask<'a> {
    pub parent_session_id: i64,
    pub parent_tool_call_id: i64,
    pub agent_id: &'a str,
    pub agent_prompt: &'a str,
    /// The task, the child's first message.
    pub prompt: &'a str,
    pub title: Option<&'a str>,
    /// The LLM client the delegation named; pinned on the child session.
    pub client: Option<&'a str>,
}

/// A report folded into the parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveredReport {
    pub task: TaskRow,
    pub message_id: i64,
    pub content: String,
}

const TASK_COLUMNS: &str = "id, parent_session_id, parent_tool_call_id, child_session_id, \
     agent_id, label, status, report, reported_at, delivered_message_id, delivered_at, created_at";

impl Store {
    /// Creates the child session (ephemeral, unattended by no one: it keeps the parent's source,
    /// run context and scratchpad), its root frame with the task as first message, and the task
    /// row, in one transaction. Returns the task.
    pub async fn create_task(&self, new: &NewTask<'_>) -> Result<TaskRow, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let child_session_id: i64 = sqlx::query_scalar(
            "INSERT INTO chat_sessions (title, source, agent_id, is_interactive, is_ephemeral, \
             run_context, auto_deny_approvals, scratchpad_session_id, client, created_at) \
             SELECT ?, p.source, ?, 0, 1, p.run_context, p.auto_deny_approvals, \
             COALESCE(p.scratchpad_session_id, p.id), ?, ? FROM chat_sessions p WHERE p.id = ? \
             RETURNING id",
        )
        .bind(new.title)
        .bind(new.agent_id)
        .bind(new.client)
        .bind(&now)
        .bind(new.parent_session_id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound { what: "session", id: new.parent_session_id })?;
        let stack_id: i64 = sqlx::query_scalar(
            "INSERT INTO chat_sessions_stack (session_id, agent_id, agent_prompt, depth, \
             created_at) VALUES (?, ?, ?, 0, ?) RETURNING id",
        )
        .bind(child_session_id)
        .bind(new.agent_id)
        .bind(new.agent_prompt)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO chat_history (session_stack_id, role, content, created_at) \
             VALUES (?, 'agent', ?, ?)",
        )
        .bind(stack_id)
        .bind(new.prompt)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        let label = format!("{}#{child_session_id}", new.agent_id);
        let sql = format!(
            "INSERT INTO async_tasks (parent_session_id, parent_tool_call_id, child_session_id, \
             agent_id, label, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING {TASK_COLUMNS}"
        );
        let row = sqlx::query_as::<_, TaskRow>(&sql)
            .bind(new.parent_session_id)
            .bind(new.parent_tool_call_id)
            .bind(child_session_id)
            .bind(new.agent_id)
            .bind(&label)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(row)
    }

    pub async fn task(&self, id: i64) -> Result<TaskRow, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM async_tasks WHERE id = ?");
        sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .ok_or(StoreError::NotFound { what: "task", id })
    }

    /// The task started by call `tool_call_id`, if any (a resumed call must not start it twice).
    pub async fn task_of_call(&self, tool_call_id: i64) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM async_tasks WHERE parent_tool_call_id = ?");
        Ok(sqlx::query_as(&sql).bind(tool_call_id).fetch_optional(self.pool()).await?)
    }

    /// The task whose child session is `session_id`, if it is one.
    pub async fn task_of_session(&self, session_id: i64) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM async_tasks WHERE child_session_id = ?");
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_optional(self.pool()).await?)
    }

    /// The tasks a session started, oldest first.
    pub async fn tasks_of_parent(&self, session_id: i64) -> Result<Vec<TaskRow>, StoreError> {
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM async_tasks WHERE parent_session_id = ? ORDER BY id"
        );
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_all(self.pool()).await?)
    }

    /// Tasks not ended yet (queued, or running when a process stopped): the runner's work.
    pub async fn unfinished_tasks(&self) -> Result<Vec<TaskRow>, StoreError> {
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM async_tasks WHERE status IN ('queued', 'running') \
             ORDER BY id"
        );
        Ok(sqlx::query_as(&sql).fetch_all(self.pool()).await?)
    }

    /// Marks an unfinished task `running`.
    pub async fn mark_task_running(&self, id: i64) -> Result<(), StoreError> {
        sqlx::query("UPDATE async_tasks SET status = 'running' WHERE id = ? AND status = 'queued'")
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Records how the task of child session `session_id` ended. Only an unfinished task takes
    /// a report: returns the row when this call recorded it, `None` otherwise.
    pub async fn record_task_report(
        &self,
        session_id: i64,
        status: &str,
        report: &str,
    ) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!(
            "UPDATE async_tasks SET status = ?, report = ?, reported_at = ? \
             WHERE child_session_id = ? AND status IN ('queued', 'running') \
             RETURNING {TASK_COLUMNS}"
        );
        Ok(sqlx::query_as(&sql)
            .bind(status)
            .bind(report)
            .bind(self.now())
            .bind(session_id)
            .fetch_optional(self.pool())
            .await?)
    }

    /// Puts a failed or cancelled task back in the queue: its next report is delivered again.
    /// Returns the row, or `None` when the task is not failed or cancelled.
    pub async fn requeue_task(&self, session_id: i64) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!(
            "UPDATE async_tasks SET status = 'queued', report = NULL, reported_at = NULL, \
             delivered_message_id = NULL, delivered_at = NULL \
             WHERE child_session_id = ? AND status IN ('failed', 'cancelled') \
             RETURNING {TASK_COLUMNS}"
        );
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_optional(self.pool()).await?)
    }

    /// Sessions with a task report waiting to be delivered (a crash between a task's end and its
    /// parent's wake leaves one).
    pub async fn sessions_with_undelivered_reports(&self) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT parent_session_id FROM async_tasks \
             WHERE status IN ('done', 'failed', 'cancelled') AND delivered_message_id IS NULL",
        )
        .fetch_all(self.pool())
        .await?)
    }

    /// Whether a report of the session's tasks waits to be delivered.
    pub async fn has_undelivered_reports(&self, session_id: i64) -> Result<bool, StoreError> {
        let any: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM async_tasks WHERE parent_session_id = ? \
             AND status IN ('done', 'failed', 'cancelled') AND delivered_message_id IS NULL LIMIT 1",
        )
        .bind(session_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(any.is_some())
    }

    /// Folds task `task_id`'s report into frame `stack_id` of its parent as a labelled user row
    /// and marks it delivered, in one write. `None` when there is nothing to deliver (already
    /// delivered, or not ended): a second delivery is dropped.
    pub async fn deliver_task_report(
        &self,
        task_id: i64,
        stack_id: i64,
    ) -> Result<Option<DeliveredReport>, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM async_tasks WHERE id = ? \
             AND status IN ('done', 'failed', 'cancelled') AND delivered_message_id IS NULL"
        );
        let Some(task) =
            sqlx::query_as::<_, TaskRow>(&sql).bind(task_id).fetch_optional(&mut *tx).await?
        else {
            return Ok(None);
        };
        let content = task.report_block();
        // Synthetic: a report is no user prompt, so a turn that starts on top of it keeps it.
        let message_id: i64 = sqlx::query_scalar(
            "INSERT INTO chat_history (session_stack_id, role, content, is_synthetic, created_at) \
             VALUES (?, 'user', ?, 1, ?) RETURNING id",
        )
        .bind(stack_id)
        .bind(&content)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE async_tasks SET delivered_message_id = ?, delivered_at = ? WHERE id = ?",
        )
        .bind(message_id)
        .bind(&now)
        .bind(task_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(DeliveredReport { task, message_id, content }))
    }

    /// Delivers every waiting report of the session's tasks into frame `stack_id`, oldest first.
    pub async fn deliver_task_reports(
        &self,
        session_id: i64,
        stack_id: i64,
    ) -> Result<Vec<DeliveredReport>, StoreError> {
        // Almost every boundary finds nothing: one read, no write lock.
        if !self.has_undelivered_reports(session_id).await? {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM async_tasks WHERE parent_session_id = ? \
             AND status IN ('done', 'failed', 'cancelled') AND delivered_message_id IS NULL \
             ORDER BY reported_at, id",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(d) = self.deliver_task_report(id, stack_id).await? {
                out.push(d);
            }
        }
        Ok(out)
    }
}
