//! Events every process sees, over `skald serve`: a WebSocket open on serve follows a turn that a
//! `skald chat` in another process runs on the same data dir, and a socket that reconnects with
//! `?since=` gets what it missed, once, without a resync.

use std::path::Path;
use std::process::Command;

use futures::StreamExt;
use serde_json::{Value, json};
use skald_testkit::{FakeLlm, HANG_GUARD, Reply};

use super::serve_chat::{Serve, Ws, start};

fn with_fake(c: &mut Command, fake: &FakeLlm) {
    c.env("SKALD_LLM_BASE_URL", fake.base_url())
        .env("SKALD_LLM_MODEL", "fake-model")
        .env_remove("SKALD_DATA_DIR")
        .env_remove("SKALD_LLM_API_KEY");
}

/// A WebSocket on `serve`, resuming after `since` when given.
async fn connect(serve: &Serve, since: Option<i64>) -> Ws {
    let since = since.map(|s| format!("&since={s}")).unwrap_or_default();
    let url =
        format!("{}/api/ws?token={}{since}", serve.base.replace("http://", "ws://"), serve.token);
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// `skald chat --source web MESSAGE` in its own process, run to its end; asserts exit 0.
fn chat(data: &Path, work: &Path, fake: &FakeLlm, message: &str) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skald"));
    c.args(["--data-dir", data.to_str().unwrap(), "chat", "--source", "web"])
        .args(["--workdir", work.to_str().unwrap(), message])
        .current_dir(work);
    with_fake(&mut c, fake);
    let out = c.output().unwrap();
    assert!(out.status.success(), "skald chat failed: {}", String::from_utf8_lossy(&out.stderr));
}

async fn next(ws: &mut Ws) -> Value {
    loop {
        let msg = tokio::time::timeout(HANG_GUARD, ws.next())
            .await
            .expect("no event")
            .expect("the socket closed")
            .unwrap();
        let Ok(text) = msg.into_text() else { continue };
        let ev: Value = serde_json::from_str(&text).unwrap();
        // The data dir's files are watched: a reload notice may interleave, and is not what
        // this test is about.
        if ev["event"]["type"] != "config_reloaded" {
            return ev;
        }
    }
}

/// Events up to and including the next `turn_ended`.
async fn until_turn_ended(ws: &mut Ws) -> Vec<Value> {
    let mut got = Vec::new();
    loop {
        let ev = next(ws).await;
        let ended = ev["event"]["type"] == "turn_ended";
        got.push(ev);
        if ended {
            return got;
        }
    }
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["event"]["type"].as_str().unwrap()).collect()
}

fn seqs(events: &[Value]) -> Vec<i64> {
    events.iter().map(|e| e["seq"].as_i64().expect("every event here has a sequence")).collect()
}

/// One command call, then the answer.
fn script(fake: &FakeLlm, answer: &str) {
    fake.push(Reply::tool_call("execute_cmd", &json!({"command": "echo working"}).to_string()));
    fake.push(Reply::text(answer));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_socket_on_serve_follows_a_turn_run_by_skald_chat_and_resumes_from_its_sequence() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (data, work) = (dir.path().join("data"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let serve = start(&data, &work, &fake);
    // Commands run without asking: the terminal's turn never parks.
    let rule = json!({"id": null, "input": {"group_id": null, "tool_pattern": "execute_cmd",
        "path_pattern": null, "agent_id": null, "source": null, "action": "allow", "priority": 1,
        "note": "test"}});
    let saved = serve.call("save_approval_rule", rule).await;
    assert_eq!(saved["tool_pattern"], "execute_cmd", "{saved}");

    let mut ws = connect(&serve, None).await;
    let hello = next(&mut ws).await;
    assert_eq!(hello["event"]["type"], "subscribed");
    let start_seq = hello["seq"].as_i64().unwrap();

    // A turn in a terminal, another process: serve's socket sees it all, in order.
    script(&fake, "Worked from the terminal.");
    chat(&data, &work, &fake, "work from the terminal");
    let live = until_turn_ended(&mut ws).await;
    let k = kinds(&live);
    let at = |kind: &str| {
        k.iter().position(|x| *x == kind).unwrap_or_else(|| panic!("no {kind}: {k:?}"))
    };
    assert!(at("user_message") < at("tool_start"), "{k:?}");
    assert!(at("tool_start") < at("tool_done"), "{k:?}");
    assert!(at("tool_done") < at("done"), "{k:?}");
    assert!(!k.contains(&"token_delta"), "streamed deltas stay in the process that runs the turn");
    let user = &live[at("user_message")];
    assert_eq!(user["event"]["content"], "work from the terminal");
    assert_eq!(user["source"], "web");
    assert_eq!(live[at("done")]["event"]["content"], "Worked from the terminal.");
    let numbers = seqs(&live);
    assert_eq!(numbers, (start_seq + 1..=start_seq + live.len() as i64).collect::<Vec<_>>());
    let last_seen = *numbers.last().unwrap();
    // `turn_running: false` closes the turn.
    let closing = next(&mut ws).await;
    assert_eq!(closing["event"], json!({"type": "turn_running", "running": false}));
    let last_seen = closing["seq"].as_i64().unwrap().max(last_seen);

    // The socket drops; a second turn runs while it is away.
    drop(ws);
    script(&fake, "Done while you were away.");
    chat(&data, &work, &fake, "work while the page is away");

    // Back from the last sequence it saw: the missed turn, once, and no resync.
    let mut back = connect(&serve, Some(last_seen)).await;
    let hello = next(&mut back).await;
    assert_eq!(
        (hello["event"]["type"].as_str(), hello["seq"].as_i64()),
        (Some("subscribed"), Some(last_seen))
    );
    let missed = until_turn_ended(&mut back).await;
    let k = kinds(&missed);
    assert!(!k.contains(&"resync"), "{k:?}");
    assert!(
        k.contains(&"user_message") && k.contains(&"tool_done") && k.contains(&"done"),
        "{k:?}"
    );
    let done = missed.iter().find(|e| e["event"]["type"] == "done").unwrap();
    assert_eq!(done["event"]["content"], "Done while you were away.");
    assert_eq!(
        seqs(&missed),
        (last_seen + 1..=last_seen + missed.len() as i64).collect::<Vec<_>>()
    );

    // A socket whose sequence this data dir never gave out reloads instead.
    let mut stranger = connect(&serve, Some(1_000_000)).await;
    assert_eq!(next(&mut stranger).await["event"]["type"], "subscribed");
    assert_eq!(next(&mut stranger).await["event"]["type"], "resync");
}
