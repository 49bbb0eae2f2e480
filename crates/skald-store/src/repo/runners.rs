//! `session_runners`: which process runs a session's turn, and cross-process stop requests.

use crate::error::StoreError;
use crate::pool::Store;

/// A runner whose heartbeat is older than this is presumed dead and may be replaced.
pub const RUNNER_STALE_SECS: i64 = 15;

impl Store {
    /// Claims the session for this process. Fails with `Conflict` while a live runner holds it;
    /// `is_alive(pid)` lets a runner whose process died (a kill, a crash) be replaced at once.
    pub async fn claim_runner(
        &self,
        session_id: i64,
        runner: &str,
        pid: u32,
        is_alive: &(dyn Fn(i64) -> bool + Sync),
    ) -> Result<(), StoreError> {
        let now = self.clock().now();
        let now_s = crate::clock::format_ts(now);
        let stale = crate::clock::format_ts(now - chrono::Duration::seconds(RUNNER_STALE_SECS));
        let mut tx = self.begin_write().await?;
        let held: Option<(String, i64, String)> = sqlx::query_as(
            "SELECT runner, pid, heartbeat_at FROM session_runners WHERE session_id = ?",
        )
        .bind(session_id)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((holder, holder_pid, beat)) = held
            && holder != runner
            && beat > stale
            && is_alive(holder_pid)
        {
            return Err(StoreError::Conflict(format!(
                "session {session_id} already has a running turn ({holder})"
            )));
        }
        sqlx::query(
            "INSERT INTO session_runners (session_id, runner, pid, started_at, heartbeat_at) \
             VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET runner = excluded.runner, \
             pid = excluded.pid, started_at = excluded.started_at, \
             heartbeat_at = excluded.heartbeat_at, cancel_requested_at = NULL",
        )
        .bind(session_id)
        .bind(runner)
        .bind(i64::from(pid))
        .bind(&now_s)
        .bind(&now_s)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Refreshes the heartbeat; returns whether a stop was requested by anyone.
    pub async fn runner_heartbeat(
        &self,
        session_id: i64,
        runner: &str,
    ) -> Result<bool, StoreError> {
        let requested: Option<Option<String>> = sqlx::query_scalar(
            "UPDATE session_runners SET heartbeat_at = ? WHERE session_id = ? AND runner = ? \
             RETURNING cancel_requested_at",
        )
        .bind(self.now())
        .bind(session_id)
        .bind(runner)
        .fetch_optional(self.pool())
        .await?;
        Ok(matches!(requested, Some(Some(_))))
    }

    pub async fn release_runner(&self, session_id: i64, runner: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM session_runners WHERE session_id = ? AND runner = ?")
            .bind(session_id)
            .bind(runner)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Asks whoever runs the session's turn to stop. Returns false when no live runner exists.
    pub async fn request_runner_cancel(&self, session_id: i64) -> Result<bool, StoreError> {
        let stale = crate::clock::format_ts(
            self.clock().now() - chrono::Duration::seconds(RUNNER_STALE_SECS),
        );
        let done = sqlx::query(
            "UPDATE session_runners SET cancel_requested_at = ? WHERE session_id = ? \
             AND heartbeat_at > ?",
        )
        .bind(self.now())
        .bind(session_id)
        .bind(stale)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The pid of a runner with a fresh heartbeat, if any (the caller checks it is alive).
    pub async fn fresh_runner_pid(&self, session_id: i64) -> Result<Option<i64>, StoreError> {
        let stale = crate::clock::format_ts(
            self.clock().now() - chrono::Duration::seconds(RUNNER_STALE_SECS),
        );
        Ok(sqlx::query_scalar(
            "SELECT pid FROM session_runners WHERE session_id = ? AND heartbeat_at > ?",
        )
        .bind(session_id)
        .bind(stale)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Deletes every row `runner` holds (an engine shutting down after its grace period).
    pub async fn release_runners_of(&self, runner: &str) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM session_runners WHERE runner = ?")
            .bind(runner)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// Sessions whose runner row was left by a process that is gone (killed, crashed) or went
    /// silent: their turn stopped mid-way. Rows of `me` are never counted.
    pub async fn abandoned_runners(
        &self,
        me: &str,
        is_alive: &(dyn Fn(i64) -> bool + Sync),
    ) -> Result<Vec<i64>, StoreError> {
        let stale = crate::clock::format_ts(
            self.clock().now() - chrono::Duration::seconds(RUNNER_STALE_SECS),
        );
        let rows: Vec<(i64, i64, String)> = sqlx::query_as(
            "SELECT session_id, pid, heartbeat_at FROM session_runners WHERE runner <> ? \
             ORDER BY session_id",
        )
        .bind(me)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .filter(|(_, pid, beat)| *beat <= stale || !is_alive(*pid))
            .map(|(session_id, _, _)| session_id)
            .collect())
    }
}
