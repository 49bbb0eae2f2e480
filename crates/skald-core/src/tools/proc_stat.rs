//! What the kernel says about a process (Linux `/proc/<pid>/stat`): its group, its start time and
//! whether it still runs. Elsewhere nothing is known, and callers act on nothing they cannot check.

/// The fields of `/proc/<pid>/stat` the process registry needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub pgid: i64,
    /// Clock ticks since boot: with the pid, it names one process for the machine's uptime.
    pub start_ticks: i64,
    /// Exited but not yet reaped (`Z`) or dead (`X`): it runs nothing any more.
    pub defunct: bool,
}

/// Parses a `stat` line. The command name (field 2) is in parentheses and may itself hold spaces
/// and parentheses, so fields are counted from the last `)`.
pub(crate) fn parse(stat: &str) -> Option<ProcStat> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, pgrp field 5, starttime field 22.
    let state = fields.first()?;
    let pgid = fields.get(2)?.parse().ok()?;
    let start_ticks = fields.get(19)?.parse().ok()?;
    Some(ProcStat { pgid, start_ticks, defunct: matches!(*state, "Z" | "X") })
}

/// The process's stat, `None` when it does not exist (or on a platform without `/proc`).
pub(crate) fn read(pid: i64) -> Option<ProcStat> {
    if pid <= 0 {
        return None;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().as_deref().and_then(parse)
}

/// The start time of a process, `None` when it cannot be told.
pub(crate) fn start_ticks(pid: i64) -> Option<i64> {
    read(pid).map(|s| s.start_ticks)
}

/// Pids of the live (not defunct) processes in group `pgid`, with their stat.
pub(crate) fn group_members(pgid: i64) -> Vec<(i64, ProcStat)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .filter_map(|pid| Some((pid, read(pid)?)))
        .filter(|(_, s)| s.pgid == pgid && !s.defunct)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::parse;

    #[test]
    fn fields_are_counted_from_the_last_parenthesis_of_the_name() {
        let line = "4242 (we ird) (name)) S 1 4240 4240 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 \
                    987654 1200000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
        let s = parse(line).unwrap();
        assert_eq!((s.pgid, s.start_ticks, s.defunct), (4240, 987654, false));
        assert!(
            parse("4242 (sh) Z 1 4240 4240 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5").unwrap().defunct
        );
        assert_eq!(parse("garbage"), None);
    }
}
