//! The scheduler's reads with 1,000 enabled jobs: the due query (what every tick runs, once a
//! second, answered by the partial index on `next_run_at`) with nothing due and with ten due,
//! and the read of runs waiting for a person past a timeout. A tick's idle cost is the two reads.
//!
//! Run: `cargo bench -p skald-store --bench jobs`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use chrono::{Duration, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use skald_store::clock::format_ts;
use skald_store::repo::jobs::JobFields;
use skald_store::{Store, SystemClock};
use tokio::runtime::Runtime;

const JOBS: usize = 1000;

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = rt.block_on(async {
        let store = Store::open(&dir.path().join("skald.db"), Arc::new(SystemClock)).await.unwrap();
        let now = Utc::now();
        for i in 0..JOBS {
            // Ten are due; the rest fire over the next day, as a user's jobs would.
            let next = if i < 10 {
                now - Duration::seconds(1)
            } else {
                now + Duration::seconds(60 + i as i64 * 86)
            };
            let next = format_ts(next);
            let anchor = format_ts(now);
            let title = format!("job {i}");
            let fields = JobFields {
                title: &title,
                schedule: r#"{"kind":"cron","expr":"0 0 9 * * 1-5 *"}"#,
                timezone: "Europe/Berlin",
                agent_id: "scout",
                prompt: "look around",
                run_context: None,
                client: None,
                enabled: true,
                on_approval: "wait",
                approval_timeout_secs: Some(600),
                on_overlap: "skip",
                on_downtime: "catch_up_once",
                next_run_at: Some(&next),
                anchor_at: &anchor,
            };
            store.insert_job(&fields).await.unwrap();
        }
        store
    });
    let before_all = format_ts(Utc::now() - Duration::seconds(30));
    let now = format_ts(Utc::now());
    c.bench_function("due_jobs_1000_none_due", |b| {
        b.iter(|| {
            rt.block_on(async { assert!(store.due_jobs(&before_all).await.unwrap().is_empty()) })
        })
    });
    c.bench_function("due_jobs_1000_ten_due", |b| {
        b.iter(|| rt.block_on(async { assert_eq!(store.due_jobs(&now).await.unwrap().len(), 10) }))
    });
    c.bench_function("waiting_runs_with_timeout_1000", |b| {
        b.iter(|| rt.block_on(async { store.waiting_runs_with_timeout().await.unwrap() }))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
