//! Events every process sees: from a committed write (`new_session`) to a client's feed in the
//! same engine (one outbox append between), to a feed of another engine on the same data dir
//! (the outbox tail), and what one tail read of an idle outbox costs.
//!
//! Run: `cargo bench -p skald-core --bench events`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use skald_core::Engine;
use skald_protocol::Event;
use support::{engine_on, rig};
use tokio::runtime::Runtime;

/// Time from the start of `new_session` on `writer` until a task holding a feed of `reader`
/// has its `sessions_changed`. The write starts `phase` after the feed was taken (not timed), so
/// writes fall at every point of another engine's tail period rather than right after its read.
async fn deliver(writer: &Engine, reader: &Engine, source: &str, phase: Duration) -> Duration {
    let mut feed = reader.subscribe_feed(None).await.unwrap();
    let waiter = tokio::spawn(async move {
        loop {
            let ev = feed.recv().await.unwrap();
            if matches!(ev.event, Event::SessionsChanged {}) {
                return Instant::now();
            }
        }
    });
    // The feed is subscribed when `subscribe_feed` returns; let its task start waiting.
    tokio::task::yield_now().await;
    tokio::time::sleep(phase).await;
    let start = Instant::now();
    writer.new_session(source).await.unwrap();
    waiter.await.unwrap().saturating_duration_since(start)
}

fn feed_latency(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let rig = rt.block_on(rig(""));
    let other = rt.block_on(engine_on(rig.engine.data_dir().to_path_buf(), &rig.fake));
    let mut group = c.benchmark_group("event_feed");
    group.sample_size(50);
    group.bench_function("commit_and_deliver_same_engine", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += deliver(&rig.engine, &rig.engine, "bench", Duration::ZERO).await;
                }
                total
            })
        })
    });
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("commit_and_deliver_other_engine", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    // 0, 37, 74, 11, 48, ... ms: spread over the 100 ms tail period.
                    let phase = Duration::from_millis(i * 37 % 100);
                    total += deliver(&other, &rig.engine, "bench-other", phase).await;
                }
                total
            })
        })
    });
    group.finish();
}

/// One tail read (`seq > cursor`, nothing new) on an outbox holding 20,000 rows.
fn tail_read(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = rt.block_on(skald_store::Store::open_in_dir(dir.path())).unwrap();
    let event = skald_protocol::EventEnvelope::session(
        1,
        "bench",
        Event::ToolDone {
            tool_call_id: 1,
            result: "x".repeat(2_000),
            result_type: skald_protocol::ResultType::String,
            media: Default::default(),
        },
    );
    rt.block_on(async {
        for _ in 0..100 {
            let batch: Vec<_> = std::iter::repeat_n(&event, 200).collect();
            store.append_events("bench", &batch).await.unwrap();
        }
    });
    let head = rt.block_on(store.outbox_head()).unwrap();
    c.bench_function("outbox_tail_read_idle", |b| {
        b.iter(|| rt.block_on(store.outbox_after(head, 500)).unwrap())
    });
}

criterion_group!(benches, feed_latency, tail_read);
criterion_main!(benches);
