//! `session_runners`: which engine instance runs a session's turn, and cross-process stop
//! requests. A row names its instance (`engine_instances`); whether the holder is alive is the
//! instance's heartbeat (any host) or its pid (same host), judged by the caller's `is_alive`.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::instances::{Instance, InstanceBeat};

/// How a caller judges a holder: alive or not, from its instance's last beat.
pub type Liveness<'a> = &'a (dyn Fn(&InstanceBeat) -> bool + Sync);

/// A runner row with its instance's last beat (`None` columns: a row whose instance never
/// registered, which an older build wrote; it counts as dead).
#[derive(FromRow)]
struct Held {
    session_id: i64,
    runner: String,
    host: Option<String>,
    pid: Option<i64>,
    heartbeat_at: Option<String>,
    stopped_at: Option<String>,
}

impl Held {
    fn alive(self, is_alive: Liveness<'_>) -> bool {
        match (self.host, self.pid, self.heartbeat_at) {
            (Some(host), Some(pid), Some(heartbeat_at)) => is_alive(&InstanceBeat {
                id: self.runner,
                host,
                pid,
                heartbeat_at,
                stopped_at: self.stopped_at,
            }),
            _ => false,
        }
    }
}

const HELD: &str = "SELECT r.session_id, r.runner, i.host, i.pid, i.heartbeat_at, i.stopped_at \
                    FROM session_runners r LEFT JOIN engine_instances i ON i.id = r.runner";

impl Store {
    /// Claims the session for instance `me` (refreshing its heartbeat in the same transaction).
    /// Fails with `Conflict` while another live instance holds it.
    pub async fn claim_runner(
        &self,
        session_id: i64,
        me: &Instance,
        is_alive: Liveness<'_>,
    ) -> Result<(), StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        sqlx::query("UPDATE engine_instances SET heartbeat_at = ?, stopped_at = NULL WHERE id = ?")
            .bind(&now)
            .bind(&me.id)
            .execute(&mut *tx)
            .await?;
        let held: Option<Held> = sqlx::query_as(&format!("{HELD} WHERE r.session_id = ?"))
            .bind(session_id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(held) = held
            && held.runner != me.id
        {
            let holder = held.runner.clone();
            if held.alive(is_alive) {
                return Err(StoreError::Conflict(format!(
                    "session {session_id} already has a running turn ({holder})"
                )));
            }
        }
        sqlx::query(
            "INSERT INTO session_runners (session_id, runner, pid, started_at, heartbeat_at) \
             VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET runner = excluded.runner, \
             pid = excluded.pid, started_at = excluded.started_at, \
             heartbeat_at = excluded.heartbeat_at, cancel_requested_at = NULL",
        )
        .bind(session_id)
        .bind(&me.id)
        .bind(me.pid)
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        self.commit(tx).await?;
        Ok(())
    }

    /// The sessions instance `me` holds whose stop someone requested (one read).
    pub async fn cancel_requests(&self, me: &str) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT session_id FROM session_runners WHERE runner = ? \
             AND cancel_requested_at IS NOT NULL",
        )
        .bind(me)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    pub async fn release_runner(&self, session_id: i64, runner: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM session_runners WHERE session_id = ? AND runner = ?")
            .bind(session_id)
            .bind(runner)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }

    /// Asks whoever runs the session's turn to stop. Returns false when no live holder exists.
    pub async fn request_runner_cancel(
        &self,
        session_id: i64,
        is_alive: Liveness<'_>,
    ) -> Result<bool, StoreError> {
        if !self.session_held(session_id, is_alive).await? {
            return Ok(false);
        }
        let done =
            sqlx::query("UPDATE session_runners SET cancel_requested_at = ? WHERE session_id = ?")
                .bind(self.now())
                .bind(session_id)
                .execute(&mut *self.write_conn().await?)
                .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Whether a live instance (maybe the caller's) holds the session.
    pub async fn session_held(
        &self,
        session_id: i64,
        is_alive: Liveness<'_>,
    ) -> Result<bool, StoreError> {
        Ok(self.holder(session_id).await?.is_some_and(|h| h.alive(is_alive)))
    }

    /// Drops the session's runner row when its holder is gone (exited without releasing it, or
    /// died), so the session can be claimed again. Returns whether a row was dropped.
    pub async fn release_dead_runner(
        &self,
        session_id: i64,
        is_alive: Liveness<'_>,
    ) -> Result<bool, StoreError> {
        let Some(held) = self.holder(session_id).await? else { return Ok(false) };
        let runner = held.runner.clone();
        if held.alive(is_alive) {
            return Ok(false);
        }
        self.release_runner(session_id, &runner).await?;
        Ok(true)
    }

    /// The session's runner row with what is known of its instance.
    async fn holder(&self, session_id: i64) -> Result<Option<Held>, StoreError> {
        Ok(sqlx::query_as(&format!("{HELD} WHERE r.session_id = ?"))
            .bind(session_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Deletes every row `runner` holds (an engine shutting down after its grace period).
    pub async fn release_runners_of(&self, runner: &str) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM session_runners WHERE runner = ?")
            .bind(runner)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(done.rows_affected())
    }

    /// Sessions whose holder is gone (killed, crashed, silent, or an older build's row): their
    /// turn stopped mid-way. Rows of `me` are never counted.
    pub async fn abandoned_runners(
        &self,
        me: &str,
        is_alive: Liveness<'_>,
    ) -> Result<Vec<i64>, StoreError> {
        let rows: Vec<Held> =
            sqlx::query_as(&format!("{HELD} WHERE r.runner <> ? ORDER BY r.session_id"))
                .bind(me)
                .fetch_all(&mut *self.read().await?)
                .await?;
        Ok(rows
            .into_iter()
            .filter_map(|h| {
                let session_id = h.session_id;
                (!h.alive(is_alive)).then_some(session_id)
            })
            .collect())
    }
}
