//! Async tasks: the child session an `execute_task` (mode async) call starts, its status, and its
//! report, put in the parent's root inbox (`root_inbox`) when recorded and read there exactly once.

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

pub(crate) const TASK_COLUMNS: &str = "id, parent_session_id, parent_tool_call_id, child_session_id, \
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
        let label = skald_protocol::origin::agent_label(new.agent_id, child_session_id);
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
        self.commit(tx).await?;
        Ok(row)
    }

    pub async fn task(&self, id: i64) -> Result<TaskRow, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM async_tasks WHERE id = ?");
        sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "task", id })
    }

    /// The task started by call `tool_call_id`, if any (a resumed call must not start it twice).
    pub async fn task_of_call(&self, tool_call_id: i64) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM async_tasks WHERE parent_tool_call_id = ?");
        Ok(sqlx::query_as(&sql).bind(tool_call_id).fetch_optional(&mut *self.read().await?).await?)
    }

    /// The task whose child session is `session_id`, if it is one.
    pub async fn task_of_session(&self, session_id: i64) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM async_tasks WHERE child_session_id = ?");
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_optional(&mut *self.read().await?).await?)
    }

    /// The tasks a session started, oldest first.
    pub async fn tasks_of_parent(&self, session_id: i64) -> Result<Vec<TaskRow>, StoreError> {
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM async_tasks WHERE parent_session_id = ? ORDER BY id"
        );
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_all(&mut *self.read().await?).await?)
    }

    /// Tasks not ended yet (queued, or running when a process stopped): the runner's work.
    pub async fn unfinished_tasks(&self) -> Result<Vec<TaskRow>, StoreError> {
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM async_tasks WHERE status IN ('queued', 'running') \
             ORDER BY id"
        );
        Ok(sqlx::query_as(&sql).fetch_all(&mut *self.read().await?).await?)
    }

    /// Marks an unfinished task `running`.
    pub async fn mark_task_running(&self, id: i64) -> Result<(), StoreError> {
        sqlx::query("UPDATE async_tasks SET status = 'running' WHERE id = ? AND status = 'queued'")
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }

    /// Marks the running task of child session `session_id` `queued` again: its run was cut
    /// off (its engine shut down) and waits for the next one. Returns the row when it changed.
    pub async fn mark_task_waiting(&self, session_id: i64) -> Result<Option<TaskRow>, StoreError> {
        let sql = format!(
            "UPDATE async_tasks SET status = 'queued' WHERE child_session_id = ? \
             AND status = 'running' RETURNING {TASK_COLUMNS}"
        );
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_optional(&mut *self.read().await?).await?)
    }

    /// Records how the task of child session `session_id` ended and, in the same transaction,
    /// puts its report in the parent's root inbox. Only an unfinished task takes a report:
    /// returns the row when this call recorded it, `None` otherwise.
    pub async fn record_task_report(
        &self,
        session_id: i64,
        status: &str,
        report: &str,
    ) -> Result<Option<TaskRow>, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let sql = format!(
            "UPDATE async_tasks SET status = ?, report = ?, reported_at = ? \
             WHERE child_session_id = ? AND status IN ('queued', 'running') \
             RETURNING {TASK_COLUMNS}"
        );
        let Some(task) = sqlx::query_as::<_, TaskRow>(&sql)
            .bind(status)
            .bind(report)
            .bind(&now)
            .bind(session_id)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(None);
        };
        // Synthetic: a report is no user prompt, so a turn that starts on top of it keeps it.
        sqlx::query(
            "INSERT INTO pending_inputs (session_id, content, is_synthetic, created_at, kind, \
             task_id) VALUES (?, ?, 1, ?, 'task_report', ?)",
        )
        .bind(task.parent_session_id)
        .bind(task.report_block())
        .bind(&now)
        .bind(task.id)
        .execute(&mut *tx)
        .await?;
        // The parent answers the report: its continuation is queued with it.
        crate::repo::work::enqueue_in(&mut tx, task.parent_session_id, &now).await?;
        self.commit(tx).await?;
        Ok(Some(task))
    }

    /// Puts a failed or cancelled task back in the queue: its next report is delivered again,
    /// and a report of its last end not read yet is dropped with it. Returns the row, or `None`
    /// when the task is not failed or cancelled.
    pub async fn requeue_task(&self, session_id: i64) -> Result<Option<TaskRow>, StoreError> {
        let mut tx = self.begin_write().await?;
        let sql = format!(
            "UPDATE async_tasks SET status = 'queued', report = NULL, reported_at = NULL, \
             delivered_message_id = NULL, delivered_at = NULL \
             WHERE child_session_id = ? AND status IN ('failed', 'cancelled') \
             RETURNING {TASK_COLUMNS}"
        );
        let task: Option<TaskRow> =
            sqlx::query_as(&sql).bind(session_id).fetch_optional(&mut *tx).await?;
        if let Some(task) = &task {
            sqlx::query(
                "UPDATE pending_inputs SET discarded_at = ? WHERE task_id = ? \
                 AND consumed_message_id IS NULL AND discarded_at IS NULL",
            )
            .bind(self.now())
            .bind(task.id)
            .execute(&mut *tx)
            .await?;
        }
        self.commit(tx).await?;
        Ok(task)
    }
}
