//! Turn-loop benchmarks: engine overhead per tool round against the fake provider on loopback
//! (no model latency), on a fresh session and on one with 3,000 stored rows; and the latency
//! from a committed event to a `subscribe()` receiver.
//!
//! A round's wall time includes the fake provider's own work (parsing and validating the request,
//! streaming the reply) on the same two cores. `provider_round_trip` measures exactly that part,
//! in the same run: the last request the engine sent, replayed with a bare HTTP client and its
//! streamed reply read to the end. Engine overhead = round − round trip.
//!
//! `db_work` counts what one tool round asks of SQLite in the fresh-session case: the statements
//! sqlx runs (its `sqlx::query` events, caught by a minimal `tracing` subscriber), and the write
//! transactions and pages that reach the WAL (read from the `-wal` file itself, emptied by a
//! `TRUNCATE` checkpoint before the turn). It uses only the engine's API and the file, so the same
//! code counts older builds.
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
    turn_of(rig, source, ROUNDS).await / ROUNDS
}

/// The wall time of one turn of `rounds` scratchpad calls then a text answer.
async fn turn_of(rig: &Rig, source: &str, rounds: u32) -> Duration {
    for i in 0..rounds {
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
    elapsed
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

    // The same counts where the timed turns ran: hundreds of sessions stored by now.
    count_rounds(&rt, &fresh, "fresh session, after the timed turns", false);

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

/// What a round asks of SQLite: statements, write transactions, WAL pages.
mod db_work {
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::subscriber::Interest;
    use tracing::{Event, Metadata, Subscriber};

    /// The statements sqlx ran while `on`. Transaction control (`BEGIN`, `COMMIT`) is not among
    /// them: sqlx sends it without a query event; the WAL counts the transactions.
    static ON: AtomicBool = AtomicBool::new(false);
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

    /// Installs the statement log as the process's subscriber (once; it sees only sqlx).
    pub fn install() {
        let _ = tracing::subscriber::set_global_default(Statements);
    }

    pub fn start() {
        SEEN.lock().unwrap().clear();
        ON.store(true, Ordering::SeqCst);
    }

    pub fn stop() -> Vec<String> {
        ON.store(false, Ordering::SeqCst);
        std::mem::take(&mut *SEEN.lock().unwrap())
    }

    struct Statements;

    #[derive(Default)]
    struct Sql {
        summary: String,
        full: String,
    }

    impl Visit for Sql {
        fn record_str(&mut self, field: &Field, value: &str) {
            match field.name() {
                "summary" => self.summary = value.to_string(),
                "db.statement" => self.full = value.to_string(),
                _ => {}
            }
        }
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "summary" {
                self.summary = format!("{value:?}");
            }
        }
    }

    impl Subscriber for Statements {
        fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
            if meta.target() == "sqlx::query" { Interest::sometimes() } else { Interest::never() }
        }
        fn enabled(&self, meta: &Metadata<'_>) -> bool {
            meta.target() == "sqlx::query" && ON.load(Ordering::Relaxed)
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut sql = Sql::default();
            event.record(&mut sql);
            let text = if sql.full.trim().is_empty() { sql.summary } else { sql.full };
            let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            SEEN.lock().unwrap().push(one_line);
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    /// Frames (pages written) and commit frames (write transactions) in a WAL file, counting
    /// only frames of the current WAL generation (the header's salts).
    #[derive(Debug, Default, Clone, Copy)]
    pub struct Wal {
        pub pages: u64,
        pub commits: u64,
    }

    pub fn read_wal(path: &Path) -> Wal {
        let bytes = std::fs::read(path).unwrap_or_default();
        let mut wal = Wal::default();
        if bytes.len() < 32 {
            return wal;
        }
        let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
        let page = be(&bytes[8..12]) as usize;
        let salts = (be(&bytes[16..20]), be(&bytes[20..24]));
        let mut at = 32;
        while at + 24 + page <= bytes.len() {
            let h = &bytes[at..at + 24];
            if (be(&h[8..12]), be(&h[12..16])) != salts {
                break;
            }
            wal.pages += 1;
            if be(&h[4..8]) != 0 {
                wal.commits += 1;
            }
            at += 24 + page;
        }
        wal
    }

    /// One counted turn.
    pub struct Count {
        pub statements: Vec<String>,
        pub wal: Wal,
    }

    impl Count {
        /// Statements by their text.
        pub fn by_text(&self) -> BTreeMap<&str, i64> {
            let mut out = BTreeMap::new();
            for s in &self.statements {
                *out.entry(s.as_str()).or_insert(0) += 1;
            }
            out
        }
    }
}

/// Counts one turn of `rounds` tool rounds on a new session of `rig` (`checkpoint` is a second
/// connection to its database); `None` when a lease's heartbeat (a timer) wrote during it.
async fn counted_turn(
    rig: &Rig,
    checkpoint: &sqlx::SqlitePool,
    rounds: u32,
) -> Option<db_work::Count> {
    rig.engine.new_session("count").await.unwrap();
    for i in 0..rounds {
        rig.fake.push(Reply::tool_call(
            "update_scratchpad",
            &json!({"key": format!("k{i}"), "value": "v"}).to_string(),
        ));
    }
    rig.fake.push(Reply::text("done"));
    let mut tries = 0;
    loop {
        let (busy, _, _): (i64, i64, i64) =
            sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(checkpoint).await.unwrap();
        if busy == 0 {
            break;
        }
        tries += 1;
        assert!(tries < 50, "the WAL could not be emptied");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    db_work::start();
    let receipt = rig.engine.send_message("count", "go", rig.opts.clone()).await.unwrap();
    let outcome = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    // What the run does after its end (the lease given back) belongs to the turn.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let statements = db_work::stop();
    let wal = db_work::read_wal(&rig.engine.data_dir().join("skald.db-wal"));
    assert!(wal.pages < 1_000, "an automatic checkpoint may have reset the WAL");
    let heartbeat =
        statements.iter().any(|s| s.starts_with("UPDATE session_runners SET heartbeat_at"));
    (!heartbeat).then_some(db_work::Count { statements, wal })
}

/// Prints what a tool round in a fresh session asks of SQLite: a 10-round turn minus a turn
/// with no tool round, divided by 10 (the median of 5 counts each), on `rig`'s database.
fn count_rounds(rt: &Runtime, rig: &Rig, label: &str, statements: bool) {
    let counted = |rounds: u32| -> Vec<db_work::Count> {
        rt.block_on(async {
            let pool = sqlx::SqlitePool::connect(&format!(
                "sqlite://{}",
                rig.engine.data_dir().join("skald.db").display()
            ))
            .await
            .unwrap();
            let mut out = Vec::new();
            while out.len() < 5 {
                if let Some(c) = counted_turn(rig, &pool, rounds).await {
                    out.push(c);
                }
            }
            pool.close().await;
            out
        })
    };
    // Warm up: agents, config and the first session's rows.
    counted(0);
    let (zero, ten) = (counted(0), counted(ROUNDS));
    let med = |v: &[db_work::Count], f: &dyn Fn(&db_work::Count) -> u64| {
        let mut x: Vec<u64> = v.iter().map(f).collect();
        x.sort_unstable();
        x[x.len() / 2]
    };
    let stats = |v: &[db_work::Count]| {
        (
            med(v, &|c| c.statements.len() as u64),
            med(v, &|c| c.wal.commits),
            med(v, &|c| c.wal.pages),
        )
    };
    let (s0, c0, p0) = stats(&zero);
    let (s10, c10, p10) = stats(&ten);
    let per = |a: u64, b: u64| (b as f64 - a as f64) / f64::from(ROUNDS);
    println!("db work ({label}):");
    println!("  turn with no tool round: {s0} statements, {c0} write transactions, {p0} WAL pages");
    println!(
        "  turn with {ROUNDS} tool rounds: {s10} statements, {c10} write transactions, \
         {p10} WAL pages"
    );
    println!(
        "  per tool round: {:.1} statements, {:.1} write transactions, {:.1} WAL pages",
        per(s0, s10),
        per(c0, c10),
        per(p0, p10)
    );
    if std::env::var_os("SKALD_BENCH_STATEMENTS").is_some() {
        for (what, c) in [("no tool round", &zero[0]), ("tool rounds", &ten[0])] {
            println!("  statements of the turn with {what}:");
            for sql in &c.statements {
                println!("    {}", sql.chars().take(140).collect::<String>());
            }
        }
    }
    if statements {
        // Which statements a round adds (the first count of each case).
        let (a, b) = (zero[0].by_text(), ten[0].by_text());
        for (sql, n) in &b {
            let extra = n - a.get(sql).copied().unwrap_or(0);
            if extra != 0 {
                let short: String = sql.chars().take(100).collect();
                println!("  {:>5.1} per round: {short}", extra as f64 / f64::from(ROUNDS));
            }
        }
    }
}

/// CPU time this process has used (every thread: the engine, the fake provider, the client),
/// from `/proc/self/stat` (clock ticks of 10 ms; read over many turns).
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> =
        rest.split_whitespace().skip(11).take(2).filter_map(|f| f.parse().ok()).collect();
    Duration::from_millis(fields.iter().sum::<u64>() * 10)
}

/// `SKALD_TURN_QUICK=<turns>`: only the fresh-session figures, then exit: the median round of
/// `<turns>` turns and of 200 provider round trips, and the process's CPU time per round and per
/// trip, so that two builds can be run alternately many times (`docs/benchmarks.md`).
fn quick(turns: usize) {
    let rt = Runtime::new().unwrap();
    let rig = rt.block_on(rig(CONFIG));
    let turn = || {
        rt.block_on(async {
            rig.engine.new_session("fresh").await.unwrap();
            timed_turn(&rig, "fresh").await
        })
    };
    for _ in 0..5 {
        turn();
    }
    let cpu = process_cpu();
    let rounds: Vec<Duration> = (0..turns).map(|_| turn()).collect();
    let round_cpu = (process_cpu() - cpu) / (turns as u32 * ROUNDS);
    let http = reqwest::Client::new();
    let body = sample_request(&rig);
    let size = |v: &serde_json::Value| v.to_string().len();
    println!(
        "quick: a mid-turn request is {} bytes, its {} tool definitions {} bytes",
        size(&body),
        body["tools"].as_array().map_or(0, Vec::len),
        size(&body["tools"])
    );
    let cpu = process_cpu();
    let trips: Vec<Duration> =
        (0..200).map(|_| rt.block_on(round_trip(&http, &rig, &body))).collect();
    let trip_cpu = (process_cpu() - cpu) / 200;
    // A turn's fixed part (its start and end, one text round) apart from its tool rounds.
    let whole = |rounds: u32| {
        let cpu = process_cpu();
        let walls: Vec<Duration> = (0..turns)
            .map(|_| {
                rt.block_on(async {
                    rig.engine.new_session("fresh").await.unwrap();
                    turn_of(&rig, "fresh", rounds).await
                })
            })
            .collect();
        (median(walls), (process_cpu() - cpu) / turns as u32)
    };
    let ((zero, zero_cpu), (ten, ten_cpu)) = (whole(0), whole(ROUNDS));
    let (round, trip) = (median(rounds), median(trips));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "quick: turn without tool rounds {:.3} ms (CPU {:.3} ms), each tool round adds {:.3} ms \
         (CPU {:.3} ms)",
        ms(zero),
        ms(zero_cpu),
        (ms(ten) - ms(zero)) / f64::from(ROUNDS),
        (ms(ten_cpu) - ms(zero_cpu)) / f64::from(ROUNDS)
    );
    println!(
        "quick: per round {:.3} ms, provider round trip {:.3} ms, engine overhead {:.3} ms; \
         CPU per round {:.3} ms, per trip {:.3} ms, difference {:.3} ms",
        ms(round),
        ms(trip),
        ms(round.saturating_sub(trip)),
        ms(round_cpu),
        ms(trip_cpu),
        ms(round_cpu.saturating_sub(trip_cpu))
    );
}

/// The counts on a new database (one session per turn, as in `fresh_session`).
fn round_cost(_: &mut Criterion) {
    if let Some(turns) = std::env::var("SKALD_TURN_QUICK").ok().and_then(|v| v.parse().ok()) {
        quick(turns);
        std::process::exit(0);
    }
    db_work::install();
    let rt = Runtime::new().unwrap();
    let rig = rt.block_on(rig(CONFIG));
    count_rounds(&rt, &rig, "fresh session, new database", true);
}

criterion_group!(benches, round_cost, per_round, event_latency);
criterion_main!(benches);
