//! Stop latency: from `Engine::stop` to the turn's `Cancelled` outcome while the model call
//! stalls, and to the death of a running `execute_cmd` child. The turn tests assert only that a
//! stop works; how fast it is, is measured here.
//!
//! Run: `cargo bench -p skald-core --bench stop`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use skald_core::turn::TurnOutcome;
use skald_testkit::Reply;
use support::{Rig, rig};
use tokio::runtime::Runtime;

/// Polls `cond` every millisecond (the resolution of the figures that use it).
async fn until(mut cond: impl FnMut() -> bool) {
    while !cond() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Starts a turn, waits until `ready` holds, stops it and returns the time from the stop to
/// the `Cancelled` outcome and to `gone` holding as well.
async fn stop_once(
    rig: &Rig,
    ready: impl FnMut() -> bool,
    gone: impl FnMut() -> bool,
) -> (Duration, Duration) {
    rig.engine.new_session("bench").await.unwrap();
    let receipt = rig.engine.send_message("bench", "go", rig.opts.clone()).await.unwrap();
    until(ready).await;
    let stopped = Instant::now();
    assert!(rig.engine.stop(receipt.session_id).await.unwrap());
    let outcome = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    let cancelled = stopped.elapsed();
    assert_eq!(outcome, TurnOutcome::Cancelled);
    until(gone).await;
    (cancelled, stopped.elapsed())
}

/// The pid the command wrote, once it has.
fn pid_in(file: &Path) -> Option<String> {
    std::fs::read_to_string(file).ok().filter(|s| s.ends_with('\n')).map(|s| s.trim().to_owned())
}

async fn stop_model_call(rig: &Rig) -> (Duration, Duration) {
    rig.fake.push(Reply::Stall { ms: 600_000, then_hang: true });
    stop_once(rig, || rig.fake.in_flight() == 1, || rig.fake.in_flight() == 0).await
}

async fn stop_command(rig: &Rig) -> (Duration, Duration) {
    let pidfile = rig.dir.path().join("pid");
    let _ = std::fs::remove_file(&pidfile);
    let command = format!("echo $$ > {}; exec sleep 600", pidfile.display());
    rig.fake.push(Reply::tool_call("execute_cmd", &json!({ "command": command }).to_string()));
    let dead = |pid: String| !Path::new("/proc").join(pid).exists();
    stop_once(rig, || pid_in(&pidfile).is_some(), || pid_in(&pidfile).is_some_and(dead)).await
}

/// One stop of the model call (`command` false) or of a running command (true).
async fn stop_case(rig: &Rig, command: bool) -> (Duration, Duration) {
    if command { stop_command(rig).await } else { stop_model_call(rig).await }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

const CASES: [(&str, bool); 2] = [("stalled model call", false), ("execute_cmd", true)];

fn stop_latency(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let rig = rt.block_on(rig(""));
    let mut group = c.benchmark_group("stop_latency");
    group.sample_size(20).measurement_time(Duration::from_secs(10));
    for (label, command) in CASES {
        group.bench_function(format!("{label} until cancelled"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += stop_case(&rig, command).await.0;
                    }
                    total
                })
            })
        });
    }
    group.finish();

    // The second figure of each: until the provider saw the connection close, or the child died.
    for (label, command) in CASES {
        let runs: Vec<(Duration, Duration)> =
            (0..20).map(|_| rt.block_on(stop_case(&rig, command))).collect();
        let cancelled = median(runs.iter().map(|r| r.0).collect());
        let gone = median(runs.iter().map(|r| r.1).collect());
        let what = if command { "child gone" } else { "connection closed at the provider" };
        println!(
            "stop during {label}: cancelled after {:.2} ms, {what} after {:.2} ms (medians of 20)",
            cancelled.as_secs_f64() * 1e3,
            gone.as_secs_f64() * 1e3
        );
    }
}

criterion_group!(benches, stop_latency);
criterion_main!(benches);
