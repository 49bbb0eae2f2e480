//! Context build of a 10,000-message session with 3,000 tool calls, timed next to a bare
//! `SELECT` of the same rows in the same run (DESIGN.md target: under 15 ms and within 3x of the
//! bare SELECT).
//!
//! Run: `cargo bench -p skald-core --bench context`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use skald_core::config::DatetimeConfig;
use skald_core::context::{BuildSettings, ContextInputs, MessageBuilder};
use skald_store::repo::sessions::NewSession;
use skald_store::{Store, SystemClock};
use tokio::runtime::Runtime;

const MESSAGES: usize = 10_000;
const CALLS: usize = 3_000;

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    stack_id: i64,
}

/// Rows written in one transaction with plain SQL: the shape matters here, not the write path.
/// Every 10 rows: 1 user prompt, 3 assistant rows with one finished call, 6 plain answers.
async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("skald.db"), Arc::new(SystemClock)).await.unwrap();
    let stack_id =
        store.create_session(&NewSession::interactive("bench")).await.unwrap().root_stack_id;
    let now = "2026-06-17T20:00:00.000Z";
    let mut tx = store.pool().begin().await.unwrap();
    let mut calls = 0;
    for i in 0..MESSAGES {
        let (role, content) = match i % 10 {
            0 => ("user", format!("Question {i}: please look at module {i} and explain it.")),
            _ => ("assistant", format!("Answer part {i}. {}", "Some explanation text. ".repeat(8))),
        };
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO chat_history (session_stack_id, role, content, input_tokens, \
             output_tokens, created_at) VALUES (?, ?, ?, 1000, 50, ?) RETURNING id",
        )
        .bind(stack_id)
        .bind(role)
        .bind(&content)
        .bind(now)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        if matches!(i % 10, 1 | 4 | 7) && calls < CALLS {
            calls += 1;
            sqlx::query(
                "INSERT INTO chat_llm_tools (message_id, name, arguments, result, status, \
                 created_at, updated_at) VALUES (?, 'read_file', ?, ?, 'done', ?, ?)",
            )
            .bind(id)
            .bind(format!(r#"{{"path":"src/module_{i}.rs"}}"#))
            .bind(format!("fn module_{i}() {{}}\n").repeat(20))
            .bind(now)
            .bind(now)
            .execute(&mut *tx)
            .await
            .unwrap();
        }
    }
    tx.commit().await.unwrap();
    assert_eq!(calls, CALLS);
    Fixture { _dir: dir, store, stack_id }
}

fn settings(compaction: bool) -> BuildSettings {
    BuildSettings {
        max_history_messages: 30,
        max_tool_result_chars: Some(2_000),
        compaction_enabled: compaction,
        compaction: None,
        datetime: DatetimeConfig { enabled: true, round_minutes: Some(15) },
        timezone: Some("Europe/Rome".into()),
    }
}

fn inputs(stack_id: i64) -> ContextInputs {
    ContextInputs {
        stack_id,
        scratchpad_session_id: 1,
        agent_prompt: "You are Skald. ".repeat(200),
        memory: Vec::new(),
        extra_static: None,
        substitutions: BTreeMap::new(),
        cache_hints: false,
        dynamic_fragments: Vec::new(),
        tail_reminder: None,
        workdir: PathBuf::from("/w"),
        now: chrono::Utc::now(),
    }
}

/// The floor: the same two reads the builder does, rows fetched and nothing else.
async fn bare_select(store: &Store, stack_id: i64) -> usize {
    let rows = sqlx::query("SELECT * FROM chat_history WHERE session_stack_id = ? ORDER BY id")
        .bind(stack_id)
        .fetch_all(store.pool())
        .await
        .unwrap();
    let tools = sqlx::query(
        "SELECT * FROM chat_llm_tools WHERE message_id IN \
         (SELECT id FROM chat_history WHERE session_stack_id = ?) ORDER BY id",
    )
    .bind(stack_id)
    .fetch_all(store.pool())
    .await
    .unwrap();
    rows.len() + tools.len()
}

/// The floor of the way the store reads a frame (one JSON document per table, see
/// `skald_store::repo::bulk`): the same two reads, the documents fetched and nothing decoded.
async fn bare_json_select(store: &Store, stack_id: i64) -> usize {
    let mut total = 0;
    for sql in [
        "SELECT json_group_array(json_object('id', id, 'role', role, 'content', content, \
         'status', status, 'reasoning_content', reasoning_content, 'metadata', metadata, \
         'created_at', created_at)) FROM (SELECT * FROM chat_history WHERE session_stack_id = ? \
         ORDER BY id)",
        "SELECT json_group_array(json_object('id', id, 'message_id', message_id, 'name', name, \
         'arguments', arguments, 'result', result, 'status', status, 'created_at', created_at)) \
         FROM (SELECT * FROM chat_llm_tools WHERE message_id IN \
         (SELECT id FROM chat_history WHERE session_stack_id = ?) ORDER BY id)",
    ] {
        let doc: String =
            sqlx::query_scalar(sql).bind(stack_id).fetch_one(store.pool()).await.unwrap();
        total += doc.len();
    }
    total
}

/// Median wall time of `n` runs of `f`.
fn median(n: usize, mut f: impl FnMut()) -> Duration {
    let mut v: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    v[n / 2]
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let fx = rt.block_on(fixture());
    let full = MessageBuilder::new(fx.store.clone(), settings(true));
    let capped = MessageBuilder::new(fx.store.clone(), settings(false));
    let inp = inputs(fx.stack_id);
    let built = rt.block_on(full.build(&inp)).unwrap();
    assert!(built.messages.len() > MESSAGES, "every row and result is replayed");

    let mut g = c.benchmark_group("context_10k_messages_3k_calls");
    g.sample_size(30);
    g.bench_function("bare_select", |b| {
        b.to_async(&rt).iter(|| bare_select(&fx.store, fx.stack_id));
    });
    g.bench_function("bare_json_select", |b| {
        b.to_async(&rt).iter(|| bare_json_select(&fx.store, fx.stack_id));
    });
    g.bench_function("build_full_replay", |b| {
        b.to_async(&rt).iter(|| full.build(&inp));
    });
    g.bench_function("build_capped_30", |b| {
        b.to_async(&rt).iter(|| capped.build(&inp));
    });
    g.finish();

    // The ratio, measured in this same run (medians of 30 calls each).
    let select = median(30, || {
        rt.block_on(bare_select(&fx.store, fx.stack_id));
    });
    let json_select = median(30, || {
        rt.block_on(bare_json_select(&fx.store, fx.stack_id));
    });
    let build = median(30, || {
        rt.block_on(full.build(&inp)).unwrap();
    });
    let build_capped = median(30, || {
        rt.block_on(capped.build(&inp)).unwrap();
    });
    println!(
        "context build (full replay): {:.2} ms; capped to 30: {:.2} ms; bare SELECT: {:.2} ms; \
         bare JSON SELECT: {:.2} ms; ratio full/select: {:.2}x; full/JSON select: {:.2}x",
        build.as_secs_f64() * 1e3,
        build_capped.as_secs_f64() * 1e3,
        select.as_secs_f64() * 1e3,
        json_select.as_secs_f64() * 1e3,
        build.as_secs_f64() / select.as_secs_f64(),
        build.as_secs_f64() / json_select.as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
