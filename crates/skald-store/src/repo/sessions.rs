//! `chat_sessions`: creating sessions (with their root frame) and listing them.

use serde::{Deserialize, Serialize};
use skald_protocol::{Page, SearchHit, SessionListQuery, SessionMeta, SessionSummary};
use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

/// What a new session starts with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSession {
    pub source: String,
    pub agent_id: String,
    pub title: Option<String>,
    pub is_interactive: bool,
    pub is_ephemeral: bool,
    pub run_context: Option<String>,
    pub auto_deny_approvals: bool,
    pub context_label: Option<String>,
}

impl NewSession {
    /// An interactive chat session of `source` with the `main` agent.
    pub fn interactive(source: &str) -> Self {
        Self {
            source: source.to_string(),
            agent_id: "main".to_string(),
            title: None,
            is_interactive: true,
            is_ephemeral: false,
            run_context: None,
            auto_deny_approvals: false,
            context_label: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SessionRow {
    pub id: i64,
    pub title: Option<String>,
    pub source: String,
    pub agent_id: String,
    pub is_interactive: bool,
    pub is_ephemeral: bool,
    pub run_context: Option<String>,
    pub auto_deny_approvals: bool,
    pub context_label: Option<String>,
    pub scratchpad_session_id: Option<i64>,
    /// The LLM client pinned for the root agent (an async task started with `client`).
    pub client: Option<String>,
    pub created_at: String,
}

impl SessionRow {
    pub fn meta(&self) -> SessionMeta {
        SessionMeta {
            id: self.id,
            title: self.title.clone(),
            source: self.source.clone(),
            agent_id: self.agent_id.clone(),
            is_interactive: self.is_interactive,
            is_ephemeral: self.is_ephemeral,
            created_at: self.created_at.clone(),
        }
    }
}

/// A created session and its root frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedSession {
    pub session_id: i64,
    pub root_stack_id: i64,
}

/// A session-list row as SQL returns it (the search adds its hit columns around it).
#[derive(FromRow)]
pub(crate) struct SummaryRow {
    pub(crate) id: i64,
    title: Option<String>,
    source: String,
    agent_id: String,
    is_ephemeral: bool,
    is_interactive: bool,
    created_at: String,
    message_count: i64,
    last_message_at: Option<String>,
}

impl SummaryRow {
    /// The row as listed, with the search's hit count and best hit (0 and `None` without one).
    pub(crate) fn into_summary(
        self,
        hit_count: i64,
        best_hit: Option<SearchHit>,
    ) -> SessionSummary {
        SessionSummary {
            id: self.id,
            title: self.title,
            source: self.source,
            agent_id: self.agent_id,
            is_ephemeral: self.is_ephemeral,
            is_interactive: self.is_interactive,
            created_at: self.created_at,
            message_count: self.message_count,
            last_message_at: self.last_message_at,
            hit_count,
            best_hit,
        }
    }
}

const SESSION_COLUMNS: &str = "id, title, source, agent_id, is_interactive, is_ephemeral, \
     run_context, auto_deny_approvals, context_label, scratchpad_session_id, client, created_at";

/// The runs a session is, each with an end of its own to record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionRuns {
    pub task: bool,
    pub job_run: bool,
    pub tick: bool,
}

impl Store {
    /// Creates a session and its root stack frame in one transaction.
    pub async fn create_session(&self, new: &NewSession) -> Result<CreatedSession, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let created = insert_session(&mut tx, new, &now).await?;
        self.commit(tx).await?;
        Ok(created)
    }

    pub async fn session(&self, id: i64) -> Result<SessionRow, StoreError> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE id = ?");
        sqlx::query_as::<_, SessionRow>(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "session", id })
    }

    /// Which runs session `session_id` is (an async task's child, a scheduled job's run, a TIC
    /// tick), in one read: a run's end is recorded only where there is one to record.
    pub async fn runs_of_session(&self, session_id: i64) -> Result<SessionRuns, StoreError> {
        let (task, job_run, tick): (bool, bool, bool) = sqlx::query_as(
            "SELECT EXISTS (SELECT 1 FROM async_tasks WHERE child_session_id = ?1), \
             EXISTS (SELECT 1 FROM job_runs WHERE session_id = ?1), \
             EXISTS (SELECT 1 FROM tic_ticks WHERE session_id = ?1)",
        )
        .bind(session_id)
        .fetch_one(&mut *self.read().await?)
        .await?;
        Ok(SessionRuns { task, job_run, tick })
    }

    /// Sets (or with `None` clears) the session's title.
    pub async fn set_session_title(&self, id: i64, title: Option<&str>) -> Result<(), StoreError> {
        self.set_session_text(id, "title", title).await
    }

    /// Names a session that has no title yet (its first prompt names it); a title a person gave
    /// stays. Events staged for it ride the write.
    pub async fn title_untitled_session(&self, id: i64, title: &str) -> Result<(), StoreError> {
        let update =
            sqlx::query("UPDATE chat_sessions SET title = ? WHERE id = ? AND title IS NULL")
                .bind(title)
                .bind(id);
        self.execute_carrying_events(update).await
    }

    /// Replaces the session's RunContext JSON (effective from its next turn).
    pub async fn set_session_run_context(
        &self,
        id: i64,
        run_context: Option<&str>,
    ) -> Result<(), StoreError> {
        self.set_session_text(id, "run_context", run_context).await
    }

    /// Sets one nullable text column of a session; a missing session is `NotFound`.
    async fn set_session_text(
        &self,
        id: i64,
        column: &'static str,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        let sql = format!("UPDATE chat_sessions SET {column} = ? WHERE id = ?");
        let done =
            sqlx::query(&sql).bind(value).bind(id).execute(&mut *self.write_conn().await?).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "session", id });
        }
        Ok(())
    }

    /// Newest first, optionally filtered by source; with a search, only the matching sessions,
    /// each with its hit count and best hit (see `search::sessions`).
    pub async fn list_sessions(
        &self,
        query: &SessionListQuery,
    ) -> Result<Page<SessionSummary>, StoreError> {
        let per_page = query.per_page.clamp(1, skald_protocol::MAX_PER_PAGE);
        let page = query.page.max(1);
        if let Some(search) = query.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            return self.list_sessions_matching(query, search, per_page, page).await;
        }
        let offset = i64::from(page - 1) * i64::from(per_page);
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM chat_sessions s WHERE (?1 IS NULL OR s.source = ?1) \
             AND s.id NOT IN (SELECT child_session_id FROM async_tasks)",
        )
        .bind(&query.source)
        .fetch_one(&mut *self.read().await?)
        .await?;
        let rows = sqlx::query_as::<_, SummaryRow>(
            "SELECT s.id, s.title, s.source, s.agent_id, s.is_ephemeral, s.is_interactive, \
               s.created_at, COALESCE(m.cnt, 0) AS message_count, m.last_at AS last_message_at \
             FROM chat_sessions s \
             LEFT JOIN (SELECT st.session_id AS sid, COUNT(h.id) AS cnt, MAX(h.created_at) AS last_at \
                        FROM chat_sessions_stack st JOIN chat_history h ON h.session_stack_id = st.id \
                        GROUP BY st.session_id) m ON m.sid = s.id \
             WHERE (?1 IS NULL OR s.source = ?1) AND s.id NOT IN (SELECT child_session_id FROM async_tasks) \
             ORDER BY s.id DESC LIMIT ?2 OFFSET ?3",
        )
        .bind(&query.source)
        .bind(i64::from(per_page))
        .bind(offset)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let items = rows.into_iter().map(|r| r.into_summary(0, None)).collect();
        Ok(Page { items, total: u64::try_from(total).unwrap_or(0), page, per_page })
    }
}

/// An unattended run's session (a job's run, a TIC tick) on `conn`: the session, its first
/// user message and its queued run. The run holds a task slot while it runs, like an async
/// task; parked, it holds none.
pub(crate) async fn insert_run_session(
    conn: &mut sqlx::SqliteConnection,
    new: &NewSession,
    prompt: &str,
    prompt_is_synthetic: bool,
    now: &str,
) -> Result<CreatedSession, StoreError> {
    let created = insert_session(&mut *conn, new, now).await?;
    sqlx::query(
        "INSERT INTO chat_history (session_stack_id, role, content, is_synthetic, created_at) \
         VALUES (?, 'user', ?, ?, ?)",
    )
    .bind(created.root_stack_id)
    .bind(prompt)
    .bind(prompt_is_synthetic)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    sqlx::query("INSERT INTO work_items (session_id, kind, created_at) VALUES (?, 'task', ?)")
        .bind(created.session_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    Ok(created)
}

/// Inserts a session and its root stack frame on `conn` (inside the caller's transaction).
pub(crate) async fn insert_session(
    conn: &mut sqlx::SqliteConnection,
    new: &NewSession,
    now: &str,
) -> Result<CreatedSession, StoreError> {
    let session_id: i64 = sqlx::query_scalar(
        "INSERT INTO chat_sessions (title, source, agent_id, is_interactive, is_ephemeral, \
         run_context, auto_deny_approvals, context_label, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&new.title)
    .bind(&new.source)
    .bind(&new.agent_id)
    .bind(new.is_interactive)
    .bind(new.is_ephemeral)
    .bind(&new.run_context)
    .bind(new.auto_deny_approvals)
    .bind(&new.context_label)
    .bind(now)
    .fetch_one(&mut *conn)
    .await?;
    let root_stack_id: i64 = sqlx::query_scalar(
        "INSERT INTO chat_sessions_stack (session_id, agent_id, depth, created_at) \
         VALUES (?, ?, 0, ?) RETURNING id",
    )
    .bind(session_id)
    .bind(&new.agent_id)
    .bind(now)
    .fetch_one(&mut *conn)
    .await?;
    Ok(CreatedSession { session_id, root_stack_id })
}
