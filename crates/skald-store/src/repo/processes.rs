//! `tool_processes`: the process group of each running `execute_cmd` command, kept while it
//! runs so the next engine can kill what a crashed one left behind.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

/// A stored row: the group and when it was recorded.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ToolProcess {
    pub id: i64,
    #[sqlx(flatten)]
    pub group: ToolProcessGroup,
    pub started_at: String,
}

/// A running command's process group, as recorded when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromRow)]
pub struct ToolProcessGroup {
    pub tool_call_id: Option<i64>,
    pub pgid: i64,
    pub leader_pid: i64,
    /// The leader's start time (clock ticks since boot); `None` where the platform does not tell.
    pub leader_start_ticks: Option<i64>,
    pub owner_pid: i64,
    pub owner_start_ticks: Option<i64>,
}

impl Store {
    /// Records a running command's process group; returns the row id.
    pub async fn record_tool_process(&self, p: &ToolProcessGroup) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO tool_processes (tool_call_id, pgid, leader_pid, leader_start_ticks, \
             owner_pid, owner_start_ticks, started_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(p.tool_call_id)
        .bind(p.pgid)
        .bind(p.leader_pid)
        .bind(p.leader_start_ticks)
        .bind(p.owner_pid)
        .bind(p.owner_start_ticks)
        .bind(self.now())
        .fetch_one(&mut *self.write_conn().await?)
        .await?)
    }

    /// Forgets a command's process group (it ended, or it was reaped).
    pub async fn remove_tool_process(&self, id: i64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM tool_processes WHERE id = ?")
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }

    /// Every recorded process group, oldest first.
    pub async fn tool_processes(&self) -> Result<Vec<ToolProcess>, StoreError> {
        Ok(sqlx::query_as::<_, ToolProcess>(
            "SELECT id, tool_call_id, pgid, leader_pid, leader_start_ticks, owner_pid, \
             owner_start_ticks, started_at FROM tool_processes ORDER BY id",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }
}
