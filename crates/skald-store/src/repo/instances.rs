//! `engine_instances`: the running engines (host, pid, start) and their heartbeats, so that any
//! process can tell whether the holder of a session is alive — on another host by heartbeat
//! expiry, on this one at once by its pid.

use chrono::{DateTime, Utc};
use sqlx::FromRow;

use crate::clock::format_ts;
use crate::error::StoreError;
use crate::pool::Store;

/// An instance whose heartbeat is older than this is presumed dead and its work may be taken.
pub const INSTANCE_STALE_SECS: i64 = 15;

/// A stopped or long-dead instance's row is kept this long for diagnostics, then pruned.
const PRUNE_AFTER_HOURS: i64 = 24;

/// One engine instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub id: String,
    pub host: String,
    pub pid: i64,
}

impl Instance {
    /// This process on `host`, started at `started`: the id is unique per start.
    pub fn new(host: &str, pid: u32, started: DateTime<Utc>) -> Self {
        Self {
            id: format!("{host}:{pid}:{}", started.timestamp_millis()),
            host: host.to_string(),
            pid: i64::from(pid),
        }
    }
}

/// What a process knows of another instance when it judges whether it is alive.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct InstanceBeat {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub heartbeat_at: String,
    pub stopped_at: Option<String>,
}

impl InstanceBeat {
    /// Alive: not stopped, heartbeat fresh at `now`, and — on `my_host` — its pid exists
    /// (`pid_alive`), so a process killed on this machine is replaced at once.
    pub fn alive(
        &self,
        now: DateTime<Utc>,
        my_host: &str,
        pid_alive: &dyn Fn(i64) -> bool,
    ) -> bool {
        let stale = format_ts(now - chrono::Duration::seconds(INSTANCE_STALE_SECS));
        self.stopped_at.is_none()
            && self.heartbeat_at > stale
            && (self.host != my_host || pid_alive(self.pid))
    }
}

impl Store {
    /// Records this instance as started (or restarted under the same id) with a fresh heartbeat.
    pub async fn register_instance(&self, me: &Instance) -> Result<(), StoreError> {
        let now = self.now();
        sqlx::query(
            "INSERT INTO engine_instances (id, host, pid, started_at, heartbeat_at) \
             VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, \
             stopped_at = NULL",
        )
        .bind(&me.id)
        .bind(&me.host)
        .bind(me.pid)
        .bind(&now)
        .bind(&now)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Refreshes the instance's heartbeat.
    pub async fn instance_heartbeat(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE engine_instances SET heartbeat_at = ? WHERE id = ?")
            .bind(self.now())
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }

    /// Marks the instance stopped (a clean shutdown), and prunes rows of instances that stopped
    /// or went silent long ago.
    pub async fn stop_instance(&self, id: &str) -> Result<(), StoreError> {
        let now = self.clock().now();
        sqlx::query("UPDATE engine_instances SET stopped_at = ? WHERE id = ?")
            .bind(format_ts(now))
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        sqlx::query("DELETE FROM work_waiters WHERE instance_id = ?")
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        let old = format_ts(now - chrono::Duration::hours(PRUNE_AFTER_HOURS));
        sqlx::query(
            "DELETE FROM engine_instances WHERE heartbeat_at < ? AND id NOT IN \
             (SELECT runner FROM session_runners)",
        )
        .bind(old)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Records that the instance runs the background (it continues any session's work).
    pub async fn set_instance_background(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE engine_instances SET background = 1 WHERE id = ?")
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }

    /// The instance's last known state, if it ever registered.
    pub async fn instance_beat(&self, id: &str) -> Result<Option<InstanceBeat>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, host, pid, heartbeat_at, stopped_at FROM engine_instances WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?)
    }
}
