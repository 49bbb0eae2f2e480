//! What sessions parked on a person cost while they wait: a `skald serve` parks `PARKED_SESSIONS`
//! (50) sessions on approvals through its API, then is watched for `PARKED_SECS` (60) seconds.
//! Measured from outside the process, so the same measurement runs against any build
//! (`SKALD_BIN`; `scripts/runtime-bench.sh parked` runs it before and after issue 22):
//!
//! - database writes: SQLite's own count of committed write transactions, read from the
//!   wal-index header in `skald.db-shm` (`iChange`, bumped by every commit that wrote pages,
//!   kept across checkpoints), and the WAL frames appended (`mxFrame`, sampled every 100 ms);
//! - what each write changed: the store's write counter (`SKALD_COUNT_WRITES`) names the tables
//!   of every committed transaction that changed a row (a session runner's heartbeat alone is
//!   not named), which tells the engine instance's heartbeat from anything else;
//! - CPU: the serve process's user + system time from `/proc/<pid>/stat`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use skald_testkit::{FakeLlm, Reply};

use super::{Serve, cpu_time, ms, opted_in};

/// `iChange` and `mxFrame` of the wal-index header (the first of its two copies, native order).
fn wal_index(db_shm: &Path) -> (u32, u32) {
    let bytes = std::fs::read(db_shm).unwrap();
    let word =
        |at: usize| u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    (word(8), word(16))
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The write counter's lines (`n`, pid, what the transaction changed).
fn counted_writes(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| l.splitn(3, '\t').nth(2).unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: scripts/runtime-bench.sh parked"]
async fn parked_sessions_write_nothing_and_cost_no_cpu() {
    if !opted_in("SKALD_BENCH", "parked") {
        return;
    }
    let sessions = env_u64("PARKED_SESSIONS", 50) as usize;
    let window = Duration::from_secs(env_u64("PARKED_SECS", 60));
    let fake = FakeLlm::start().await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let (data, counter) = (root.join("data"), root.join("writes.tsv"));
    let envs = [("SKALD_COUNT_WRITES", counter.to_str().unwrap())];
    let serve = Serve::spawn(&data, &root, &fake, &root.join("serve.log"), &envs).ready();

    let parking = Instant::now();
    let mut ids = Vec::new();
    for i in 0..sessions {
        let key = format!("PARK-{i:02}");
        let args = json!({ "command": format!("echo {i} > out-{i:02}.txt") }).to_string();
        fake.push_for_prompt(&key, Reply::tool_call("execute_cmd", &args));
        let body = json!({ "source": format!("park-{i:02}"), "text": key });
        let (status, sent) = serve.call("send_message", body).await;
        assert_eq!(status, 200, "{sent}");
        ids.push(sent["session_id"].as_i64().unwrap());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, inbox) = serve.call("inbox", json!({})).await;
        assert_eq!(status, 200, "{inbox}");
        if inbox["items"].as_array().map_or(0, Vec::len) == sessions {
            break;
        }
        assert!(Instant::now() < deadline, "not every session parked: {inbox}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let parked_in = parking.elapsed();
    // Let what parking wrote settle (turn ends, events) before the window opens.
    tokio::time::sleep(Duration::from_secs(3)).await;
    // A parked turn that waits inside its run holds the session (`turn_running` says so).
    let mut holding = 0;
    for &id in &ids {
        let (_, running) = serve.call("turn_running", json!({ "session_id": id })).await;
        holding += usize::from(running["running"] == true);
    }

    let shm = data.join("skald.db-shm");
    let pid = serve.pid();
    let (commits_before, mut frame) = wal_index(&shm);
    let counted_before = counted_writes(&counter).len();
    let cpu_before = cpu_time(pid);
    let opened = Instant::now();
    let mut frames = 0u64;
    while opened.elapsed() < window {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, now) = wal_index(&shm);
        // A checkpoint restarts the WAL: the frames since are all new.
        frames += u64::from(if now >= frame { now - frame } else { now });
        frame = now;
    }
    let watched = opened.elapsed();
    let cpu = cpu_time(pid) - cpu_before;
    let (commits_after, _) = wal_index(&shm);
    let counted: Vec<String> = counted_writes(&counter).split_off(counted_before);

    // Still parked, nothing ran meanwhile.
    let (_, inbox) = serve.call("inbox", json!({})).await;
    assert_eq!(inbox["items"].as_array().map_or(0, Vec::len), sessions, "{inbox}");
    assert_eq!(fake.requests().len(), sessions, "a parked session asked the model again");

    let commits = commits_after.wrapping_sub(commits_before);
    let heartbeats = counted.iter().filter(|w| w.as_str() == "update engine_instances").count();
    let mut others: Vec<&String> =
        counted.iter().filter(|w| *w != "update engine_instances").collect();
    others.sort();
    others.dedup();
    let secs = watched.as_secs_f64();
    println!(
        "parked: {sessions} sessions parked in {:.1} s ({holding} holding their session), \
         watched {secs:.1} s: {commits} write commits ({:.2}/s), {frames} WAL frames; named by \
         the write counter: {} ({heartbeats} instance heartbeats, {} other: {others:?}); CPU \
         {:.0} ms = {:.3}% of a core",
        parked_in.as_secs_f64(),
        f64::from(commits) / secs,
        counted.len(),
        counted.len() - heartbeats,
        ms(cpu),
        100.0 * cpu.as_secs_f64() / secs,
    );
}
