//! The chat and approval flow over `skald serve`'s HTTP API, with the strict fake provider:
//! send a message, stream events over the WebSocket, approve a parked write over HTTP.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use skald_testkit::{FakeLlm, HANG_GUARD, Reply};

/// `skald serve` on the fake provider, killed when dropped.
pub(super) struct Serve {
    child: Child,
    pub(super) base: String,
    pub(super) token: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn start(data: &std::path::Path, work: &std::path::Path, fake: &FakeLlm) -> Serve {
    start_with(data, work, fake, &[])
}

/// `start` with more environment variables for the server.
pub(super) fn start_with(
    data: &std::path::Path,
    work: &std::path::Path,
    fake: &FakeLlm,
    env: &[(&str, &str)],
) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skald"))
        .envs(env.iter().copied())
        .args(["--data-dir", data.to_str().unwrap(), "serve", "--port", "0"])
        .current_dir(work)
        .env("SKALD_UI_DIR", work)
        .env("SKALD_LLM_BASE_URL", fake.base_url())
        .env("SKALD_LLM_MODEL", "fake-model")
        .env_remove("SKALD_DATA_DIR")
        .env_remove("SKALD_LLM_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let rest = line.trim().strip_prefix("listening on ").unwrap().to_string();
    let (base, token) = rest.split_once("/?token=").unwrap();
    Serve { child, base: base.to_string(), token: token.to_string() }
}

impl Serve {
    /// `POST /api/<op>` with `body`; the JSON answer.
    pub(super) async fn call(&self, op: &str, body: Value) -> Value {
        let url = format!("{}/api/{op}", self.base);
        let sent = reqwest::Client::new().post(url).bearer_auth(&self.token).json(&body).send();
        sent.await.unwrap().json().await.unwrap()
    }

    /// The next event over `ws` whose type is `kind`.
    async fn next_event(ws: &mut Ws, kind: &str) -> Value {
        let found = async {
            loop {
                let msg = ws.next().await.unwrap().unwrap();
                let Ok(text) = msg.into_text() else { continue };
                let ev: Value = serde_json::from_str(&text).unwrap();
                if ev["event"]["type"] == kind {
                    return ev;
                }
            }
        };
        tokio::time::timeout(HANG_GUARD, found).await.expect("the event never came")
    }
}

pub(super) type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_turn_and_an_approval_over_http() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let s = start(&dir.path().join("data"), &work, &fake);
    let http = reqwest::Client::new();
    let api = |op: &str| format!("{}/api/{op}", s.base);

    let ws_url = format!("{}/api/ws?token={}", s.base.replace("http://", "ws://"), s.token);
    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
    // Token deltas live in this process only (never replayed from the outbox): the turn starts
    // once the server says the socket is subscribed, or its first deltas may go before it is.
    let hello = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap();
    let hello: Value = serde_json::from_str(&hello.unwrap().unwrap().into_text().unwrap()).unwrap();
    assert_eq!(hello["event"]["type"], "subscribed", "{hello}");

    fake.push(Reply::text("Hello from the fake model, streamed in small pieces."));
    let sent = s.call("send_message", json!({ "source": "web", "text": "hi" })).await;
    let session = sent["session_id"].as_i64().unwrap();
    assert_eq!(sent["steered"], false);

    let mut kinds = Vec::new();
    let mut streamed = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !kinds.contains(&"done".to_string()) {
        assert!(Instant::now() < deadline, "no done event: {kinds:?}");
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let Ok(text) = msg.into_text() else { continue };
        let ev: Value = serde_json::from_str(&text).unwrap();
        let kind = ev["event"]["type"].as_str().unwrap_or("").to_string();
        if kind == "token_delta" {
            streamed.push_str(ev["event"]["delta"].as_str().unwrap());
        }
        kinds.push(kind);
    }
    assert_eq!(streamed, "Hello from the fake model, streamed in small pieces.");
    let first_user = kinds.iter().position(|k| k == "user_message").unwrap();
    assert!(first_user < kinds.iter().position(|k| k == "token_delta").unwrap(), "{kinds:?}");

    // A write parks; the turn waits for the decision (serve never ends a turn parked).
    fake.push(Reply::tool_call("write_file", r#"{"path":"note.txt","content":"ok\n"}"#));
    fake.push(Reply::text("Wrote note.txt."));
    http.post(api("send_message"))
        .bearer_auth(&s.token)
        .json(&json!({ "source": "web", "text": "write a note" }))
        .send()
        .await
        .unwrap();
    let item = loop {
        let inbox: Value = http
            .post(api("inbox"))
            .bearer_auth(&s.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if let Some(item) = inbox["items"].as_array().unwrap().first() {
            break item.clone();
        }
        assert!(Instant::now() < deadline + Duration::from_secs(10), "nothing parked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(item["kind"], "write");
    assert_eq!(item["diff"]["kind"], "create");
    let running: Value = http
        .post(api("turn_running"))
        .bearer_auth(&s.token)
        .json(&json!({ "session_id": session }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Parked on a person, the turn holds nothing: no lease, no task slot, no polling.
    assert_eq!(running["running"], false, "a parked turn holds nothing while it waits");
    let id = item["tool_call_id"].as_i64().unwrap();
    let decision: Value = http
        .post(api("decide"))
        .bearer_auth(&s.token)
        .json(&json!({
            "tool_call_id": id,
            "input": { "approved": true, "note": null, "bypass": null }
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (decision["approved"].as_bool(), decision["decided_by"].as_str()),
        (Some(true), Some("web"))
    );
    // The approved write runs and the model's last reply ends the turn.
    let done = tokio::time::timeout(HANG_GUARD, async {
        loop {
            let msg = ws.next().await.unwrap().unwrap();
            let Ok(text) = msg.into_text() else { continue };
            let ev: Value = serde_json::from_str(&text).unwrap();
            if ev["event"]["type"] == "done" {
                return ev["event"]["content"].clone();
            }
        }
    })
    .await
    .expect("the approved turn never finished");
    assert_eq!(done, "Wrote note.txt.");
    assert_eq!(std::fs::read_to_string(work.join("note.txt")).unwrap(), "ok\n");
    // Deciding again the other way is a conflict.
    let again = http
        .post(api("decide"))
        .bearer_auth(&s.token)
        .json(&json!({
            "tool_call_id": id,
            "input": { "approved": false, "note": "no", "bypass": null }
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 409);
}

/// SIGTERM (a service manager, `kill`) shuts `serve` down like the desktop's Quit: the running
/// turn is stopped, records that it ended `cancelled`, and the process exits 0.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_stops_the_running_turn_records_it_cancelled_and_exits_0() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut s = start(&data, &work, &fake);
    let ws_url = format!("{}/api/ws?token={}", s.base.replace("http://", "ws://"), s.token);
    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();

    // The model starts streaming, then goes quiet: only a stop ends this turn.
    fake.push(Reply::HangMidStream { partial: "Let me think about".into() });
    let sent = s.call("send_message", json!({ "source": "web", "text": "a hard question" })).await;
    let session = sent["session_id"].as_i64().unwrap();
    Serve::next_event(&mut ws, "token_delta").await;

    let term = Command::new("kill").args(["-TERM", &s.child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "serve did not exit after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(0), "{status:?}");

    let engine = reader(data).await;
    let ends = engine.session_detail(session).await.unwrap().turn_ends;
    assert_eq!(
        ends.last().map(|t| &t.outcome),
        Some(&skald_protocol::TurnEnd::Cancelled {}),
        "{ends:?}"
    );
    assert!(!engine.is_running(session).await.unwrap(), "the session was released");
}

/// A `skald chat` killed mid-turn leaves its session held by a process that is gone; the next
/// `skald serve` continues that turn by itself and the model's answer ends it.
#[tokio::test(flavor = "multi_thread")]
async fn serve_continues_a_turn_a_killed_chat_left() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = super::chat::dirs();
    fake.push(Reply::Stall { ms: 60_000, then_hang: true });
    fake.push(Reply::text("Here is the answer."));
    let mut chat = super::chat::cli(&fake, &data);
    chat.args(["chat", "--workdir"]).arg(&work).arg("a question");
    chat.stdout(Stdio::null()).stderr(Stdio::null());
    let mut chat = chat.spawn().unwrap();
    fake.wait_in_flight(1).await;
    chat.start_kill().unwrap();
    tokio::time::timeout(HANG_GUARD, chat.wait()).await.unwrap().unwrap();
    fake.wait_in_flight(0).await;

    let _serve = start(&data, &work, &fake);
    let engine = reader(data).await;
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let ends = engine.session_detail(1).await.unwrap().turn_ends;
        if let Some(end) = ends.last() {
            assert!(matches!(end.outcome, skald_protocol::TurnEnd::Final { .. }), "{ends:?}");
            break;
        }
        assert!(Instant::now() < deadline, "serve never continued the turn");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let asked = fake.requests().last().unwrap().body["messages"].to_string();
    assert!(asked.contains("a question"), "{asked}");
}

/// An engine of the test's own on `data`, to read what `serve` stored.
async fn reader(data: std::path::PathBuf) -> skald_core::Engine {
    skald_core::Engine::open(skald_core::EngineOptions {
        data_dir: Some(data),
        env: Some(skald_core::config::EnvOverrides::default()),
        secrets: Some(std::sync::Arc::new(skald_core::config::MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Waits (bounded) until no turn of `session` runs.
async fn turn_over(s: &Serve, session: i64) {
    let deadline = Instant::now() + HANG_GUARD;
    while s.call("turn_running", json!({ "session_id": session })).await["running"] == true {
        assert!(Instant::now() < deadline, "the turn never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A bug that panics inside a turn (injected by the crash-test variable) ends that turn as
/// failed, recorded and said; the server keeps serving the source: its next message runs a turn
/// in the same session.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_that_panics_is_recorded_failed_and_the_source_keeps_being_served() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let s = start_with(
        &dir.path().join("data"),
        &work,
        &fake,
        &[("SKALD_PANIC_ON_PROMPT", "BOOM-PANIC")],
    );
    let sent = s.call("send_message", json!({ "source": "web", "text": "BOOM-PANIC: trip" })).await;
    let session = sent["session_id"].as_i64().expect("a session");
    turn_over(&s, session).await;
    let detail = s.call("session_detail", json!({ "session_id": session })).await;
    let last = detail["turn_ends"].as_array().and_then(|e| e.last()).cloned().unwrap();
    assert_eq!(last["outcome"]["kind"], "failed", "{last}");
    let reason = last["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("internal error") && reason.contains("injected"), "{reason}");

    fake.push(Reply::text("still here"));
    let again = s.call("send_message", json!({ "source": "web", "text": "are you there?" })).await;
    assert_eq!(again["session_id"].as_i64(), Some(session));
    assert_eq!(again["steered"], false, "a new turn, not a steer into a dead one");
    turn_over(&s, session).await;
    let detail = s.call("session_detail", json!({ "session_id": session })).await;
    assert!(detail.to_string().contains("still here"), "{detail}");
}
