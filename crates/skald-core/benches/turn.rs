//! Turn-loop benchmarks: engine overhead per tool round against the fake provider on loopback
//! (no model latency), on a fresh session and on one with 3,000 stored rows; and the latency
//! from a committed event to a `subscribe()` receiver.
//!
//! A round's wall time includes the fake provider's own work (parsing and validating the request,
//! streaming the reply) on the same two cores. `provider_round_trip` measures exactly that part,
//! in the same run: the last request the engine sent, replayed with a bare HTTP client and its
//! streamed reply read to the end. Engine overhead = round − round trip.
//!
//! Run: `cargo bench -p skald-core --bench turn`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use skald_core::turn::TurnOutcome;
use skald_protocol::{Event, ToolStatus};
use skald_store::repo::history::{NewMessage, Role};
use skald_testkit::Reply;
use support::{Rig, rig};
use tokio::runtime::Runtime;

/// Tool rounds per measured turn; the turn's final text round is part of the cost divided by N.
const ROUNDS: u32 = 10;
/// Stored rows of the "long session" case (the reference grew to 19 ms per round here).
const STORED_ROWS: usize = 3_000;

/// A high round limit so N rounds always fit.
const CONFIG: &str = "llm:\n  max_tool_rounds: 100\n";

/// One turn of `ROUNDS` scratchpad calls then a text answer; returns the wall time per round.
async fn timed_turn(rig: &Rig, source: &str) -> Duration {
    for i in 0..ROUNDS {
        rig.fake.push(Reply::tool_call(
            "update_scratchpad",
            &json!({"key": format!("k{i}"), "value": "v"}).to_string(),
        ));
    }
    rig.fake.push(Reply::text("done"));
    let started = Instant::now();
    let receipt = rig.engine.send_message(source, "go", rig.opts.clone()).await.unwrap();
    let outcome = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    let elapsed = started.elapsed();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    elapsed / ROUNDS
}

/// Fills the source's active session with `STORED_ROWS` history rows: user prompt, assistant
/// with a finished tool call, final answer — the shape a long working session has.
async fn fill_session(rig: &Rig, source: &str) {
    let sid = rig.engine.active_session(source, &rig.opts).await.unwrap();
    let store = skald_store::Store::open_in_dir(rig.engine.data_dir()).await.unwrap();
    let stack_id = store.root_frame(sid).await.unwrap().id;
    let body = "x".repeat(400);
    for i in 0..STORED_ROWS / 3 {
        let msg = |role: Option<Role>, content: String| NewMessage {
            stack_id,
            role,
            content,
            ..Default::default()
        };
        store.append_message(&msg(Some(Role::User), format!("question {i} {body}"))).await.unwrap();
        let (_, ids) = store
            .append_assistant_with_calls(
                &msg(None, format!("looking {i}")),
                &[("read_file".into(), r#"{"path":"a.txt"}"#.into(), Some(format!("call_{i}")))],
            )
            .await
            .unwrap();
        store.set_tool_status(ids[0], ToolStatus::Running, None).await.unwrap();
        store.set_tool_status(ids[0], ToolStatus::Done, Some(&body)).await.unwrap();
        store
            .append_message(&msg(Some(Role::Assistant), format!("answer {i} {body}")))
            .await
            .unwrap();
    }
}

/// One bare request to the fake provider: `body` (a request the engine sent) posted with a plain
/// HTTP client, the streamed tool-call reply read to the end.
async fn round_trip(http: &reqwest::Client, rig: &Rig, body: &serde_json::Value) -> Duration {
    rig.fake.push(Reply::tool_call("update_scratchpad", r#"{"key":"k","value":"v"}"#));
    let started = Instant::now();
    let resp = http
        .post(format!("{}/chat/completions", rig.fake.base_url()))
        .json(body)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let text = resp.text().await.unwrap();
    let elapsed = started.elapsed();
    assert!(text.contains("[DONE]"));
    elapsed
}

/// A mid-turn request of `rig`'s last turn (history, tool results and all).
fn sample_request(rig: &Rig) -> serde_json::Value {
    let reqs = rig.fake.requests();
    reqs[reqs.len() - 2].body.clone()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn per_round(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let fresh = rt.block_on(rig(CONFIG));
    let long = rt.block_on(async {
        let r = rig(CONFIG).await;
        fill_session(&r, "long").await;
        r
    });
    let mut group = c.benchmark_group("turn_round_overhead");
    group.sample_size(20).measurement_time(Duration::from_secs(10));
    group.bench_function("fresh_session", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // A new session per turn keeps the history at a handful of rows.
                    fresh.engine.new_session("fresh").await.unwrap();
                    total += timed_turn(&fresh, "fresh").await;
                }
                total
            })
        })
    });
    group.bench_function("session_with_3000_rows", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += timed_turn(&long, "long").await;
                }
                total
            })
        })
    });
    let http = reqwest::Client::new();
    for (name, rig) in [("provider_round_trip_fresh", &fresh), ("provider_round_trip_3000", &long)]
    {
        let body = sample_request(rig);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += round_trip(&http, rig, &body).await;
                    }
                    total
                })
            })
        });
    }
    group.finish();

    // The subtraction, from medians measured back to back in this run.
    for (label, rig, source, reset) in
        [("fresh session", &fresh, "fresh", true), ("3,000 stored rows", &long, "long", false)]
    {
        let rounds: Vec<Duration> = (0..30)
            .map(|_| {
                rt.block_on(async {
                    if reset {
                        rig.engine.new_session(source).await.unwrap();
                    }
                    timed_turn(rig, source).await
                })
            })
            .collect();
        let body = sample_request(rig);
        let trips: Vec<Duration> =
            (0..100).map(|_| rt.block_on(round_trip(&http, rig, &body))).collect();
        let (round, trip) = (median(rounds), median(trips));
        println!(
            "per round, {label}: {:.2} ms; provider round trip: {:.2} ms; engine overhead: {:.2} ms",
            round.as_secs_f64() * 1e3,
            trip.as_secs_f64() * 1e3,
            round.saturating_sub(trip).as_secs_f64() * 1e3
        );
    }
}

/// A committed write (`new_session`: insert + commit, then emit) until a subscriber task on
/// another worker thread holds the event. `commit_and_deliver` starts before the write;
/// `bus_only` starts when the call returns, right after the emit.
fn event_latency(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let rig = rt.block_on(rig(CONFIG));
    let mut group = c.benchmark_group("event_latency");
    group.sample_size(50);
    for (name, from_call_start) in [("commit_and_deliver", true), ("bus_only", false)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let mut rx = rig.engine.subscribe();
                        let waiter = tokio::spawn(async move {
                            loop {
                                let ev = rx.recv().await.unwrap();
                                if matches!(ev.event, Event::SessionsChanged {}) {
                                    return Instant::now();
                                }
                            }
                        });
                        let start = Instant::now();
                        rig.engine.new_session("bench").await.unwrap();
                        let returned = Instant::now();
                        let got = waiter.await.unwrap();
                        let from = if from_call_start { start } else { returned };
                        total += got.saturating_duration_since(from);
                    }
                    total
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, per_round, event_latency);
criterion_main!(benches);
