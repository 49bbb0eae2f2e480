//! Full-text search over 100,000 messages (DESIGN.md target: under 50 ms), timed next to a bare
//! indexed read in the same run; what indexing adds to appending a message and a tool call, now
//! that a catch-up step indexes them after the write (migration 0018), next to the triggers that
//! indexed them inside it before; and what the catch-up costs per row.
//!
//! Run: `cargo bench -p skald-store --bench search`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use skald_protocol::{SearchQuery, SessionListQuery};
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::NewSession;
use skald_store::{Store, SystemClock};
use tokio::runtime::Runtime;

const MESSAGES: usize = 100_000;
const SESSIONS: usize = 200;
/// A word planted in this many messages, so "a rare word" has a known answer.
const RARE: usize = 12;
const RARE_WORD: &str = "xylophone";

/// The queries the target is about; each was typed as a user would.
const QUERIES: [(&str, &str); 5] = [
    ("common_word", "the"),
    ("rare_word", RARE_WORD),
    ("path_fragment", "repo/sessions.rs"),
    ("prefix", "implem"),
    ("two_words", "parser error"),
];

/// A small deterministic generator: the fixture is the same in every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Zipf-like: low indexes far more often, as words are in text.
    fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((n as f64).powf(u) as usize).saturating_sub(1).min(n - 1)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const COMMON: [&str; 60] = [
    "the", "a", "to", "of", "and", "in", "is", "it", "that", "for", "this", "with", "on", "be",
    "we", "can", "not", "you", "are", "as", "from", "file", "code", "test", "function", "error",
    "now", "when", "then", "so", "but", "should", "will", "which", "if", "all", "one", "change",
    "use", "value", "new", "call", "run", "fix", "type", "return", "build", "line", "after",
    "before", "first", "also", "only", "each", "module", "check", "case", "data", "read", "write",
];
const TECH: [&str; 40] = [
    "parser",
    "tokenizer",
    "session",
    "migration",
    "trigger",
    "index",
    "snippet",
    "query",
    "implement",
    "implementation",
    "implements",
    "refactor",
    "lifetime",
    "borrow",
    "async",
    "await",
    "future",
    "channel",
    "mutex",
    "struct",
    "enum",
    "trait",
    "closure",
    "iterator",
    "serde",
    "sqlite",
    "tauri",
    "webview",
    "compaction",
    "approval",
    "bypass",
    "scheduler",
    "cron",
    "tick",
    "provider",
    "stream",
    "delta",
    "token",
    "window",
    "benchmark",
];
const CRATES: [&str; 6] =
    ["skald-store", "skald-core", "skald-cli", "skald-llm", "skald-protocol", "skald-mcp"];
const DIRS: [&str; 8] =
    ["repo", "engine", "turn", "context", "tools", "approval", "serve", "config"];
const FILES: [&str; 10] =
    ["sessions", "history", "tools", "mod", "builder", "gate", "routes", "chat", "search", "bulk"];

/// A made-up word from syllables: the long tail of identifiers and rare words.
fn tail_word(rng: &mut Rng) -> String {
    const SYL: [&str; 16] = [
        "ka", "lo", "mi", "ren", "dor", "ta", "vel", "os", "qu", "im", "pa", "sen", "tri", "ul",
        "ex", "no",
    ];
    let n = 2 + rng.below(3);
    (0..n).map(|_| SYL[rng.skewed(SYL.len())]).collect()
}

fn word(rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=5 => COMMON[rng.skewed(COMMON.len())].to_string(),
        6..=7 => TECH[rng.skewed(TECH.len())].to_string(),
        _ => tail_word(rng),
    }
}

fn path(rng: &mut Rng) -> String {
    format!("crates/{}/src/{}/{}.rs", rng.pick(&CRATES), rng.pick(&DIRS), rng.pick(&FILES))
}

fn sentence(rng: &mut Rng) -> String {
    let n = 6 + rng.below(14);
    let mut words: Vec<String> = (0..n).map(|_| word(rng)).collect();
    if rng.below(6) == 0 {
        let at = rng.below(words.len());
        words[at] = path(rng);
    }
    let mut s = words.join(" ");
    if let Some(first) = s.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    s.push('.');
    s
}

fn code(rng: &mut Rng) -> String {
    let name = tail_word(rng);
    let ty = TECH[rng.below(TECH.len())];
    format!(
        "```rust\nfn {name}(input: &str) -> Result<{ty}, Error> {{\n    let {w} = {ty}::new(input)?;\n    Ok({w})\n}}\n```",
        w = tail_word(rng)
    )
}

fn message_text(rng: &mut Rng, user: bool) -> String {
    if user {
        return sentence(rng).replace('.', "?");
    }
    let mut text: Vec<String> = (0..1 + rng.below(4)).map(|_| sentence(rng)).collect();
    if rng.below(5) == 0 {
        text.push(code(rng));
    }
    text.join(" ")
}

fn call(rng: &mut Rng) -> (&'static str, String) {
    match rng.below(4) {
        0 => ("read_file", format!(r#"{{"path":"{}"}}"#, path(rng))),
        1 => ("edit_file", format!(r#"{{"path":"{}","old":"a","new":"b"}}"#, path(rng))),
        2 => (
            "execute_cmd",
            format!(
                r#"{{"command":"cargo nextest run -p {} {}"}}"#,
                rng.pick(&CRATES),
                tail_word(rng)
            ),
        ),
        _ => (
            "execute_cmd",
            format!(r#"{{"command":"rg -n {} crates/{}"}}"#, tail_word(rng), rng.pick(&CRATES)),
        ),
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    /// A session in the middle of the id range, and its root frame.
    session_id: i64,
    stack_id: i64,
}

/// 100,000 messages over 200 sessions (1 in 10 a user prompt, 3 in 10 with a tool call), written
/// in one transaction per session, then indexed by the catch-up step (timed apart).
async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("skald.db"), Arc::new(SystemClock)).await.unwrap();
    let started = Instant::now();
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    let now = "2026-12-03T20:00:00.000Z";
    let per_session = MESSAGES / SESSIONS;
    let mut frames = Vec::new();
    let mut rare_left = RARE;
    for s in 0..SESSIONS {
        let created = store.create_session(&NewSession::interactive("bench")).await.unwrap();
        frames.push((created.session_id, created.root_stack_id));
        let mut tx = store.pool().begin().await.unwrap();
        for i in 0..per_session {
            let user = i % 10 == 0;
            let mut content = message_text(&mut rng, user);
            if rare_left > 0 && (s * per_session + i) % (MESSAGES / RARE) == 7 {
                content.push_str(&format!(" The {RARE_WORD} test passed."));
                rare_left -= 1;
            }
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO chat_history (session_stack_id, role, content, created_at) \
                 VALUES (?, ?, ?, ?) RETURNING id",
            )
            .bind(created.root_stack_id)
            .bind(if user { "user" } else { "assistant" })
            .bind(&content)
            .bind(now)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
            if matches!(i % 10, 2 | 5 | 8) {
                let (name, args) = call(&mut rng);
                sqlx::query(
                    "INSERT INTO chat_llm_tools (message_id, name, arguments, result, status, \
                     created_at, updated_at) VALUES (?, ?, ?, 'ok', 'done', ?, ?)",
                )
                .bind(id)
                .bind(name)
                .bind(&args)
                .bind(now)
                .bind(now)
                .execute(&mut *tx)
                .await
                .unwrap();
            }
        }
        tx.commit().await.unwrap();
    }
    let written = started.elapsed();
    let indexing = Instant::now();
    while store.index_pending(2_000).await.unwrap().more {}
    println!(
        "fixture: {MESSAGES} messages written in {:.1} s, indexed by the catch-up in {:.1} s",
        written.as_secs_f64(),
        indexing.elapsed().as_secs_f64()
    );
    sqlx::query("PRAGMA optimize").execute(store.pool()).await.unwrap();
    let (session_id, stack_id) = frames[SESSIONS / 2];
    Fixture { _dir: dir, store, session_id, stack_id }
}

/// The baseline: one indexed read of about as many rows as a page of hits (the newest 20
/// messages of a session).
async fn bare_indexed_read(store: &Store, stack_id: i64) -> usize {
    sqlx::query(
        "SELECT id, role, content, created_at FROM chat_history WHERE session_stack_id = ? \
         ORDER BY id DESC LIMIT 20",
    )
    .bind(stack_id)
    .fetch_all(store.pool())
    .await
    .unwrap()
    .len()
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn bench_search(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let fx = rt.block_on(fixture());
    let rare =
        rt.block_on(fx.store.search(&SearchQuery { text: RARE_WORD.into(), limit: 50 })).unwrap();
    assert_eq!(rare.hits.len(), RARE, "the planted rare word is found exactly");

    let mut g = c.benchmark_group("search_100k_messages");
    g.sample_size(30);
    g.bench_function("bare_indexed_read", |b| {
        b.to_async(&rt).iter(|| bare_indexed_read(&fx.store, fx.stack_id));
    });
    for (name, text) in QUERIES {
        let q = SearchQuery::new(text);
        g.bench_function(name, |b| b.to_async(&rt).iter(|| fx.store.search(&q)));
    }
    g.bench_function("find_in_session_common_word", |b| {
        b.to_async(&rt).iter(|| fx.store.find_in_session(fx.session_id, "the"));
    });
    let list = SessionListQuery { search: Some("parser error".into()), ..Default::default() };
    g.bench_function("sessions_list_search", |b| {
        b.to_async(&rt).iter(|| fx.store.list_sessions(&list))
    });
    g.finish();

    // Ratios against the baseline, medians of this same run.
    let base = median(30, || {
        rt.block_on(bare_indexed_read(&fx.store, fx.stack_id));
    });
    println!("baseline (bare indexed read of 20 rows): {:.3} ms", ms(base));
    for (name, text) in QUERIES {
        let q = SearchQuery::new(text);
        let mut hits = 0;
        let t = median(30, || hits = rt.block_on(fx.store.search(&q)).unwrap().hits.len());
        println!(
            "search {name:<14} {text:?}: {:.2} ms, {:.1}x baseline ({hits} hits)",
            ms(t),
            ms(t) / ms(base)
        );
    }
    let t = median(30, || {
        rt.block_on(fx.store.find_in_session(fx.session_id, "the")).unwrap();
    });
    println!(
        "find_in_session \"the\" (500-message session): {:.2} ms, {:.1}x baseline",
        ms(t),
        ms(t) / ms(base)
    );
    for text in ["parser error", "the"] {
        let list = SessionListQuery { search: Some(text.into()), ..Default::default() };
        let t = median(30, || {
            rt.block_on(fx.store.list_sessions(&list)).unwrap();
        });
        println!(
            "sessions list --search {text:?}: {:.2} ms, {:.1}x baseline",
            ms(t),
            ms(t) / ms(base)
        );
    }
}

fn reply(stack_id: i64, text: &str) -> NewMessage {
    NewMessage { stack_id, role: Some(Role::Assistant), content: text.into(), ..Default::default() }
}

/// How appended rows reach the search indexes.
#[derive(Debug, Clone, Copy)]
enum Indexing {
    /// No index triggers at all: the bare append.
    None,
    /// The store as it is: the catch-up step indexes rows later; the triggers only check the
    /// watermark.
    CatchUp,
    /// Migration 0008's triggers, which indexed every row inside the transaction that wrote it.
    InTransaction,
}

/// Migration 0008's insert triggers, put back for the comparison.
const IN_TRANSACTION_TRIGGERS: [&str; 2] = [
    "CREATE TRIGGER message_fts_insert AFTER INSERT ON chat_history BEGIN \
       INSERT INTO message_fts (rowid, content, reasoning_content) \
       VALUES (new.id, new.content, new.reasoning_content); END",
    "CREATE TRIGGER tool_fts_insert AFTER INSERT ON chat_llm_tools BEGIN \
       INSERT INTO tool_fts (rowid, name, path, command) \
       SELECT id, name, path, command FROM tool_search_doc WHERE id = new.id; END",
];

/// A store with one session, its rows indexed as `indexing` says.
async fn write_store(indexing: Indexing) -> (tempfile::TempDir, Store, i64) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("skald.db"), Arc::new(SystemClock)).await.unwrap();
    if !matches!(indexing, Indexing::CatchUp) {
        for t in ["message_fts_insert", "tool_fts_insert"] {
            sqlx::query(&format!("DROP TRIGGER {t}")).execute(store.pool()).await.unwrap();
        }
    }
    if matches!(indexing, Indexing::InTransaction) {
        for sql in IN_TRANSACTION_TRIGGERS {
            sqlx::query(sql).execute(store.pool()).await.unwrap();
        }
    }
    let stack =
        store.create_session(&NewSession::interactive("bench")).await.unwrap().root_stack_id;
    (dir, store, stack)
}

fn bench_writes(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let mut rng = Rng(0xfeed_beef_0bad_f00d);
    let texts: Vec<String> = (0..1_000).map(|_| message_text(&mut rng, false)).collect();
    let calls: Vec<(&str, String)> = (0..1_000).map(|_| call(&mut rng)).collect();
    let modes = [Indexing::None, Indexing::CatchUp, Indexing::InTransaction];
    let mut g = c.benchmark_group("append_and_index");
    g.sample_size(50);
    for indexing in modes {
        let (_dir, store, stack) = rt.block_on(write_store(indexing));
        let label = format!("{indexing:?}");
        let mut i = 0;
        g.bench_function(format!("append_message_{label}"), |b| {
            b.to_async(&rt).iter(|| {
                i += 1;
                let msg = reply(stack, &texts[i % texts.len()]);
                let store = store.clone();
                async move { store.append_message(&msg).await.unwrap() }
            });
        });
        let mut j = 0;
        g.bench_function(format!("append_assistant_with_call_{label}"), |b| {
            b.to_async(&rt).iter(|| {
                j += 1;
                let msg = reply(stack, &texts[j % texts.len()]);
                let (name, args) = &calls[j % calls.len()];
                let calls = vec![(name.to_string(), args.clone(), None)];
                let store = store.clone();
                async move { store.append_assistant_with_calls(&msg, &calls).await.unwrap() }
            });
        });
    }
    g.finish();

    // The same appends timed back to back on fresh stores, as ratios to the bare append; then
    // what the catch-up costs per row (message + call) after them: one row per step (a search
    // after every reply) and all of them in one step (a background step between turns).
    let mut per_append = Vec::new();
    for indexing in modes {
        let (_dir, store, stack) = rt.block_on(write_store(indexing));
        let mut k = 0;
        let message = median(300, || {
            k += 1;
            let msg = reply(stack, &texts[k % texts.len()]);
            rt.block_on(store.append_message(&msg)).unwrap();
        });
        let with_call = median(300, || {
            k += 1;
            let msg = reply(stack, &texts[k % texts.len()]);
            let (name, args) = &calls[k % calls.len()];
            let calls = vec![(name.to_string(), args.clone(), None)];
            rt.block_on(store.append_assistant_with_calls(&msg, &calls)).unwrap();
        });
        per_append.push((message, with_call));
        if matches!(indexing, Indexing::CatchUp) {
            let one_by_one = median(300, || {
                rt.block_on(store.index_pending(1)).unwrap();
            });
            let append = |n: usize| {
                for k in 0..n {
                    let msg = reply(stack, &texts[k % texts.len()]);
                    let (name, args) = &calls[k % calls.len()];
                    let calls = vec![(name.to_string(), args.clone(), None)];
                    rt.block_on(store.append_assistant_with_calls(&msg, &calls)).unwrap();
                }
            };
            while rt.block_on(store.index_pending(10_000)).unwrap().more {}
            append(1_000);
            let t = Instant::now();
            let step = rt.block_on(store.index_pending(1_000)).unwrap();
            let batch = t.elapsed();
            assert_eq!((step.messages, step.calls, step.more), (1_000, 1_000, false));
            println!(
                "catch-up per message + call: {:.3} ms one row per step, {:.3} ms in a step of \
                 1,000",
                ms(one_by_one),
                ms(batch) / 1_000.0
            );
        }
    }
    let [(m0, c0), (m1, c1), (m2, c2)] = per_append[..] else { unreachable!() };
    println!(
        "append_message: {:.3} ms bare, {:.3} ms with the catch-up's triggers ({:.2}x), \
         {:.3} ms indexed in the transaction ({:.2}x)",
        ms(m0),
        ms(m1),
        ms(m1) / ms(m0),
        ms(m2),
        ms(m2) / ms(m0)
    );
    println!(
        "assistant row + 1 call: {:.3} ms bare, {:.3} ms with the catch-up's triggers ({:.2}x), \
         {:.3} ms indexed in the transaction ({:.2}x)",
        ms(c0),
        ms(c1),
        ms(c1) / ms(c0),
        ms(c2),
        ms(c2) / ms(c0)
    );
}

criterion_group!(benches, bench_search, bench_writes);
criterion_main!(benches);
