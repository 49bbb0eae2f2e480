//! Killing a command's whole process tree (its process group on Unix), also when dropped.
//!
//! `unsafe_code` is denied in the workspace, so the signal goes through `nix::sys::signal::killpg`
//! (a safe wrapper) rather than `libc::kill`; spawning `kill -KILL -- -PGID` would also work but
//! costs a process and cannot run reliably inside `Drop`.

/// Armed guard for a process group; dropping it kills every process still in the group.
pub(crate) struct ProcessGroup {
    #[cfg_attr(not(unix), allow(dead_code))]
    pgid: Option<u32>,
}

impl ProcessGroup {
    /// `pid` is the id of a child spawned with `process_group(0)`, i.e. the group leader.
    pub(crate) fn new(pid: Option<u32>) -> Self {
        Self { pgid: pid }
    }

    /// Sends SIGKILL to the group. Repeating it, or the group being gone already, is harmless.
    pub(crate) fn kill(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid.and_then(|p| i32::try_from(p).ok()) {
            use nix::sys::signal::{Signal, killpg};
            // ESRCH (no such group) just means everything already exited.
            let _ = killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL);
        }
        // Elsewhere tokio's `kill_on_drop` ends the direct child only.
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
