//! Context build per round at 100, 1,000 and 10,000 messages (30% of them with a finished tool
//! call), in one run: the full rebuild (every row read and rendered), the cached build extended
//! by one new round (an assistant row with a call and its result, as the turn loop writes it),
//! and a bare `SELECT` of the same rows. DESIGN.md: a 10,000-message build under 15 ms and
//! within 3x of the bare SELECT; issue 14: the cached build within 2x from 100 to 10,000.
//!
//! Run: `cargo bench -p skald-core --bench context`. The summary line per size (medians of the
//! same run) goes to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use skald_core::config::DatetimeConfig;
use skald_core::context::{BuildSettings, ContextCache, ContextInputs, MessageBuilder};
use skald_protocol::ToolStatus;
use skald_store::repo::history::NewMessage;
use skald_store::repo::replay_delta::DeltaCursor;
use skald_store::repo::sessions::NewSession;
use skald_store::{Store, SystemClock};
use tokio::runtime::Runtime;

const SIZES: [usize; 3] = [100, 1_000, 10_000];

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    stack_id: i64,
}

/// `messages` rows written in one transaction with plain SQL: the shape matters here, not the
/// write path. Every 10 rows: 1 user prompt, 3 assistant rows with one finished call, 6 plain
/// answers; ~200-char texts, ~400-char results.
async fn fixture(messages: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("skald.db"), Arc::new(SystemClock)).await.unwrap();
    let stack_id =
        store.create_session(&NewSession::interactive("bench")).await.unwrap().root_stack_id;
    let now = "2026-06-17T20:00:00.000Z";
    let mut tx = store.pool().begin().await.unwrap();
    let mut calls = 0;
    for i in 0..messages {
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
        if matches!(i % 10, 1 | 4 | 7) {
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
    assert_eq!(calls, messages * 3 / 10);
    Fixture { _dir: dir, store, stack_id }
}

/// One tool round as the turn loop stores it: the reply with its call, running, then done.
async fn append_round(store: &Store, stack_id: i64) -> (i64, i64) {
    let reply = NewMessage {
        stack_id,
        content: "Let me read the next module.".into(),
        ..Default::default()
    };
    let call = ("read_file".to_string(), r#"{"path":"src/next.rs"}"#.to_string(), None);
    let (message_id, ids) = store.append_assistant_with_calls(&reply, &[call]).await.unwrap();
    store.start_tool_call(ids[0]).await.unwrap();
    let result = "fn next() {}\n".repeat(30);
    store.set_tool_status(ids[0], ToolStatus::Done, Some(&result)).await.unwrap();
    (message_id, ids[0])
}

/// Takes the round out again so every sample measures the same session size (bench only: the
/// engine never deletes rows).
async fn remove_round(store: &Store, (message_id, call_id): (i64, i64)) {
    sqlx::query("DELETE FROM chat_llm_tools WHERE id = ?")
        .bind(call_id)
        .execute(store.pool())
        .await
        .unwrap();
    sqlx::query("DELETE FROM chat_history WHERE id = ?")
        .bind(message_id)
        .execute(store.pool())
        .await
        .unwrap();
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

/// The floor of the way the store reads a whole frame (one JSON document per table, see
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

/// A frame and the two builders measured on it.
struct Case {
    fx: Fixture,
    full: MessageBuilder,
    capped: MessageBuilder,
    cached: MessageBuilder,
    cache: ContextCache,
    inputs: ContextInputs,
}

impl Case {
    async fn new(messages: usize) -> Case {
        let fx = fixture(messages).await;
        let cache = ContextCache::default();
        let inputs = inputs(fx.stack_id);
        Case {
            full: MessageBuilder::new(fx.store.clone(), settings(true)),
            capped: MessageBuilder::new(fx.store.clone(), settings(false)),
            cached: MessageBuilder::new(fx.store.clone(), settings(true)).with_cache(cache.clone()),
            cache,
            inputs,
            fx,
        }
    }

    /// One round of the cached build in a turn under way: the history is rebuilt at this size
    /// (as after a process start), a round is added and built (untimed: the round before), then
    /// another round is added and the build that extends it is timed. The cache and both rounds
    /// are reset untimed, so every sample sees the same session size.
    async fn incremental_round(&self) -> Duration {
        let (store, stack) = (&self.fx.store, self.fx.stack_id);
        self.cache.forget(stack);
        self.cached.build_request(&self.inputs).await.unwrap();
        let before = append_round(store, stack).await;
        self.cached.build_request(&self.inputs).await.unwrap();
        let round = append_round(store, stack).await;
        let t = Instant::now();
        let built = self.cached.build_request(&self.inputs).await.unwrap();
        let elapsed = t.elapsed();
        drop(built);
        remove_round(store, round).await;
        remove_round(store, before).await;
        elapsed
    }
}

/// Median wall time of `n` runs of `f`.
fn median(n: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut v: Vec<Duration> = (0..n).map(|_| f()).collect();
    v.sort();
    v[n / 2]
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let mut summary = Vec::new();
    for size in SIZES {
        let case = rt.block_on(Case::new(size));
        let built = rt.block_on(case.full.build(&case.inputs)).unwrap();
        assert!(built.messages.len() > size, "every row and result is replayed");
        let (store, stack) = (&case.fx.store, case.fx.stack_id);

        let mut g = c.benchmark_group(format!("context_{size}_messages"));
        g.sample_size(20).sampling_mode(SamplingMode::Flat);
        g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
        g.bench_function("bare_select", |b| b.to_async(&rt).iter(|| bare_select(store, stack)));
        g.bench_function("bare_json_select", |b| {
            b.to_async(&rt).iter(|| bare_json_select(store, stack));
        });
        g.bench_function("build_full_rebuild", |b| {
            b.to_async(&rt).iter(|| case.full.build(&case.inputs));
        });
        g.bench_function("build_capped_30", |b| {
            b.to_async(&rt).iter(|| case.capped.build(&case.inputs));
        });
        g.bench_function("build_incremental_one_round", |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let case = &case;
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += case.incremental_round().await;
                    }
                    total
                }
            });
        });
        g.finish();

        // Medians of the same run, for the ratios.
        let before = case.cache.stats();
        let select = median(30, || {
            timed(|| {
                rt.block_on(bare_select(store, stack));
            })
        });
        let full = median(30, || {
            timed(|| {
                rt.block_on(case.full.build(&case.inputs)).unwrap();
            })
        });
        let incremental = median(INCREMENTAL_SAMPLES, || rt.block_on(case.incremental_round()));
        let stats = case.cache.stats();
        let extended = stats.extended - before.extended;
        assert_eq!(extended, 2 * INCREMENTAL_SAMPLES as u64, "every round extended the cache");
        let cursor = rt.block_on(end_cursor(store, stack));
        let delta = median(INCREMENTAL_SAMPLES, || {
            timed(|| {
                rt.block_on(store.frame_delta(stack, case.inputs.scratchpad_session_id, &cursor))
                    .unwrap();
            })
        });
        summary.push(Summary { size, select, full, incremental, delta });
    }
    let base = summary[0].incremental;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for Summary { size, select, full, incremental, delta } in summary {
        println!(
            "{size} messages: bare SELECT {:.3} ms; full rebuild {:.3} ms ({:.2}x); incremental \
             {:.3} ms ({:.3}x of the SELECT, {:.2}x of the 100-message incremental); its delta \
             statement alone {:.3} ms",
            ms(select),
            ms(full),
            ms(full) / ms(select),
            ms(incremental),
            ms(incremental) / ms(select),
            ms(incremental) / ms(base),
            ms(delta),
        );
    }
}

/// Timed builds per size for the incremental medians (each is cheap; the medians are noisy).
const INCREMENTAL_SAMPLES: usize = 100;

/// One size's medians, all from the same run.
struct Summary {
    size: usize,
    select: Duration,
    full: Duration,
    incremental: Duration,
    /// `frame_delta` alone with nothing new after its cursor.
    delta: Duration,
}

/// A cursor at the end of the frame, nothing open.
async fn end_cursor(store: &Store, stack_id: i64) -> DeltaCursor {
    let last: i64 =
        sqlx::query_scalar("SELECT MAX(id) FROM chat_history WHERE session_stack_id = ?")
            .bind(stack_id)
            .fetch_one(store.pool())
            .await
            .unwrap();
    let calls: i64 = sqlx::query_scalar("SELECT MAX(id) FROM chat_llm_tools")
        .fetch_one(store.pool())
        .await
        .unwrap();
    DeltaCursor { after_message_id: last, after_tool_id: calls, open_calls: Vec::new() }
}

criterion_group!(benches, bench);
criterion_main!(benches);
