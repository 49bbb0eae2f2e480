//! Builds a long session for the UI scale benchmark (`scripts/ui-scale.sh`) and the long-session
//! browser test: `TURNS` user turns of `ROUNDS` tool rounds each, then a final answer per turn
//! (250 × 20 = 5,500 messages and 5,000 tool calls).
//!
//! `--via engine` (the default) runs every turn through the real engine against the strict fake
//! provider (skald-testkit) on loopback, at full speed: each round is a `read_file` call the
//! engine really runs. `--via store` writes the same shape of rows through the store API, for
//! sizes the engine would take too long to build (it has no model latency to skip, but every
//! round still builds a context, streams a reply and runs a tool).
//!
//! Usage: cargo run --release -p skald-core --example seed_long_session -- \
//!          --data-dir DIR [--turns 250] [--rounds 20] [--via engine|store] [--source web]
//! Prints `session <id> messages <n> calls <m> seconds <s>`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/support/mod.rs"]
mod support;

use std::time::Instant;

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::TurnOutcome;
use skald_protocol::ToolStatus;
use skald_store::Store;
use skald_store::repo::history::{NewMessage, Role};
use skald_testkit::{FakeLlm, Reply};

struct Args {
    data_dir: std::path::PathBuf,
    turns: usize,
    rounds: usize,
    via_store: bool,
    source: String,
}

fn args() -> Args {
    let mut a = Args {
        data_dir: std::path::PathBuf::new(),
        turns: 250,
        rounds: 20,
        via_store: false,
        source: "web".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--data-dir" => a.data_dir = value.into(),
            "--turns" => a.turns = value.parse().expect("--turns N"),
            "--rounds" => a.rounds = value.parse().expect("--rounds N"),
            "--via" => a.via_store = value == "store",
            "--source" => a.source = value,
            other => panic!("unknown flag {other}"),
        }
    }
    assert!(!a.data_dir.as_os_str().is_empty(), "--data-dir DIR is required");
    a
}

/// What the model answers at the end of turn `t`: a few lines of Markdown, like a real answer.
fn answer(t: usize) -> String {
    format!(
        "Answer {t}: I read the notes **{t}** times.\n\n- the first point of turn {t}\n- the second \
         point\n\n```rust\nfn turn_{t}() -> usize {{ {t} }}\n```\n"
    )
}

const NOTES: &str = "Notes for the long session: a paragraph the agent reads again and again, \
    long enough to look like a small file, short enough to keep the database light.\n";

#[tokio::main]
async fn main() {
    let a = args();
    std::fs::create_dir_all(&a.data_dir).unwrap();
    let started = Instant::now();
    let fake = FakeLlm::start().await.unwrap();
    // Headroom for the rounds of one turn; the history's count cap keeps each request small.
    let config = format!("llm:\n  max_tool_rounds: {}\n", a.rounds + 5);
    if !a.data_dir.join("config.yml").exists() {
        std::fs::write(a.data_dir.join("config.yml"), config).unwrap();
    }
    let engine = support::engine_on(a.data_dir.clone(), &fake).await;
    let work = tempfile::tempdir().unwrap();
    let notes = work.path().join("notes.txt");
    std::fs::write(&notes, NOTES).unwrap();
    let opts = ChatOptions { workdir: Some(work.path().to_path_buf()), ..Default::default() };
    let session = engine.active_session(&a.source, &opts).await.unwrap();
    if a.via_store {
        let store = Store::open_in_dir(&a.data_dir).await.unwrap();
        seed_rows(&store, session, &a, &notes.display().to_string()).await;
    } else {
        let read = json!({"path": notes.display().to_string()}).to_string();
        for t in 1..=a.turns {
            for _ in 0..a.rounds {
                fake.push(Reply::tool_call("read_file", &read));
            }
            fake.push(Reply::text(&answer(t)));
            let receipt = engine
                .send_message(&a.source, &format!("Question {t}"), opts.clone())
                .await
                .unwrap();
            let outcome = engine.wait_turn(receipt.session_id).await.expect("a turn");
            assert!(matches!(outcome, TurnOutcome::Final { .. }), "turn {t}: {outcome:?}");
        }
    }
    let messages = a.turns * (a.rounds + 2);
    println!(
        "session {session} messages {messages} calls {} seconds {:.1}",
        a.turns * a.rounds,
        started.elapsed().as_secs_f64()
    );
}

/// The rows the engine would leave, written through the store: per turn a user message, `rounds`
/// assistant rows with one finished `read_file` call each, and the answer.
async fn seed_rows(store: &Store, session: i64, a: &Args, path: &str) {
    let stack_id = store.root_frame(session).await.unwrap().id;
    let args = json!({"path": path}).to_string();
    let msg = |role: Role, content: String| NewMessage {
        stack_id,
        role: Some(role),
        content,
        ..Default::default()
    };
    for t in 1..=a.turns {
        store.append_message(&msg(Role::User, format!("Question {t}"))).await.unwrap();
        for r in 0..a.rounds {
            let call = ("read_file".to_string(), args.clone(), Some(format!("call_{t}_{r}")));
            let (_, ids) = store
                .append_assistant_with_calls(&msg(Role::Assistant, String::new()), &[call])
                .await
                .unwrap();
            store.set_tool_status(ids[0], ToolStatus::Running, None).await.unwrap();
            store.set_tool_status(ids[0], ToolStatus::Done, Some(NOTES)).await.unwrap();
        }
        store.append_message(&msg(Role::Assistant, answer(t))).await.unwrap();
    }
}
