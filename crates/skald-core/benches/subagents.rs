//! A batch of sub-agents against one: every model request answers after 200 ms, so a turn that
//! delegates once takes three requests in a row (root, child, root); a batch of four runs its
//! four children side by side and should take about as long (target: ≤ 1.3x one sub-agent).
//!
//! Run: `cargo bench -p skald-core --bench subagents`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use skald_core::turn::TurnOutcome;
use skald_testkit::{Reply, ScriptedToolCall};
use support::{Rig, rig};
use tokio::runtime::Runtime;

/// The fake provider's latency for every request.
const LATENCY_MS: u64 = 200;

fn slow(rig: &Rig, prompt_key: Option<&str>, reply: Reply) {
    let stall = Reply::Stall { ms: LATENCY_MS, then_hang: false };
    match prompt_key {
        Some(key) => {
            rig.fake.push_for_prompt(key, stall);
            rig.fake.push_for_prompt(key, reply);
        }
        None => {
            rig.fake.push(stall);
            rig.fake.push(reply);
        }
    }
}

/// One turn of the root delegating `children` tasks in one reply; returns its wall time.
async fn delegate(rig: &Rig, children: usize, round: usize) -> Duration {
    let keys: Vec<String> = (0..children).map(|i| format!("TASK-{round}-{i}:")).collect();
    let calls = keys
        .iter()
        .map(|k| {
            let args =
                json!({ "mode": "sync", "agent_id": "generalist", "prompt": format!("{k} work") });
            ScriptedToolCall::new("execute_task", &args.to_string())
        })
        .collect();
    slow(rig, None, Reply::tool_calls(calls));
    for k in &keys {
        slow(rig, Some(k), Reply::text("done"));
    }
    slow(rig, None, Reply::text("all done"));
    rig.engine.new_session("bench").await.unwrap();
    let started = Instant::now();
    let receipt = rig.engine.send_message("bench", "go", rig.opts.clone()).await.unwrap();
    let outcome = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    let took = started.elapsed();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    took
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn batch_vs_one(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let rig = rt.block_on(rig(""));
    let mut round = 0usize;
    let mut group = c.benchmark_group("subagents");
    group.sample_size(10).measurement_time(Duration::from_secs(15));
    for children in [1usize, 4] {
        group.bench_function(format!("{children} sub-agent(s), {LATENCY_MS} ms model"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        round += 1;
                        total += delegate(&rig, children, round).await;
                    }
                    total
                })
            })
        });
    }
    group.finish();

    let mut runs = |children| {
        let v: Vec<Duration> = (0..10)
            .map(|_| {
                round += 1;
                rt.block_on(delegate(&rig, children, round))
            })
            .collect();
        median(v)
    };
    let (one, four) = (runs(1), runs(4));
    println!(
        "one sub-agent: {:.1} ms, batch of 4: {:.1} ms, ratio {:.3} (medians of 10)",
        one.as_secs_f64() * 1e3,
        four.as_secs_f64() * 1e3,
        four.as_secs_f64() / one.as_secs_f64()
    );
}

criterion_group!(benches, batch_vs_one);
criterion_main!(benches);
