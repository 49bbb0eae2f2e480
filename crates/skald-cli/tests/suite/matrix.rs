//! The reliability matrix's rows measured on the real `skald` binary (`docs/reliability.md`):
//! hostile `config.yml` files at start-up, decisions that must be refused, and the `serve` API
//! without the right token or from a foreign page. Each test records what the person saw, what
//! reached the model and what was stored, and fails unless the row holds.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use skald_testkit::matrix::{Row, excerpt};
use skald_testkit::{FakeLlm, Reply};
use tokio::process::Command;

use super::serve::{Fixture, Server, refused_status, ws_request};

/// A data dir and a working dir in one temp root, and the fake provider as the env model.
struct Bench {
    root: tempfile::TempDir,
    fake: FakeLlm,
}

impl Bench {
    async fn new() -> Bench {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("data")).unwrap();
        std::fs::create_dir_all(root.path().join("work")).unwrap();
        Bench { root, fake: FakeLlm::start().await.unwrap() }
    }

    fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    fn work(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path().join("work")).unwrap()
    }

    fn config(&self) -> PathBuf {
        self.data().join("config.yml")
    }

    /// Runs `skald --data-dir DATA args…` with the fake as its model and nothing from the
    /// user's environment; (exit code, stdout, stderr).
    async fn skald(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skald"));
        cmd.env_remove("SKALD_DATA_DIR")
            .env_remove("SKALD_LLM_API_KEY")
            .env("SKALD_LLM_BASE_URL", self.fake.base_url())
            .env("SKALD_LLM_MODEL", "fake-model")
            .arg("--data-dir")
            .arg(self.data())
            .args(args)
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
            .await
            .expect("skald did not finish")
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn row(&self, id: &str) -> Row {
        let mut row = Row::new(id);
        row.redact(self.data().display().to_string(), "<data>")
            .redact(self.work().display().to_string(), "<workdir>");
        row
    }

    /// `skald chat` in the working dir whose model calls `tool` once; the call parks (exit 3).
    /// Returns the waiting call's id. (A test that resumes scripts the answer first.)
    async fn parked_call(&self, tool: &str, args: Value) -> String {
        self.fake.push(Reply::tool_call(tool, &args.to_string()));
        let work = self.work();
        let (code, out, err) =
            self.skald(&["chat", "--workdir", work.to_str().unwrap(), "go"]).await;
        assert_eq!(code, 3, "the call should wait for a decision\n{out}{err}");
        let inbox = self.inbox().await;
        inbox["items"][0]["tool_call_id"].as_i64().unwrap().to_string()
    }

    async fn inbox(&self) -> Value {
        let (code, out, err) = self.skald(&["--json", "inbox"]).await;
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    }
}

// ---- config.yml at start-up -------------------------------------------------------------------

/// Starts `skald chat` on a data dir whose `config.yml` is `text`: the command must stop with
/// an error naming each of `must_name`, make no model request, and leave the file as it was.
async fn hostile_config(id: &str, text: &[u8], must_name: &[&str], must_not_show: &[&str]) {
    let b = Bench::new().await;
    std::fs::write(b.config(), text).unwrap();
    let (code, out, err) = b.skald(&["chat", "hello"]).await;
    let after = std::fs::read(b.config()).unwrap();
    let shown = format!("{out}{err}");
    let leaked: Vec<&str> = must_not_show.iter().copied().filter(|s| shown.contains(s)).collect();
    let mut row = b.row(id);
    row.user_sees(format!("exit {code}, {}", excerpt(err.trim(), 200)))
        .model_sees(format!(
            "{} (the model is never called on a configuration that did not load)",
            match b.fake.requests().len() {
                0 => "no request".to_string(),
                n => format!("{n} requests"),
            }
        ))
        .stored(format!(
            "config.yml byte for byte as written: {}",
            if after == text { "yes" } else { "no" }
        ))
        .lost_if(after != text, "the person's config.yml")
        .lost_if(!leaked.is_empty(), "the secret, now shown on the screen");
    if code == 0 || !b.fake.requests().is_empty() {
        row.recovered_if(false, "the command ran on a configuration that should not load");
    } else {
        row.clear_error(&err, must_name);
    }
    row.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_with_a_yaml_syntax_error() {
    // A quote never closed: no value can be read past line 4.
    let text = b"llm:\n  clients:\n    - name: main\n      model: \"gpt\n      base_url: x\n";
    hostile_config("config.syntax-error", text, &["config.yml:", "quote"], &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_with_a_value_of_the_wrong_type() {
    let text = b"llm:\n  max_tool_rounds: lots\n";
    hostile_config("config.wrong-type", text, &["config.yml:2", "max_tool_rounds"], &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_with_an_unknown_key() {
    let text = b"llm:\n  max_tool_round: 3\n";
    hostile_config("config.unknown-key", text, &["config.yml:2", "max_tool_round"], &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_config_file() {
    // 64 MB: a log piped into the wrong file, say.
    let line = "# this line was appended by mistake, many many times over and over again\n";
    let mut text = line.repeat(64 * 1024 * 1024 / line.len()).into_bytes();
    text.extend_from_slice(b"llm:\n  max_tool_rounds: 5\n");
    hostile_config("config.huge-file", &text, &["config.yml", "MB"], &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yaml_alias_bomb() {
    // Nine levels of nine aliases: about 387 million strings once expanded. `extra_params`
    // accepts any value, so nothing stops the expansion but the parser itself.
    let mut text = String::from(
        "llm:\n  clients:\n    - name: main\n      base_url: http://127.0.0.1:9/v1\n      \
         model: m\n      extra_params:\n        a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\
         \"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..9 {
        let p = format!("*a{}", i - 1);
        let refs = [p.as_str(); 9].join(",");
        text.push_str(&format!("        a{i}: &a{i} [{refs}]\n"));
    }
    hostile_config("config.yaml-bomb", text.as_bytes(), &["config.yml"], &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_written_into_the_config() {
    let secret = "sk-live-4f9a8b7c6d5e4f3a2b1c";
    let text = format!(
        "llm:\n  clients:\n    - name: main\n      base_url: https://api.example.invalid/v1\n      \
         model: gpt-x\n      api_key: {secret}\n"
    );
    hostile_config(
        "config.secret-key",
        text.as_bytes(),
        &["config.yml:6", "api_key", "api_key_env"],
        &[secret, "4f9a8b"],
    )
    .await;
}

// ---- decisions --------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_for_a_call_that_does_not_exist() {
    let b = Bench::new().await;
    // A real session with a real waiting call, so "unknown" is not just "empty database".
    let waiting = b.parked_call("write_file", json!({"path": "kept.txt", "content": "x\n"})).await;
    let (approve_code, _, approve_err) = b.skald(&["approve", "424242"]).await;
    let (deny_code, _, deny_err) = b.skald(&["deny", "424242", "--note", "no"]).await;
    let inbox = b.inbox().await;
    let still_waiting = inbox["items"][0]["tool_call_id"].as_i64().map(|i| i.to_string());
    let mut row = b.row("decisions.unknown-call");
    row.user_sees(format!(
        "`skald approve 424242`: exit {approve_code}, {}; `skald deny 424242`: exit {deny_code}, {}",
        excerpt(approve_err.trim(), 100),
        excerpt(deny_err.trim(), 100)
    ))
    .model_sees(format!(
        "nothing new: {} request{} (the one that asked for the waiting call)",
        b.fake.requests().len(),
        if b.fake.requests().len() == 1 { "" } else { "s" }
    ))
    .stored(format!(
        "no decision recorded; the real waiting call {} still waits",
        still_waiting.clone().unwrap_or_default()
    ))
    .lost_if(still_waiting.as_deref() != Some(waiting.as_str()), "the waiting call's approval")
    .unapproved_if(b.work().join("kept.txt").exists(), "the waiting write");
    if approve_code == 1 && deny_code == 1 {
        row.clear_error(&format!("{approve_err} {deny_err}"), &["424242"]);
    } else {
        row.recovered_if(false, "a decision about no call was accepted");
    }
    row.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_decision_for_a_decided_call() {
    let b = Bench::new().await;
    std::fs::write(b.work().join("notes.txt"), "keep me\n").unwrap();
    let call = b.parked_call("write_file", json!({"path": "notes.txt", "content": "gone\n"})).await;
    let (deny_code, _, deny_err) = b.skald(&["deny", &call, "--note", "not this file"]).await;
    let (again_code, _, again_err) = b.skald(&["approve", &call]).await;
    b.fake.push(Reply::text("finished"));
    let (resume_code, resume_out, resume_err) = b.skald(&["resume", "--session", "1"]).await;
    let told: Vec<String> = b
        .fake
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect();
    let notes = std::fs::read_to_string(b.work().join("notes.txt")).unwrap();
    let mut row = b.row("decisions.already-decided");
    row.user_sees(format!(
        "`skald deny {call}` exit {deny_code}; then `skald approve {call}`: exit {again_code}, {}; \
         `skald resume` exit {resume_code}",
        excerpt(again_err.trim(), 100)
    ))
    .model_sees(format!(
        "the call is answered with {}",
        told.last().map(|t| excerpt(t, 80)).unwrap_or_else(|| "nothing".into())
    ))
    .stored(format!(
        "the first decision (rejected) stands; notes.txt holds {}",
        excerpt(&notes, 30)
    ))
    .unapproved_if(notes != "keep me\n", "the rejected write")
    .lost_if(!told.iter().any(|t| t.contains("not this file")), "the rejection note");
    if deny_code == 0 && again_code == 1 && resume_code == 0 {
        row.clear_error(&again_err, &["already rejected"]);
    } else {
        row.recovered_if(
            false,
            &format!("deny {deny_code} {deny_err}, approve {again_code}, resume {resume_code} {resume_out}{resume_err}"),
        );
    }
    row.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bypass_whose_scope_does_not_fit_the_call() {
    let b = Bench::new().await;
    let marker = b.work().join("ran.txt");
    let call = b
        .parked_call("execute_cmd", json!({"command": format!("touch {}", marker.display())}))
        .await;
    let (code, out, err) =
        b.skald(&["approve", &call, "--bypass", "1h", "--bypass-scope", "mcp_server"]).await;
    let inbox = b.inbox().await;
    let still = inbox["items"][0]["tool_call_id"].as_i64().map(|i| i.to_string());
    let (_, bypasses, _) = b.skald(&["--json", "bypass", "list"]).await;
    let bypasses: Vec<Value> = serde_json::from_str(&bypasses).unwrap_or_default();
    let mut row = b.row("decisions.bypass-scope");
    row.user_sees(format!(
        "`skald approve {call} --bypass 1h --bypass-scope mcp_server`: exit {code}, {}",
        excerpt(err.trim(), 160)
    ))
    .model_sees(format!("nothing new: {} request (the one that asked)", b.fake.requests().len()))
    .stored(format!(
        "no decision and no bypass recorded ({} bypasses); the call still waits",
        bypasses.len()
    ))
    .unapproved_if(marker.exists(), "the command")
    .unapproved_if(!bypasses.is_empty(), "a bypass")
    .lost_if(still.as_deref() != Some(call.as_str()), "the waiting call's approval");
    if code == 1 {
        row.clear_error(&err, &["mcp_server", "execute_cmd", "category"]);
    } else {
        row.recovered_if(false, &format!("the approval went through: {out}"));
    }
    row.finish();
}

// ---- skald serve ------------------------------------------------------------------------------

/// `skald serve` on a data dir whose configured model is `fake`.
fn serve_with(fake: &FakeLlm) -> (Fixture, Server) {
    let f = Fixture::new();
    std::fs::create_dir_all(f.data_dir()).unwrap();
    std::fs::write(
        f.data_dir().join("config.yml"),
        format!(
            "llm:\n  clients:\n    - name: main\n      base_url: {}\n      model: fake-model\n",
            fake.base_url()
        ),
    )
    .unwrap();
    let s = f.start();
    (f, s)
}

/// The query that lists every session.
fn all_sessions() -> Value {
    json!({"query": {"source": "", "search": null, "page": 1, "per_page": 20}})
}

/// Reads the sessions, creates one and sends a message, each through its `POST /api/<op>`
/// route with `auth` applied: (read, create, send) as (status, message).
async fn read_create_send(
    s: &Server,
    auth: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
) -> [(u16, String); 3] {
    let http = reqwest::Client::new();
    let call =
        |op: &str, params: Value| auth(http.post(s.url(&format!("/api/{op}")))).json(&params);
    [
        answer(call("list_sessions", all_sessions()).send().await.unwrap()).await,
        answer(call("new_session", json!({"source": "web"})).send().await.unwrap()).await,
        answer(
            call("send_message", json!({"source": "web", "text": "delete everything"}))
                .send()
                .await
                .unwrap(),
        )
        .await,
    ]
}

/// What a request got: status and the JSON body's message.
async fn answer(resp: reqwest::Response) -> (u16, String) {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    (status, body["message"].as_str().unwrap_or_default().to_owned())
}

/// Sessions as the owner (right token, no Origin) sees them.
async fn sessions_total(s: &Server) -> i64 {
    let http = reqwest::Client::new();
    let list = s.authed(http.post(s.url("/api/list_sessions"))).json(&all_sessions());
    list.send().await.unwrap().json::<Value>().await.unwrap()["total"].as_i64().unwrap_or(-1)
}

/// Tries to read, create a session and send a message with `auth` applied to each request;
/// measures that none went through.
async fn refused_api(
    id: &str,
    auth: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ws_query: &str,
) {
    let fake = FakeLlm::start().await.unwrap();
    let (_f, s) = serve_with(&fake);
    let [read, create, send] = read_create_send(&s, auth).await;
    let ws = refused_status(
        tokio_tungstenite::connect_async(ws_request(&s.ws_url(ws_query), None)).await,
    );
    let total = sessions_total(&s).await;
    let mut row = Row::new(id);
    row.redact(s.token.clone(), "<token>")
        .user_sees(format!(
            "read, create and send: HTTP {}, {}, {} {}; the WebSocket: HTTP {ws}",
            read.0,
            create.0,
            send.0,
            excerpt(&send.1, 110)
        ))
        .model_sees(format!("{} requests", fake.requests().len()))
        .stored(format!("{total} sessions"))
        .unapproved_if(total != 0, "a session or message created without the token")
        .unapproved_if(!fake.requests().is_empty(), "a model request")
        .unapproved_if(read.0 < 400, "a read of the sessions");
    if [read.0, create.0, send.0, ws] == [401; 4] {
        row.clear_error(&send.1, &["token"]);
    } else {
        row.recovered_if(false, "a request without the right token was not refused with 401");
    }
    row.finish();
}

#[tokio::test]
async fn serve_without_a_token() {
    refused_api("serve.no-token", |r| r, "").await;
}

#[tokio::test]
async fn serve_with_a_wrong_token() {
    let wrong = "0".repeat(64);
    refused_api(
        "serve.wrong-token",
        move |r| r.bearer_auth(&wrong),
        &format!("?token={}", "0".repeat(64)),
    )
    .await;
}

const FOREIGN: &str = "https://evil.example";

#[tokio::test]
async fn serve_http_from_a_non_loopback_origin() {
    let fake = FakeLlm::start().await.unwrap();
    let (_f, s) = serve_with(&fake);
    let foreign = |r: reqwest::RequestBuilder| s.authed(r).header("Origin", FOREIGN);
    let [read, create, send] = read_create_send(&s, foreign).await;
    // The page `skald serve` itself serves still works.
    let own = s
        .authed(reqwest::Client::new().post(s.url("/api/list_sessions")))
        .header("Origin", s.url(""))
        .json(&all_sessions())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    let total = sessions_total(&s).await;
    let mut row = Row::new("serve.foreign-origin-http");
    row.redact(s.port.to_string(), "<port>")
        .user_sees(format!(
            "with the right token but `Origin: {FOREIGN}`: read, create and send get HTTP {}, \
             {}, {} {}; the served UI's own origin gets {own}",
            read.0,
            create.0,
            send.0,
            excerpt(&send.1, 80)
        ))
        .model_sees(format!("{} requests", fake.requests().len()))
        .stored(format!("{total} sessions"))
        .unapproved_if(total != 0, "a session or message created by a foreign page")
        .unapproved_if(!fake.requests().is_empty(), "a model request from a foreign page")
        .unapproved_if(read.0 < 400, "a read of the sessions by a foreign page");
    if [read.0, create.0, send.0] == [403; 3] && own == 200 {
        row.clear_error(&send.1, &["origin"]);
    } else {
        row.recovered_if(false, "a foreign origin was not refused, or the UI's own was");
    }
    row.finish();
}

#[tokio::test]
async fn serve_websocket_from_a_non_loopback_origin() {
    let fake = FakeLlm::start().await.unwrap();
    let (_f, s) = serve_with(&fake);
    let url = s.ws_url(&format!("?token={}", s.token));
    let mut statuses = Vec::new();
    let mut message = String::new();
    for origin in [FOREIGN, "http://127.0.0.1:1", "null"] {
        let (status, body) = ws_refusal(&url, origin).await;
        message = body;
        statuses.push((origin, status));
    }
    let own = tokio_tungstenite::connect_async(ws_request(&url, Some(&s.url("")))).await.is_ok();
    let shown: Vec<String> = statuses.iter().map(|(o, st)| format!("`{o}` HTTP {st}")).collect();
    let mut row = Row::new("serve.foreign-origin-ws");
    row.redact(s.token.clone(), "<token>")
        .redact(s.port.to_string(), "<port>")
        .user_sees(format!(
            "with the right token: {}; the served UI's own origin connects: {own}",
            shown.join(", ")
        ))
        .model_sees(format!("{} requests", fake.requests().len()))
        .stored("nothing: the socket only streams events".to_string())
        .unapproved_if(
            statuses.iter().any(|(_, st)| *st != 403),
            "a socket opened by a foreign page",
        );
    if own {
        row.clear_error(&message, &["origin"]);
    } else {
        row.recovered_if(false, "the UI's own origin was refused");
    }
    row.finish();
}

/// The HTTP answer to a WebSocket handshake from `origin`: status and the error's message.
async fn ws_refusal(url: &str, origin: &str) -> (u16, String) {
    match tokio_tungstenite::connect_async(ws_request(url, Some(origin))).await {
        Ok(_) => (101, String::new()),
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            let body: Value = resp
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or_default();
            (resp.status().as_u16(), body["message"].as_str().unwrap_or_default().to_owned())
        }
        Err(e) => panic!("expected an HTTP answer to the handshake, got {e}"),
    }
}
