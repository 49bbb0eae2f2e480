//! Many sources sending turns at once through `skald serve`'s HTTP API, against the fake
//! provider, on one SQLite file. Every message is stored and answered once and in order, every
//! turn ends with its final answer, and no error reaches a client: no SQLITE_BUSY in an answer,
//! an event or the server's log. The suite runs a short version; the ignored `load_figures`
//! measures turns per second and the engine's overhead per round, against one source alone in
//! the same run (`scripts/runtime-bench.sh load`, figures in docs/benchmarks.md).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use skald_testkit::{FakeLlm, Reply};
use tokio::sync::{Barrier, mpsc};

use super::{Serve, cpu_time, ms, opted_in, percentile};

/// How long one turn may take before the run is called hung (a bound, not a claim).
const TURN_BOUND: Duration = Duration::from_secs(60);

/// The shape of one run: `sources` clients at once, each sending `turns` messages one after the
/// other (the next once the last is answered), each turn `rounds` tool rounds and the answer.
#[derive(Debug, Clone, Copy)]
struct Load {
    sources: usize,
    turns: usize,
    rounds: usize,
}

impl Load {
    fn requests_per_turn(self) -> usize {
        self.rounds + 1
    }
}

/// What one run measured.
struct Figures {
    load: Load,
    elapsed: Duration,
    /// Each turn's wall time (message sent → `turn_ended` received) divided by its requests.
    per_round: Vec<Duration>,
    /// Provider round trips measured by a bare client while the run went on.
    trips: Vec<Duration>,
    /// `resync` events: the socket fell behind and the turns' ends were read from the API.
    resyncs: usize,
    /// CPU time the serve process used during the run.
    cpu: Duration,
}

/// What a source's task hears from the event stream.
enum Heard {
    TurnEnded(Value),
    Resync,
}

fn key(tag: &str, source: usize) -> String {
    format!("{tag}-{source:02}")
}

fn answer(key: &str, turn: usize) -> String {
    format!("{key}: turn {turn} answered")
}

/// Scripts every reply of a run: per source, per turn, `rounds` scratchpad calls then the answer.
fn script(fake: &FakeLlm, tag: &str, load: Load) {
    for s in 0..load.sources {
        let key = key(tag, s);
        for t in 0..load.turns {
            for r in 0..load.rounds {
                let args = json!({ "key": format!("k{r}"), "value": format!("turn {t}") });
                fake.push_for_prompt(
                    &key,
                    Reply::tool_call("update_scratchpad", &args.to_string()),
                );
            }
            fake.push_for_prompt(&key, Reply::text(&answer(&key, t)));
        }
    }
}

/// Routes `turn_ended` events to the source's task; a `resync` goes to every task.
fn route_events(
    serve: &Serve,
    tag: &str,
    load: Load,
) -> HashMap<usize, mpsc::UnboundedReceiver<Heard>> {
    let mut senders = HashMap::new();
    let mut receivers = HashMap::new();
    for s in 0..load.sources {
        let (tx, rx) = mpsc::unbounded_channel();
        senders.insert(key(tag, s).to_lowercase(), tx);
        receivers.insert(s, rx);
    }
    let url = serve.ws_url();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    tokio::spawn(async move {
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let _ = ready_tx.send(());
        while let Some(Ok(msg)) = ws.next().await {
            let Ok(text) = msg.into_text() else { continue };
            let Ok(ev) = serde_json::from_str::<Value>(&text) else { continue };
            match ev["event"]["type"].as_str() {
                Some("turn_ended") => {
                    let source = ev["source"].as_str().unwrap_or_default();
                    if let Some(tx) = senders.get(source) {
                        let _ = tx.send(Heard::TurnEnded(ev["event"]["outcome"].clone()));
                    }
                }
                Some("resync") => {
                    for tx in senders.values() {
                        let _ = tx.send(Heard::Resync);
                    }
                }
                Some("error") => panic!("an error event reached a client: {ev}"),
                _ => {}
            }
        }
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    receivers
}

/// How many turns of the source's session ended, and the newest end (read from the API).
async fn ends(serve: &Serve, session_id: i64) -> Vec<Value> {
    let (status, detail) = serve.call("session_detail", json!({ "session_id": session_id })).await;
    assert_eq!(status, 200, "{detail}");
    detail["turn_ends"].as_array().cloned().unwrap_or_default()
}

/// One source: sends its turns one after the other, each timed until its end is heard.
async fn source(
    serve: Arc<Serve>,
    tag: String,
    s: usize,
    load: Load,
    mut heard: mpsc::UnboundedReceiver<Heard>,
    start: Arc<Barrier>,
) -> (Vec<Duration>, usize) {
    let key = key(&tag, s);
    let mut per_round = Vec::new();
    let mut resyncs = 0;
    start.wait().await;
    for t in 0..load.turns {
        let started = Instant::now();
        let body = json!({ "source": key.to_lowercase(), "text": format!("{key} turn {t}") });
        let (status, sent) = serve.call("send_message", body).await;
        assert_eq!(status, 200, "{key} turn {t}: {sent}");
        let session_id = sent["session_id"].as_i64().unwrap();
        let outcome = loop {
            let next = tokio::time::timeout(TURN_BOUND, heard.recv()).await;
            match next.unwrap_or_else(|_| panic!("{key} turn {t}: no end in {TURN_BOUND:?}")) {
                Some(Heard::TurnEnded(outcome)) => break outcome,
                Some(Heard::Resync) => {
                    resyncs += 1;
                    let ends = ends(&serve, session_id).await;
                    if ends.len() > t {
                        break ends[t]["outcome"].clone();
                    }
                }
                None => panic!("{key}: the event stream ended"),
            }
        };
        let took = started.elapsed();
        assert_eq!(outcome["kind"], "final", "{key} turn {t} did not end with its answer");
        per_round.push(took / load.requests_per_turn() as u32);
    }
    (per_round, resyncs)
}

/// Every message stored once and answered once, in order; every turn ended final.
async fn check_nothing_lost(serve: &Serve, tag: &str, load: Load) {
    let body = json!({ "query": { "source": "", "search": null, "page": 1, "per_page": 500 } });
    let (status, list) = serve.call("list_sessions", body).await;
    assert_eq!(status, 200, "{list}");
    for s in 0..load.sources {
        let key = key(tag, s);
        let mine: Vec<i64> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["source"] == key.to_lowercase())
            .filter_map(|i| i["id"].as_i64())
            .collect();
        assert_eq!(mine.len(), 1, "{key}: one session: {mine:?}");
        let (status, detail) = serve.call("session_detail", json!({ "session_id": mine[0] })).await;
        assert_eq!(status, 200, "{detail}");
        let texts = |kind: &str| -> Vec<String> {
            detail["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["kind"] == kind && m["depth"] == 0)
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        };
        let sent: Vec<String> = (0..load.turns).map(|t| format!("{key} turn {t}")).collect();
        let answers: Vec<String> = (0..load.turns).map(|t| answer(&key, t)).collect();
        assert_eq!(texts("user"), sent, "{key}: every message stored once, in order");
        assert_eq!(texts("assistant"), answers, "{key}: every message answered once, in order");
        let ends = detail["turn_ends"].as_array().unwrap();
        assert_eq!(ends.len(), load.turns, "{key}: {ends:?}");
        assert!(ends.iter().all(|e| e["outcome"]["kind"] == "final"), "{key}: {ends:?}");
        let pending = detail["pending_inputs"].as_array().map_or(0, Vec::len);
        assert_eq!(pending, 0, "{key}: input left unread");
    }
}

/// A request the engine sent, its first message keyed for the probe, posted with a bare client
/// and its streamed reply read to the end: the provider's own time for one round.
async fn provider_trip(http: &reqwest::Client, fake: &FakeLlm, body: &Value) -> Duration {
    fake.push_for_prompt(
        "RTT-PROBE",
        Reply::tool_call("update_scratchpad", r#"{"key":"k","value":"v"}"#),
    );
    let started = Instant::now();
    let url = format!("{}/chat/completions", fake.base_url());
    let resp = http.post(url).json(body).send().await.unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let text = resp.text().await.unwrap();
    assert!(text.contains("[DONE]"));
    started.elapsed()
}

/// A mid-turn request of the run (history and a tool result) whose first message is replaced
/// by the probe's key, so the probe's replies never take a source's.
fn probe_body(fake: &FakeLlm, tag: &str) -> Option<Value> {
    let requests = fake.requests();
    let sample = requests.iter().rev().find(|r| {
        let messages = r.body["messages"].as_array().cloned().unwrap_or_default();
        r.status == 200
            && messages
                .iter()
                .rev()
                .find(|m| m["role"] != "system")
                .is_some_and(|m| m["role"] == "tool")
            && messages.iter().any(|m| m["content"].as_str().is_some_and(|c| c.contains(tag)))
    })?;
    let mut body = sample.body.clone();
    let messages = body["messages"].as_array_mut()?;
    let first = messages.iter_mut().find(|m| m["role"] == "user")?;
    first["content"] = Value::from("RTT-PROBE");
    Some(body)
}

/// Runs `load` against `serve`, a probe of the provider's round trip running alongside once the
/// first requests give it a body to send.
async fn run(serve: &Arc<Serve>, fake: &Arc<FakeLlm>, tag: &str, load: Load) -> Figures {
    script(fake, tag, load);
    let mut heard = route_events(serve, tag, load);
    let start = Arc::new(Barrier::new(load.sources + 1));
    let tasks: Vec<_> = (0..load.sources)
        .map(|s| {
            let rx = heard.remove(&s).unwrap();
            tokio::spawn(source(serve.clone(), tag.to_string(), s, load, rx, start.clone()))
        })
        .collect();
    let done = Arc::new(AtomicBool::new(false));
    let probe = {
        let (fake, done, tag) = (fake.clone(), done.clone(), tag.to_string());
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut trips = Vec::new();
            let mut body = None;
            while !done.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(25)).await;
                if body.is_none() {
                    body = probe_body(&fake, &tag);
                }
                if let Some(b) = &body {
                    trips.push(provider_trip(&http, &fake, b).await);
                }
            }
            trips
        })
    };
    let cpu_before = cpu_time(serve.pid());
    start.wait().await;
    let started = Instant::now();
    let mut per_round = Vec::new();
    let mut resyncs = 0;
    for t in tasks {
        let (rounds, r) = t.await.unwrap();
        per_round.extend(rounds);
        resyncs += r;
    }
    let elapsed = started.elapsed();
    let cpu = cpu_time(serve.pid()) - cpu_before;
    done.store(true, Ordering::SeqCst);
    let trips = probe.await.unwrap();
    check_nothing_lost(serve, tag, load).await;
    Figures { load, elapsed, per_round, trips, resyncs, cpu }
}

/// Nothing in the server's log says the database was busy or locked.
fn assert_no_busy(serve: &Serve) {
    let log = serve.stderr().to_lowercase();
    for needle in ["database is locked", "sqlite_busy", "(code: 5)", "(code: 517)", "(code: 261)"] {
        assert!(!log.contains(needle), "the server logged {needle:?}:\n{log}");
    }
}

struct Rig {
    _tmp: tempfile::TempDir,
    fake: Arc<FakeLlm>,
    serve: Arc<Serve>,
}

async fn rig() -> Rig {
    let fake = Arc::new(FakeLlm::start().await.unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let serve =
        Serve::spawn(&root.join("data"), &root, &fake, &root.join("serve.log"), &[]).ready();
    Rig { _tmp: tmp, fake, serve: Arc::new(serve) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sources_sending_at_once_through_serve_lose_nothing_and_see_no_busy() {
    let r = rig().await;
    let load = Load { sources: 50, turns: 2, rounds: 1 };
    let figures = run(&r.serve, &r.fake, "SRC", load).await;
    assert_eq!(figures.per_round.len(), 100);
    assert_no_busy(&r.serve);
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn report(label: &str, f: &Figures, idle_trip: Duration) -> Duration {
    let turns = f.per_round.len();
    let trip = percentile(&f.trips, 50.0);
    let over = |p: f64| percentile(&f.per_round, p).saturating_sub(trip);
    println!(
        "{label}: {} sources x {} turns x {} requests: {turns} turns in {:.2} s = {:.1} turns/s \
         ({:.1} requests/s); per round p50 {:.2} ms, p99 {:.2} ms; provider round trip p50 \
         {:.2} ms under this load ({} probes), {:.2} ms idle; engine overhead per round p50 \
         {:.2} ms, p99 {:.2} ms; serve CPU {:.2} ms per round ({:.0}% of a core); resyncs {}",
        f.load.sources,
        f.load.turns,
        f.load.requests_per_turn(),
        f.elapsed.as_secs_f64(),
        turns as f64 / f.elapsed.as_secs_f64(),
        (turns * f.load.requests_per_turn()) as f64 / f.elapsed.as_secs_f64(),
        ms(percentile(&f.per_round, 50.0)),
        ms(percentile(&f.per_round, 99.0)),
        ms(trip),
        f.trips.len(),
        ms(idle_trip),
        ms(over(50.0)),
        ms(over(99.0)),
        ms(f.cpu) / (turns * f.load.requests_per_turn()) as f64,
        100.0 * f.cpu.as_secs_f64() / f.elapsed.as_secs_f64(),
        f.resyncs,
    );
    over(50.0)
}

/// The figures: one source alone (the baseline), then `LOAD_SOURCES` (50) at once, on the same
/// serve in the same run. `LOAD_TURNS` (10) turns per source of `LOAD_ROUNDS` (3) tool rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: scripts/runtime-bench.sh load"]
async fn load_figures() {
    if !opted_in("SKALD_BENCH", "load_figures") {
        return;
    }
    let r = rig().await;
    let turns = env_usize("LOAD_TURNS", 10);
    let rounds = env_usize("LOAD_ROUNDS", 3);
    let sources = env_usize("LOAD_SOURCES", 50);
    let alone = run(&r.serve, &r.fake, "ONE", Load { sources: 1, turns: turns * 5, rounds }).await;
    let many = run(&r.serve, &r.fake, "MANY", Load { sources, turns, rounds }).await;
    let http = reqwest::Client::new();
    let body = probe_body(&r.fake, "MANY").expect("a mid-turn request");
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(provider_trip(&http, &r.fake, &body).await);
    }
    let idle = percentile(&idle, 50.0);
    let base = report("one source", &alone, idle);
    let loaded = report(&format!("{sources} sources"), &many, idle);
    println!(
        "ratios {sources} sources / one: turns/s {:.1}x, engine overhead per round p50 {:.1}x",
        (many.per_round.len() as f64 / many.elapsed.as_secs_f64())
            / (alone.per_round.len() as f64 / alone.elapsed.as_secs_f64()),
        loaded.as_secs_f64() / base.as_secs_f64().max(1e-9)
    );
    assert_no_busy(&r.serve);
}
