//! The durable record of every running command's process group, and the reaping at engine open
//! of groups a crashed engine left running.
//!
//! A command's row is written right after its group starts and removed when it ends. An engine
//! that dies without removing it (`kill -9`, a crash, a power cut mid-command) leaves the row
//! behind with its pid as owner; the next engine to open on the data dir finds the owner dead and
//! kills the group, grandchildren included, then removes the row. A process is killed only when
//! the kernel confirms it is the one recorded: the leader with the same start time, or, once the
//! leader is gone, members of its group that started after it (the kernel hands out no pid that is
//! still some group's id, so a group whose id is the leader's pid is ours while it has members).

use skald_store::Store;
use skald_store::repo::processes::ToolProcessGroup;

use super::proc_stat;
use crate::error::EngineError;

/// Records the groups of the commands this engine starts.
#[derive(Debug, Clone)]
pub struct ProcessRegistry {
    store: Store,
}

/// A recorded group; `finish` removes its row once the command ended (and its group was killed).
pub(crate) struct Recorded {
    store: Store,
    row: Option<i64>,
}

impl ProcessRegistry {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Records the group whose leader is `leader_pid` (spawned with `process_group(0)`, so the
    /// group id is the leader's pid). A row that cannot be written costs only the crash-time
    /// reaping of this command, so it never fails the call.
    pub(crate) async fn record(&self, tool_call_id: Option<i64>, leader_pid: u32) -> Recorded {
        let leader = i64::from(leader_pid);
        let owner = i64::from(std::process::id());
        let row = ToolProcessGroup {
            tool_call_id,
            pgid: leader,
            leader_pid: leader,
            leader_start_ticks: proc_stat::start_ticks(leader),
            owner_pid: owner,
            owner_start_ticks: proc_stat::start_ticks(owner),
        };
        let id = match self.store.record_tool_process(&row).await {
            Ok(id) => Some(id),
            Err(e) => {
                tracing::warn!(leader_pid, "cannot record the command's process group: {e}");
                None
            }
        };
        Recorded { store: self.store.clone(), row: id }
    }
}

impl Recorded {
    /// Removes the row: the command ended and its group was killed.
    pub(crate) async fn finish(mut self) {
        if let Some(id) = self.row.take()
            && let Err(e) = self.store.remove_tool_process(id).await
        {
            tracing::warn!(id, "cannot remove a finished command's process row: {e}");
        }
    }
}

impl Drop for Recorded {
    /// A call dropped mid-command (its turn's future was dropped) killed its group already (the
    /// `ProcessGroup` guard); its row goes too, in the background when a runtime is there, else
    /// at the next engine open.
    fn drop(&mut self) {
        let Some(id) = self.row.take() else { return };
        let store = self.store.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = store.remove_tool_process(id).await;
            });
        }
    }
}

/// What the reaping at engine open did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reaped {
    /// Groups of a dead engine that still had processes, now killed.
    pub groups_killed: usize,
    /// Rows of a dead engine removed (killed groups included).
    pub rows_removed: usize,
}

/// Kills the process groups a crashed engine left running and removes their rows. Rows of a live
/// engine (another process on the same data dir, or this one) are left alone.
pub async fn reap_orphans(store: &Store) -> Result<Reaped, EngineError> {
    let mut reaped = Reaped::default();
    for row in store.tool_processes().await? {
        if owner_alive(&row.group) {
            continue;
        }
        if kill_leftover(&row.group) {
            reaped.groups_killed += 1;
            tracing::warn!(
                pgid = row.group.pgid,
                tool_call_id = row.group.tool_call_id,
                "killed a command left running by an engine that ended"
            );
        }
        store.remove_tool_process(row.id).await?;
        reaped.rows_removed += 1;
    }
    Ok(reaped)
}

/// Whether the engine that recorded the row still runs: its pid exists with the recorded start
/// time (a pid reused by another program does not count).
fn owner_alive(row: &ToolProcessGroup) -> bool {
    if !crate::session::process::pid_alive(row.owner_pid) {
        return false;
    }
    match (row.owner_start_ticks, proc_stat::start_ticks(row.owner_pid)) {
        (Some(recorded), Some(now)) => recorded == now,
        // Nothing to compare with: assume it is the owner rather than kill a live engine's work.
        _ => true,
    }
}

/// Kills what is left of the row's group, only what the kernel confirms is ours. Returns whether
/// anything was signalled.
fn kill_leftover(row: &ToolProcessGroup) -> bool {
    let Some(recorded_start) = row.leader_start_ticks else {
        // Without a start time (no /proc) nothing can be told apart from a reused pid.
        return false;
    };
    match proc_stat::read(row.leader_pid) {
        // The leader itself still runs: the whole group goes.
        Some(leader) if !leader.defunct && leader.start_ticks == recorded_start => {
            kill_group(row.pgid)
        }
        // The pid now names another process: our group ended before it was reused.
        Some(leader) if leader.start_ticks != recorded_start => false,
        // The leader is gone (its parent-death signal, or it exited); members may remain.
        _ => {
            let members = proc_stat::group_members(row.pgid);
            !members.is_empty()
                && members.iter().all(|(_, s)| s.start_ticks >= recorded_start)
                && kill_group(row.pgid)
        }
    }
}

#[cfg(unix)]
fn kill_group(pgid: i64) -> bool {
    use nix::sys::signal::{Signal, killpg};
    let Ok(raw) = i32::try_from(pgid) else { return false };
    raw > 1 && killpg(nix::unistd::Pid::from_raw(raw), Signal::SIGKILL).is_ok()
}

#[cfg(not(unix))]
fn kill_group(_pgid: i64) -> bool {
    false
}
