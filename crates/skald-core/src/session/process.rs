//! Processes and hosts: whether the process behind a runner still exists (so a killed runner is
//! replaced at once), and the name of this machine.

/// True when a process with this pid exists on this machine (or when that cannot be told).
pub fn pid_alive(pid: i64) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        use nix::sys::signal::kill;
        use nix::unistd::Pid;
        let Ok(raw) = i32::try_from(pid) else { return false };
        if raw <= 0 {
            return false;
        }
        // Signal 0 checks existence without sending anything; EPERM means it exists.
        match kill(Pid::from_raw(raw), None) {
            Ok(()) => !is_zombie(raw),
            Err(Errno::EPERM) => true,
            Err(_) => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// A killed child not yet reaped still answers signal 0; it is dead all the same.
#[cfg(unix)]
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// This machine's name, as instances record it (a same-host holder is judged by its pid).
pub fn host_name() -> String {
    #[cfg(unix)]
    if let Ok(name) = nix::unistd::gethostname()
        && let Some(name) = name.to_str().filter(|n| !n.is_empty())
    {
        return name.to_string();
    }
    ["HOSTNAME", "COMPUTERNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "localhost".to_string())
}
