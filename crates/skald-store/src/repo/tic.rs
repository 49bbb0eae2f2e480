//! `mcp_events` and `tic_ticks`: what servers kept connected pushed, bounded, and the ticks
//! that take them in batches. A tick is claimed in one write transaction that inserts its row
//! (its slot is UNIQUE, and only one tick may be `running`), takes the oldest unprocessed
//! events and, when there are any, creates its session with the prompt built from them.

use sqlx::{FromRow, SqliteConnection};

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::sessions::{NewSession, insert_run_session};

/// One stored event.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct McpEventRow {
    pub id: i64,
    pub server: String,
    pub method: String,
    pub params: Option<String>,
    pub received_at: String,
    pub processed_at: Option<String>,
    pub tick_id: Option<i64>,
}

/// An event to store (its params already cut by the caller).
#[derive(Debug, Clone, PartialEq)]
pub struct NewMcpEvent {
    pub server: String,
    pub method: String,
    pub params: Option<String>,
    pub received_at: String,
}

/// A tick's row.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct TickRow {
    pub id: i64,
    pub slot: String,
    pub manual: bool,
    pub state: String,
    pub events: i64,
    /// JSON array of server names.
    pub servers: String,
    pub session_id: Option<i64>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub reason: Option<String>,
}

/// What a tick's session is made of, built from the events it took.
#[derive(Debug, Clone)]
pub struct TickSession {
    pub session: NewSession,
    /// The synthetic user turn.
    pub prompt: String,
    /// Tool groups (MCP servers) active from the first round.
    pub grants: Vec<String>,
}

/// How a claim went.
#[derive(Debug, Clone, PartialEq)]
pub enum TickClaim {
    /// Another claim has the slot already (another engine, an earlier pass).
    Taken,
    /// A tick is running: none starts beside it.
    Busy(TickRow),
    /// Nothing new: recorded `empty`, no session.
    Empty(TickRow),
    /// A tick started: its session is created and its work item queued.
    Started(TickRow),
}

const TICK_COLUMNS: &str =
    "id, slot, manual, state, events, servers, session_id, started_at, ended_at, reason";
/// How many ticks may take an event before a failing batch is given up.
pub const MAX_EVENT_ATTEMPTS: i64 = 3;

const EVENT_COLUMNS: &str = "id, server, method, params, received_at, processed_at, tick_id";

impl Store {
    /// Stores `events`; then keeps at most `max_pending` unprocessed ones (the oldest go) and
    /// at most `max_processed` processed ones. Returns how many unprocessed were dropped.
    pub async fn insert_mcp_events(
        &self,
        events: &[NewMcpEvent],
        max_pending: u32,
        max_processed: u32,
    ) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        for e in events {
            sqlx::query(
                "INSERT INTO mcp_events (server, method, params, received_at) VALUES (?, ?, ?, ?)",
            )
            .bind(&e.server)
            .bind(&e.method)
            .bind(&e.params)
            .bind(&e.received_at)
            .execute(&mut *tx)
            .await?;
        }
        let dropped = sqlx::query(
            "DELETE FROM mcp_events WHERE tick_id IS NULL AND id <= (SELECT id FROM mcp_events \
             WHERE tick_id IS NULL ORDER BY id DESC LIMIT 1 OFFSET ?)",
        )
        .bind(max_pending)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        sqlx::query(
            "DELETE FROM mcp_events WHERE tick_id IS NOT NULL AND id <= (SELECT id FROM \
             mcp_events WHERE tick_id IS NOT NULL ORDER BY id DESC LIMIT 1 OFFSET ?)",
        )
        .bind(max_processed)
        .execute(&mut *tx)
        .await?;
        self.commit(tx).await?;
        Ok(dropped)
    }

    /// Unprocessed events, oldest first, at most `limit`.
    pub async fn pending_mcp_events(&self, limit: u32) -> Result<Vec<McpEventRow>, StoreError> {
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM mcp_events WHERE tick_id IS NULL ORDER BY id LIMIT ?"
        );
        Ok(sqlx::query_as(&sql).bind(limit).fetch_all(&mut *self.read().await?).await?)
    }

    /// How many events wait for a tick.
    pub async fn pending_mcp_event_count(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM mcp_events WHERE tick_id IS NULL")
            .fetch_one(&mut *self.read().await?)
            .await?)
    }

    /// The events tick `tick_id` took, oldest first.
    pub async fn tick_events(&self, tick_id: i64) -> Result<Vec<McpEventRow>, StoreError> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM mcp_events WHERE tick_id = ? ORDER BY id");
        Ok(sqlx::query_as(&sql).bind(tick_id).fetch_all(&mut *self.read().await?).await?)
    }

    /// Whether slot `slot` has its tick (of any state) already.
    pub async fn tick_slot_taken(&self, slot: &str) -> Result<bool, StoreError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM tic_ticks WHERE slot = ?")
            .bind(slot)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        Ok(found.is_some())
    }

    /// Claims slot `slot`: one write transaction that loses to a tick running or a slot taken,
    /// takes up to `batch` unprocessed events (marked processed by the new tick) and, with at
    /// least one, creates the tick's session from what `build` makes of them, its synthetic
    /// user turn and its queued work item. With none, the tick is recorded `empty` (the
    /// previous empty scheduled tick's row is dropped: the table keeps one).
    pub async fn claim_tick(
        &self,
        slot: &str,
        manual: bool,
        batch: u32,
        build: impl FnOnce(&[McpEventRow]) -> TickSession + Send,
    ) -> Result<TickClaim, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let running: Option<TickRow> = sqlx::query_as(&format!(
            "SELECT {TICK_COLUMNS} FROM tic_ticks WHERE state = 'running'"
        ))
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(running) = running {
            return Ok(TickClaim::Busy(running));
        }
        let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM tic_ticks WHERE slot = ?")
            .bind(slot)
            .fetch_optional(&mut *tx)
            .await?;
        if taken.is_some() {
            return Ok(TickClaim::Taken);
        }
        let events: Vec<McpEventRow> = sqlx::query_as(&format!(
            "SELECT {EVENT_COLUMNS} FROM mcp_events WHERE tick_id IS NULL ORDER BY id LIMIT ?"
        ))
        .bind(batch)
        .fetch_all(&mut *tx)
        .await?;
        if events.is_empty() {
            if !manual {
                sqlx::query("DELETE FROM tic_ticks WHERE state = 'empty' AND manual = 0")
                    .execute(&mut *tx)
                    .await?;
            }
            let row: TickRow = sqlx::query_as(&format!(
                "INSERT INTO tic_ticks (slot, manual, state, started_at, ended_at, reason) \
                 VALUES (?, ?, 'empty', ?, ?, 'nothing new') RETURNING {TICK_COLUMNS}"
            ))
            .bind(slot)
            .bind(manual)
            .bind(&now)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await?;
            self.commit(tx).await?;
            return Ok(TickClaim::Empty(row));
        }
        let mut servers: Vec<&str> = events.iter().map(|e| e.server.as_str()).collect();
        servers.sort_unstable();
        servers.dedup();
        let servers_json = serde_json::to_string(&servers)
            .map_err(|e| StoreError::Conflict(format!("cannot encode server names: {e}")))?;
        let count = i64::try_from(events.len()).unwrap_or(i64::MAX);
        let tick_id: i64 = sqlx::query_scalar(
            "INSERT INTO tic_ticks (slot, manual, state, events, servers, started_at) \
             VALUES (?, ?, 'running', ?, ?, ?) RETURNING id",
        )
        .bind(slot)
        .bind(manual)
        .bind(count)
        .bind(&servers_json)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        let first = events.first().map_or(0, |e| e.id);
        let last = events.last().map_or(0, |e| e.id);
        // Taken, not processed: `end_tick` marks them when the tick ends well (decision 20).
        sqlx::query(
            "UPDATE mcp_events SET tick_id = ?, attempts = attempts + 1 \
             WHERE tick_id IS NULL AND id BETWEEN ? AND ?",
        )
        .bind(tick_id)
        .bind(first)
        .bind(last)
        .execute(&mut *tx)
        .await?;
        let made = build(&events);
        let session_id = start_tick_session(&mut tx, &made, &now).await?;
        let row: TickRow = sqlx::query_as(&format!(
            "UPDATE tic_ticks SET session_id = ? WHERE id = ? RETURNING {TICK_COLUMNS}"
        ))
        .bind(session_id)
        .bind(tick_id)
        .fetch_one(&mut *tx)
        .await?;
        self.commit(tx).await?;
        Ok(TickClaim::Started(row))
    }

    /// Ends the running tick of session `session_id` as `state` with `reason`; `None` when it
    /// had ended already or the session is no tick's. In the same transaction its events are
    /// settled (decision 20, at least once): a tick that ended well or was stopped by a person
    /// marks them processed; a failed one gives them back to the next tick, except those
    /// already taken by [`MAX_EVENT_ATTEMPTS`] ticks, which are given up (marked processed).
    pub async fn end_tick(
        &self,
        session_id: i64,
        state: &str,
        reason: Option<&str>,
    ) -> Result<Option<TickRow>, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let running: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM tic_ticks WHERE session_id = ? AND state = 'running'",
        )
        .bind(session_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(tick_id) = running else {
            return Ok(None);
        };
        let mut reason = reason.map(str::to_string);
        if state == "failed" {
            let back = sqlx::query(
                "UPDATE mcp_events SET tick_id = NULL WHERE tick_id = ? AND attempts < ?",
            )
            .bind(tick_id)
            .bind(MAX_EVENT_ATTEMPTS)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if back > 0 {
                // Its page lists only what it kept: say where the rest went.
                let said = reason.as_deref().unwrap_or("failed");
                let events = if back == 1 { "event goes" } else { "events go" };
                reason = Some(format!("{said}; its {back} {events} to the next tick"));
            }
        }
        sqlx::query("UPDATE mcp_events SET processed_at = ? WHERE tick_id = ?")
            .bind(&now)
            .bind(tick_id)
            .execute(&mut *tx)
            .await?;
        let row: TickRow = sqlx::query_as(&format!(
            "UPDATE tic_ticks SET state = ?, reason = ?, ended_at = ? WHERE id = ? \
             RETURNING {TICK_COLUMNS}"
        ))
        .bind(state)
        .bind(&reason)
        .bind(&now)
        .bind(tick_id)
        .fetch_one(&mut *tx)
        .await?;
        self.commit(tx).await?;
        Ok(Some(row))
    }

    /// The tick whose session is `session_id`, if any.
    pub async fn tick_of_session(&self, session_id: i64) -> Result<Option<TickRow>, StoreError> {
        let sql = format!("SELECT {TICK_COLUMNS} FROM tic_ticks WHERE session_id = ?");
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_optional(&mut *self.read().await?).await?)
    }

    pub async fn tick(&self, id: i64) -> Result<TickRow, StoreError> {
        let sql = format!("SELECT {TICK_COLUMNS} FROM tic_ticks WHERE id = ?");
        sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "tick", id })
    }

    /// Ticks, newest first, at most `limit`; `empty` ones only with `with_empty`.
    pub async fn ticks(&self, limit: u32, with_empty: bool) -> Result<Vec<TickRow>, StoreError> {
        let filter = if with_empty { "" } else { "WHERE state <> 'empty'" };
        let sql = format!("SELECT {TICK_COLUMNS} FROM tic_ticks {filter} ORDER BY id DESC LIMIT ?");
        Ok(sqlx::query_as(&sql).bind(limit).fetch_all(&mut *self.read().await?).await?)
    }

    /// Sessions of running ticks (a stopped or dead engine's, to continue).
    pub async fn running_tick_sessions(&self) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT session_id FROM tic_ticks WHERE state = 'running' \
             AND session_id IS NOT NULL ORDER BY id",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }
}

/// A tick's session: its row, its grants, the synthetic user turn and its work item (a task
/// slot while it runs, like a job's run).
async fn start_tick_session(
    conn: &mut SqliteConnection,
    made: &TickSession,
    now: &str,
) -> Result<i64, StoreError> {
    let created = insert_run_session(&mut *conn, &made.session, &made.prompt, true, now).await?;
    for group in &made.grants {
        sqlx::query(
            "INSERT INTO session_mcp_grants (session_id, mcp_name, granted_at) VALUES (?, ?, ?) \
             ON CONFLICT (session_id, mcp_name) DO NOTHING",
        )
        .bind(created.session_id)
        .bind(group)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(created.session_id)
}
