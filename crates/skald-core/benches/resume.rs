//! Resume of a crashed 10,000-message session (DESIGN.md, issue 13: under 100 ms to the next
//! model request): the time from `Engine::resume` until the fake provider receives the request
//! that continues the turn.
//!
//! The crash: the newest assistant reply asked for three calls and the process died among them:
//! the first is done, the second (`execute_cmd`, not safe to repeat) was running, the third
//! (`read_file`) never started; the dead process still holds the session's runner row. Resume
//! claims the session, answers the running call with the interrupted result and flags it, runs
//! the never-started call, builds the context and asks the model. Two figures: on an engine that
//! is already open (a decision arriving in the app: the cache of built histories is cold for
//! this session) and from `Engine::open` (a restart: `skald resume`, the app starting).
//!
//! Every sample starts from a fresh copy of the crashed database (the copy is not timed).
//!
//! Run: `cargo bench -p skald-core --bench resume`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use skald_core::Engine;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_store::{Store, SystemClock};
use skald_testkit::{FakeLlm, Reply};
use tokio::runtime::Runtime;

const MESSAGES: usize = 10_000;

/// The crashed data dir, built once; every sample copies it.
struct Template {
    dir: tempfile::TempDir,
    session_id: i64,
}

impl Template {
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

/// 10,000 rows in the session's root frame (every 10: a prompt, 3 replies with a finished
/// `read_file`, 6 plain answers), then the reply whose calls the crash cut off.
async fn crashed_session(fake: &FakeLlm) -> Template {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.md"), "# Notes\n".repeat(20)).unwrap();
    let engine = support::engine_on(data.clone(), fake).await;
    let opts = ChatOptions { workdir: Some(work), ..Default::default() };
    let session_id = engine.active_session("bench", &opts).await.unwrap();
    drop(engine);

    let store = Store::open(&data.join("skald.db"), Arc::new(SystemClock)).await.unwrap();
    let stack_id: i64 =
        sqlx::query_scalar("SELECT id FROM chat_sessions_stack WHERE session_id = ?")
            .bind(session_id)
            .fetch_one(store.pool())
            .await
            .unwrap();
    let mut tx = store.pool().begin().await.unwrap();
    let mut finished_calls = Vec::new();
    for i in 0..MESSAGES - 1 {
        let id = match i % 10 {
            0 => {
                let text = format!("Question {i}: look at module {i}.");
                insert_message(&mut tx, stack_id, "user", &text).await
            }
            _ => {
                let text = format!("Answer part {i}. {}", "Some explanation text. ".repeat(8));
                insert_message(&mut tx, stack_id, "assistant", &text).await
            }
        };
        if matches!(i % 10, 1 | 4 | 7) {
            finished_calls.push((id, format!(r#"{{"path":"src/module_{i}.rs"}}"#), "done"));
        }
    }
    let text = "Reading, then running the tests.";
    let crashed = insert_message(&mut tx, stack_id, "assistant", text).await;
    for (message_id, args, status) in finished_calls {
        sqlx::query(
            "INSERT INTO chat_llm_tools (message_id, name, arguments, result, status, \
             created_at, updated_at) VALUES (?, 'read_file', ?, ?, ?, ?, ?)",
        )
        .bind(message_id)
        .bind(args)
        .bind("fn module() {}\n".repeat(20))
        .bind(status)
        .bind(NOW)
        .bind(NOW)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    let cut_off = [
        ("read_file", r#"{"path":"notes.md"}"#, Some("# Notes"), "done"),
        ("execute_cmd", r#"{"command":"cargo test"}"#, None, "running"),
        ("read_file", r#"{"path":"notes.md"}"#, None, "pending"),
    ];
    for (name, args, result, status) in cut_off {
        sqlx::query(
            "INSERT INTO chat_llm_tools (message_id, name, arguments, result, status, \
             created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(crashed)
        .bind(name)
        .bind(args)
        .bind(result)
        .bind(status)
        .bind(NOW)
        .bind(NOW)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    // The dead process still holds the session: a pid that has certainly exited.
    let dead_pid = std::process::Command::new("true").spawn().unwrap();
    let pid = dead_pid.id();
    let mut dead_pid = dead_pid;
    dead_pid.wait().unwrap();
    sqlx::query(
        "INSERT INTO session_runners (session_id, runner, pid, started_at, heartbeat_at) \
         VALUES (?, 'crashed', ?, ?, ?)",
    )
    .bind(session_id)
    .bind(i64::from(pid))
    .bind(NOW)
    .bind(NOW)
    .execute(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(store.pool()).await.unwrap();
    store.pool().close().await;
    Template { dir, session_id }
}

const NOW: &str = "2026-12-04T10:00:00.000Z";

async fn insert_message(
    tx: &mut sqlx::SqliteConnection,
    stack_id: i64,
    role: &str,
    content: &str,
) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO chat_history (session_stack_id, role, content, input_tokens, \
         output_tokens, created_at) VALUES (?, ?, ?, 1000, 50, ?) RETURNING id",
    )
    .bind(stack_id)
    .bind(role)
    .bind(content)
    .bind(NOW)
    .fetch_one(tx)
    .await
    .unwrap()
}

/// A fresh copy of the crashed data dir.
fn copy_of(template: &Template, into: &Path) -> PathBuf {
    let data = into.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for entry in std::fs::read_dir(template.data()).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), data.join(entry.file_name())).unwrap();
        }
    }
    data
}

/// One resume: from `Engine::resume` (after `Engine::open` too when `open` is true) until the
/// provider holds the next request. The reply is held back a little so the arrival is seen.
async fn resume_once(template: &Template, fake: &FakeLlm, open: bool) -> Duration {
    let scratch = tempfile::tempdir().unwrap();
    let data = copy_of(template, scratch.path());
    fake.push(Reply::Stall { ms: 20, then_hang: false });
    fake.push(Reply::text("Resumed."));
    let mut engine = None;
    if !open {
        engine = Some(support::engine_on(data.clone(), fake).await);
    }
    let started = Instant::now();
    let engine = match engine {
        Some(e) => e,
        None => support::engine_on(data, fake).await,
    };
    let mut resumed = tokio::spawn({
        let engine: Engine = engine.clone();
        let session_id = template.session_id;
        async move { engine.resume(session_id, ParkMode::Exit).await }
    });
    let elapsed = tokio::select! {
        () = fake.wait_in_flight(1) => started.elapsed(),
        ended = &mut resumed => panic!("resume ended before asking the model: {ended:?}"),
    };
    let outcome = resumed.await.unwrap().unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let asked = fake.requests();
    let last = asked.last().unwrap();
    let messages = last.body["messages"].as_array().unwrap();
    // After the conversation (and any trailing system reminder): the cut-off calls' results.
    let last = messages.iter().rev().find(|m| m["role"] != "system").unwrap();
    assert_eq!(last["role"], "tool", "the request answers the cut-off calls");
    fake.reset();
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn resume_crashed(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let fake = rt.block_on(FakeLlm::start()).unwrap();
    let template = rt.block_on(crashed_session(&fake));
    let mut group = c.benchmark_group("resume_crashed_10k");
    group.sample_size(20).measurement_time(Duration::from_secs(8));
    for (label, open) in [("resume on an open engine", false), ("open + resume (restart)", true)] {
        group.bench_function(label, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += resume_once(&template, &fake, open).await;
                    }
                    total
                })
            })
        });
    }
    group.finish();
    for (label, open) in [("resume on an open engine", false), ("open + resume (restart)", true)] {
        let runs: Vec<Duration> =
            (0..20).map(|_| rt.block_on(resume_once(&template, &fake, open))).collect();
        println!(
            "{label}: next model request after {:.2} ms (median of 20; {MESSAGES} messages)",
            median(runs).as_secs_f64() * 1e3
        );
    }
}

criterion_group!(benches, resume_crashed);
criterion_main!(benches);
