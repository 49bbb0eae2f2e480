//! Commands never outlive their engine: running groups are recorded, a dead engine's leftovers
//! are killed at the next open (grandchildren included, never a reused pid), and a finished or
//! cancelled command leaves neither processes nor rows.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::json;
use skald_core::config::EnvOverrides;
use skald_core::tools::{ProcessRegistry, ToolContext, ToolError, ToolRegistry, names};
use skald_core::{Engine, EngineOptions};
use skald_store::Store;
use skald_store::repo::processes::ToolProcessGroup;
use skald_testkit::{HANG_GUARD, eventually};
use tokio_util::sync::CancellationToken;

/// The kernel's view of a process: `(pgid, start ticks)`, `None` once it is gone or a zombie.
fn stat(pid: i64) -> Option<(i64, i64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<String> =
        text.rsplit_once(')')?.1.split_whitespace().map(str::to_string).collect();
    if matches!(fields[0].as_str(), "Z" | "X") {
        return None;
    }
    Some((fields[2].parse().ok()?, fields[19].parse().ok()?))
}

fn alive(pid: i64) -> bool {
    stat(pid).is_some()
}

fn start_ticks(pid: i64) -> i64 {
    stat(pid).unwrap().1
}

async fn read_pid(file: &Path) -> i64 {
    let pid = || std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse::<i64>().ok());
    eventually(&format!("{} to be written", file.display()), || pid().is_some()).await;
    pid().unwrap()
}

/// `sh -c script` as the leader of its own group, like `execute_cmd` starts it.
fn group(script: &str, dir: &Path) -> Child {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// A pid no process has any more: a child that exited and was reaped.
fn dead_pid() -> i64 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = i64::from(c.id());
    c.wait().unwrap();
    pid
}

fn row(leader: i64, leader_start: i64, owner: i64) -> ToolProcessGroup {
    ToolProcessGroup {
        tool_call_id: Some(1),
        pgid: leader,
        leader_pid: leader,
        leader_start_ticks: Some(leader_start),
        owner_pid: owner,
        owner_start_ticks: Some(stat(owner).map_or(1, |s| s.1)),
    }
}

async fn open(dir: &Path) -> Engine {
    Engine::open(EngineOptions {
        data_dir: Some(dir.to_path_buf()),
        env: Some(EnvOverrides::default()),
        secrets: Some(std::sync::Arc::new(skald_core::config::MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap()
}

fn kill_group(pgid: i64) {
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{pgid}")]).status();
}

#[tokio::test]
async fn an_engine_that_opens_kills_the_groups_a_dead_engine_left_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let store = Store::open_in_dir(&data).await.unwrap();
    // Left by a dead engine: a shell still running, with a background grandchild.
    let mut orphan = group("sleep 600 & echo $! > orphan.child; exec sleep 600", dir.path());
    let orphan_pid = i64::from(orphan.id());
    let orphan_child = read_pid(&dir.path().join("orphan.child")).await;
    // Left by a dead engine, but the pid now names another process (it started at another time).
    let mut reused = group("exec sleep 600", dir.path());
    let reused_pid = i64::from(reused.id());
    // Recorded by an engine that still runs (this process).
    let mut live = group("exec sleep 600", dir.path());
    let live_pid = i64::from(live.id());
    let me = i64::from(std::process::id());
    let dead = dead_pid();
    store.record_tool_process(&row(orphan_pid, start_ticks(orphan_pid), dead)).await.unwrap();
    store.record_tool_process(&row(reused_pid, start_ticks(reused_pid) - 1, dead)).await.unwrap();
    store.record_tool_process(&row(live_pid, start_ticks(live_pid), me)).await.unwrap();

    let _engine = open(&data).await;

    let _ = orphan.wait();
    eventually("the orphaned grandchild to be killed", || !alive(orphan_child)).await;
    assert!(!alive(orphan_pid));
    assert!(alive(reused_pid), "a reused pid is never killed");
    assert!(alive(live_pid), "a live engine's command is never killed");
    let left: Vec<i64> =
        store.tool_processes().await.unwrap().iter().map(|r| r.group.pgid).collect();
    assert_eq!(left, [live_pid], "the dead engine's rows are gone, the live one's stays");
    for (pid, child) in [(reused_pid, &mut reused), (live_pid, &mut live)] {
        kill_group(pid);
        let _ = child.wait();
    }
}

#[tokio::test]
async fn a_group_whose_leader_died_with_the_engine_is_killed_through_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_dir(dir.path()).await.unwrap();
    // The leader waits on its stdin, so its start time can be read before it goes.
    let mut leader = group("sh -c 'sleep 600' & echo $! > child; read _", dir.path());
    let leader_pid = i64::from(leader.id());
    let child = read_pid(&dir.path().join("child")).await;
    store.record_tool_process(&row(leader_pid, start_ticks(leader_pid), dead_pid())).await.unwrap();
    // The leader ends (as the parent-death signal ends it); its grandchild lives on in the group.
    leader.stdin.take().unwrap().write_all(b"\n").unwrap();
    leader.wait().unwrap();
    assert!(alive(child));

    let reaped = skald_core::tools::process_registry::reap_orphans(&store).await.unwrap();

    assert_eq!((reaped.groups_killed, reaped.rows_removed), (1, 1));
    eventually("the leaderless group's member to be killed", || !alive(child)).await;
    assert!(store.tool_processes().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_running_command_is_recorded_and_a_cancel_kills_its_group_and_forgets_it() {
    let dir = tempfile::tempdir().unwrap();
    let wd = dir.path().canonicalize().unwrap();
    let store = Store::open_in_dir(&wd).await.unwrap();
    let tools = ToolRegistry::builtin_recording(ProcessRegistry::new(store.clone()));
    let tool = tools.get(names::EXECUTE_CMD).unwrap();
    let ctx = ToolContext::new(&wd, CancellationToken::new()).for_call(7);
    let args = json!({"command": "sleep 600 & echo $! > child; echo $$ > leader; wait"});
    let run = tokio::spawn({
        let ctx = ctx.clone();
        async move { tool.run(&args, &ctx).await }
    });
    let leader = read_pid(&wd.join("leader")).await;
    let child = read_pid(&wd.join("child")).await;
    let rows = store.tool_processes().await.unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0].group;
    assert_eq!((r.tool_call_id, r.pgid, r.leader_pid), (Some(7), leader, leader));
    assert_eq!(r.leader_start_ticks, Some(start_ticks(leader)));
    assert_eq!(r.owner_pid, i64::from(std::process::id()));
    assert_eq!(stat(child).unwrap().0, leader, "the grandchild is in the recorded group");

    ctx.cancel.cancel();
    let out = tokio::time::timeout(HANG_GUARD, run).await.unwrap().unwrap();
    assert!(matches!(out, Err(ToolError::Cancelled)));
    eventually("the cancelled command's grandchild to be killed", || !alive(child)).await;
    assert!(store.tool_processes().await.unwrap().is_empty());

    // A command that ends by itself forgets its group too.
    let tool = tools.get(names::EXECUTE_CMD).unwrap();
    let fresh = ToolContext::new(&wd, CancellationToken::new()).for_call(8);
    let out = tool.run(&json!({"command": "echo ok"}), &fresh).await.unwrap();
    assert!(out.text.starts_with("exit code 0"), "{}", out.text);
    assert!(store.tool_processes().await.unwrap().is_empty());
}
