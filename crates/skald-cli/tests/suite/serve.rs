//! `skald serve` end to end: the real binary on a temp data dir, over real HTTP and WebSocket.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest};

/// A running `skald serve --port 0`; killed on drop so a failed assertion leaves nothing behind.
pub(super) struct Server {
    child: Child,
    pub(super) port: u16,
    pub(super) token: String,
    data_dir: PathBuf,
}

impl Server {
    /// `ui`: `Some(dir)` sets SKALD_UI_DIR, so tests never depend on the real UI build.
    fn start(data_dir: &Path, ui: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_skald"))
            .args(["--data-dir", data_dir.to_str().unwrap(), "serve", "--port", "0"])
            .env("SKALD_UI_DIR", ui)
            .env_remove("SKALD_DATA_DIR")
            .env_remove("SKALD_LLM_BASE_URL")
            .env_remove("SKALD_LLM_MODEL")
            .env_remove("SKALD_LLM_API_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        let (port, token) = url.split_once("/?token=").unwrap();
        Self {
            child,
            port: port.parse().unwrap(),
            token: token.to_string(),
            data_dir: data_dir.to_path_buf(),
        }
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub(super) fn ws_url(&self, query: &str) -> String {
        format!("ws://127.0.0.1:{}/api/ws{query}", self.port)
    }

    pub(super) fn authed(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        req.bearer_auth(&self.token)
    }

    /// `POST /api/<op>` with the token and `params` as the body.
    async fn op(&self, http: &reqwest::Client, op: &str, params: Value) -> reqwest::Response {
        let url = self.url(&format!("/api/{op}"));
        self.authed(http.post(url)).json(&params).send().await.unwrap()
    }

    /// Sends SIGTERM and returns the exit code.
    #[cfg(unix)]
    fn terminate(mut self) -> Option<i32> {
        let status =
            Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "skald serve did not exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A data dir and a tiny UI build, both temporary.
pub(super) struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    pub(super) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let ui = tmp.path().join("ui");
        std::fs::create_dir_all(ui.join("assets")).unwrap();
        std::fs::write(ui.join("index.html"), "<!doctype html><title>tiny-skald-ui</title>")
            .unwrap();
        std::fs::write(ui.join("assets").join("app.js"), "console.log('tiny');").unwrap();
        // Next to the UI folder, so a traversal that escapes it would find this.
        std::fs::write(tmp.path().join("secret.txt"), "TOP-SECRET").unwrap();
        Self { tmp }
    }

    pub(super) fn data_dir(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    fn ui_dir(&self) -> PathBuf {
        self.tmp.path().join("ui")
    }

    pub(super) fn start(&self) -> Server {
        Server::start(&self.data_dir(), &self.ui_dir())
    }
}

async fn json(resp: reqwest::Response) -> Value {
    resp.json().await.unwrap()
}

#[tokio::test]
async fn api_needs_the_right_bearer_token() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();

    let none = http.post(s.url("/api/inbox")).send().await.unwrap();
    assert_eq!(none.status(), 401);
    assert_eq!(json(none).await["code"], "unauthorized");

    let wrong = http.post(s.url("/api/inbox")).bearer_auth("0".repeat(64)).send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(json(wrong).await["code"], "unauthorized");

    // Unknown API paths are guarded too: no probing for operations without the token.
    let probe = http.post(s.url("/api/anything")).send().await.unwrap();
    assert_eq!(probe.status(), 401);

    // An empty body is an operation without params.
    let ok = s.authed(http.post(s.url("/api/inbox"))).send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let empty = serde_json::json!({"items": [], "questions": [], "elicitations": [], "total": 0});
    assert_eq!(json(ok).await, empty);

    let unknown = s.op(&http, "anything", serde_json::json!({})).await;
    assert_eq!(unknown.status(), 404);
    let unknown = json(unknown).await;
    assert_eq!(unknown["code"], "not_found");
    assert!(unknown["message"].as_str().unwrap().contains("`anything`"), "{unknown}");

    // Operations are POST: a GET is refused in the API's own error shape.
    let get = s.authed(http.get(s.url("/api/inbox"))).send().await.unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(json(get).await["code"], "invalid_input");

    let not_json = s.authed(http.post(s.url("/api/inbox"))).body("{oops").send().await.unwrap();
    assert_eq!(not_json.status(), 400);
    assert_eq!(json(not_json).await["code"], "invalid_input");
}

/// The README promises `{"code", "message"}` for every error: also for a body over the limit
/// and for the errors axum writes itself (a method the WebSocket route does not take, a plain
/// GET of it), which were plain text or empty.
#[tokio::test]
async fn every_api_error_is_json_also_a_body_over_the_limit() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();
    let post = |framing: &str| {
        format!(
            "POST /api/send_message HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\n{framing}Connection: close\r\n\r\n",
            s.token
        )
    };
    // 5 MB announced as curl announces a large body (`Expect: 100-continue`): refused before it
    // is sent, as a client still writing into a closed connection would read a reset instead.
    let declared = raw_request(
        s.port,
        &post(&format!("Content-Length: {}\r\nExpect: 100-continue\r\n", 5 * 1024 * 1024)),
    );
    // Streamed without a length: refused once more than the limit has arrived (sent just past
    // it, so nothing is left unread under the answer).
    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "x".repeat(64 * 1024));
    let streamed =
        raw_request(s.port, &(post("Transfer-Encoding: chunked\r\n") + &chunk.repeat(33)));
    for answer in [declared, streamed] {
        let (status_line, rest) = answer.split_once("\r\n").unwrap();
        assert_eq!(status_line, "HTTP/1.1 413 Payload Too Large", "{answer}");
        let (headers, body) = rest.split_once("\r\n\r\n").unwrap();
        assert!(
            headers.to_ascii_lowercase().contains("content-type: application/json"),
            "{answer}"
        );
        let body: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"));
        assert_eq!(body["code"], "invalid_input", "{body}");
        assert!(body["message"].as_str().unwrap().contains("2 MiB"), "{body}");
    }

    let post_ws = s.authed(http.post(s.ws_url("").replace("ws://", "http://"))).send().await;
    let post_ws = post_ws.unwrap();
    assert_eq!(post_ws.status(), 405);
    assert_eq!(post_ws.headers()["allow"], "GET,HEAD", "the methods it takes are still named");
    assert_eq!(json(post_ws).await["code"], "invalid_input");

    // The token is right but this is no WebSocket handshake.
    let url = s.ws_url(&format!("?token={}", s.token)).replace("ws://", "http://");
    let plain_get = http.get(url).send().await.unwrap();
    assert!(plain_get.status().is_client_error(), "{}", plain_get.status());
    assert_eq!(json(plain_get).await["code"], "invalid_input");
}

/// A POST with the token in `?token=` (as the page's URL carries it) is still refused — a token
/// in a URL ends up in logs — but the error says where the token goes instead of telling the
/// caller to open the URL.
#[tokio::test]
async fn a_query_token_on_a_post_is_refused_with_where_the_token_goes() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();
    let resp = http.post(s.url(&format!("/api/inbox?token={}", s.token))).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    let body = json(resp).await;
    assert_eq!(body["code"], "unauthorized", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("`Authorization: Bearer <token>` header"), "{message}");
    assert!(message.contains("not in `?token=`"), "{message}");
    assert!(!message.contains("open the URL"), "{message}");
}

/// Through `serve` as through `skald api`: paging left out takes the defaults.
#[tokio::test]
async fn list_sessions_without_paging_answers_the_first_page() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();
    for (params, page, per_page) in [
        (serde_json::json!({}), 1, 20),
        (serde_json::json!({"query": {"source": "web"}}), 1, 20),
        (serde_json::json!({"query": {"page": 2}}), 2, 20),
    ] {
        let resp = s.op(&http, "list_sessions", params.clone()).await;
        assert_eq!(resp.status(), 200, "{params}");
        let body = json(resp).await;
        assert_eq!(
            (body["page"].as_u64(), body["per_page"].as_u64()),
            (Some(page), Some(per_page))
        );
    }
    let empty_body = s.authed(http.post(s.url("/api/list_sessions"))).send().await.unwrap();
    assert_eq!(empty_body.status(), 200);
}

#[tokio::test]
async fn api_calls_from_another_sites_page_are_refused_even_with_the_token() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();
    for origin in ["https://evil.example", "http://127.0.0.1:1", "null"] {
        let create = s
            .authed(http.post(s.url("/api/new_session")))
            .header("Origin", origin)
            .json(&serde_json::json!({"source": "web"}))
            .send()
            .await
            .unwrap();
        assert_eq!(create.status(), 403, "{origin}");
        let body = json(create).await;
        assert_eq!(body["code"], "unauthorized");
        assert!(body["message"].as_str().unwrap().contains("not allowed"), "{body}");
    }
    // The served UI's own origin, and clients that send none (curl, scripts), go through.
    let all =
        serde_json::json!({"query": {"source": "", "search": null, "page": 1, "per_page": 20}});
    for origin in [Some(s.url("")), Some(format!("http://localhost:{}", s.port)), None] {
        let mut req = s.authed(http.post(s.url("/api/list_sessions"))).json(&all);
        if let Some(o) = &origin {
            req = req.header("Origin", o);
        }
        assert_eq!(req.send().await.unwrap().status(), 200, "{origin:?}");
    }
    let list = json(s.op(&http, "list_sessions", all).await).await;
    assert_eq!(list["total"], 0, "a refused request created nothing");
}

#[cfg(unix)]
#[tokio::test]
async fn token_file_is_owner_only_and_survives_restarts() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let s = f.start();
    let path = s.data_dir.join("serve.token");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), s.token);
    assert_eq!(s.token.len(), 64);
    let first = s.token.clone();
    assert_eq!(s.terminate(), Some(0), "SIGTERM is a clean shutdown");

    // Someone widened the permissions: the next start narrows them again and keeps the token.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let again = f.start();
    assert_eq!(again.token, first, "a restart must not invalidate open browser tabs");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[tokio::test]
async fn create_then_list_then_detail() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();

    use serde_json::json as j;
    let created = s.op(&http, "new_session", j!({"source": "web"})).await;
    assert_eq!(created.status(), 200);
    let id = json(created).await["session_id"].as_i64().unwrap();

    let query =
        |source: &str| j!({"query": {"source": source, "search": null, "page": 1, "per_page": 20}});
    let list = json(s.op(&http, "list_sessions", query("web")).await).await;
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["id"], id);
    assert_eq!(list["items"][0]["source"], "web");
    let other = json(s.op(&http, "list_sessions", query("tic")).await).await;
    assert_eq!(other["total"], 0, "the source filter reaches the engine");
    let all = json(s.op(&http, "list_sessions", query("")).await).await;
    assert_eq!(all["total"], 1, "an empty source is no filter");

    let detail = s.op(&http, "session_detail", j!({"session_id": id})).await;
    assert_eq!(detail.status(), 200);
    let detail = json(detail).await;
    assert_eq!(detail["session"]["id"], id);
    assert_eq!(detail["messages"], j!([]));
    // The pages read windows of the tree: the newest rows of an empty session, and nothing for
    // a query that is no window query.
    let window = s
        .op(
            &http,
            "session_window",
            j!({"session_id": id, "query": {"anchor": {"type": "latest"}, "limit": 50}}),
        )
        .await;
    assert_eq!(window.status(), 200);
    let window = json(window).await;
    assert_eq!((window["session"]["id"].as_i64(), &window["items"]), (Some(id), &j!([])));
    assert_eq!(
        (window["has_more_before"].as_bool(), window["has_more_after"].as_bool()),
        (Some(false), Some(false))
    );
    let bad_window =
        s.op(&http, "session_window", j!({"session_id": id, "query": {"anchor": "newest"}})).await;
    assert_eq!(bad_window.status(), 400);
    let missing_item = s
        .op(
            &http,
            "session_item",
            j!({"session_id": id, "item": {"type": "message", "id": 999_999}}),
        )
        .await;
    assert_eq!(json(missing_item).await["code"], "not_found");

    let usage = s.op(&http, "session_usage", j!({"session_id": id})).await;
    assert_eq!(usage.status(), 200);
    let usage = json(usage).await;
    assert_eq!((usage["session_id"].as_i64(), usage["replies"].as_i64()), (Some(id), Some(0)));
    assert_eq!(usage["last_input_tokens"], Value::Null);
    // No model is configured in this data dir: compaction says so instead of pretending.
    let compact = s.op(&http, "compact_session", j!({"session_id": id, "focus": "tests"})).await;
    assert_eq!(json(compact).await["code"], "config");

    let reset = s.op(&http, "reset_tool_groups", j!({"session_id": id})).await;
    assert_eq!(json(reset).await, j!({"revoked": 0}));
    let stop = s.op(&http, "stop_turn", j!({"session_id": id})).await;
    assert_eq!(json(stop).await, j!({"stopped": false}));

    let missing = s.op(&http, "session_detail", j!({"session_id": 999_999})).await;
    assert_eq!(missing.status(), 404);
    assert_eq!(json(missing).await["code"], "not_found");

    let bad_id = s.op(&http, "session_detail", j!({"session_id": "abc"})).await;
    assert_eq!(bad_id.status(), 400);
    let bad_id = json(bad_id).await;
    assert_eq!(bad_id["code"], "invalid_input");
    assert!(bad_id["message"].as_str().unwrap().contains("session_id"), "{bad_id}");

    let bad_source = s.op(&http, "new_session", j!({"source": "no spaces"})).await;
    assert_eq!(bad_source.status(), 400);
    assert_eq!(json(bad_source).await["code"], "invalid_input");
}

pub(super) fn ws_request(
    url: &str,
    origin: Option<&str>,
) -> tungstenite::handshake::client::Request {
    let mut req = url.into_client_request().unwrap();
    if let Some(origin) = origin {
        req.headers_mut().insert("Origin", origin.parse().unwrap());
    }
    req
}

pub(super) fn refused_status(result: Result<impl Sized, tungstenite::Error>) -> u16 {
    match result {
        Err(tungstenite::Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("the handshake should have been refused"),
    }
}

#[tokio::test]
async fn websocket_refuses_foreign_origins_and_missing_tokens() {
    let f = Fixture::new();
    let s = f.start();
    let with_token = s.ws_url(&format!("?token={}", s.token));

    let evil = ws_request(&with_token, Some("http://evil.example"));
    assert_eq!(refused_status(tokio_tungstenite::connect_async(evil).await), 403);
    // Same host, other port: another local web app is still a foreign origin.
    let other_port = ws_request(&with_token, Some("http://127.0.0.1:1"));
    assert_eq!(refused_status(tokio_tungstenite::connect_async(other_port).await), 403);

    let no_token = ws_request(&s.ws_url(""), Some(&s.url("")));
    assert_eq!(refused_status(tokio_tungstenite::connect_async(no_token).await), 401);
    let wrong = ws_request(&s.ws_url("?token=nope"), None);
    assert_eq!(refused_status(tokio_tungstenite::connect_async(wrong).await), 401);

    for origin in [s.url(""), format!("http://localhost:{}", s.port)] {
        let ok = ws_request(&with_token, Some(&origin));
        assert!(tokio_tungstenite::connect_async(ok).await.is_ok(), "{origin} must be allowed");
    }
}

#[tokio::test]
async fn websocket_streams_the_events_of_a_new_session() {
    let f = Fixture::new();
    let s = f.start();
    let req = ws_request(&s.ws_url(&format!("?token={}&source=web", s.token)), Some(&s.url("")));
    let (mut socket, _) = tokio_tungstenite::connect_async(req).await.unwrap();

    let http = reqwest::Client::new();
    let created = s.op(&http, "new_session", serde_json::json!({"source": "web"})).await;
    let id = json(created).await["session_id"].as_i64().unwrap();

    let deadline = Duration::from_secs(5);
    let mut events = Vec::new();
    while events.len() < 3 {
        let msg = tokio::time::timeout(deadline, socket.next()).await.unwrap().unwrap().unwrap();
        if let Message::Text(text) = msg {
            let v: Value = serde_json::from_str(&text).unwrap();
            // config_reloaded may interleave; it is not what this test is about.
            if v["event"]["type"] != "config_reloaded" {
                events.push(v);
            }
        }
    }
    // Other tabs on the source follow the new session; lists refresh.
    assert_eq!(
        events,
        [
            // First, where the stream starts: nothing was stored yet.
            serde_json::json!({"seq": 0, "session_id": null, "source": null, "frame": null, "event": {"type": "subscribed"}}),
            // Events about the session as a whole come from no frame of it.
            serde_json::json!({"seq": 1, "session_id": id, "source": "web", "frame": null, "event": {"type": "new_session", "session_id": id}}),
            serde_json::json!({"seq": 2, "session_id": id, "source": "web", "frame": null, "event": {"type": "sessions_changed"}}),
        ]
    );
}

/// One raw request, so the path reaches the server exactly as written (clients normalise `..`).
fn raw_get(port: u16, path: &str) -> String {
    raw_request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
    )
}

/// Sends `request` as written and reads the answer: its head and, when it names a length, that
/// much body (a server may keep the connection open, waiting for a body it will not read).
fn raw_request(port: u16, request: &str) -> String {
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    tcp.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = tcp.read(&mut chunk).unwrap();
        out.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&out);
        let complete = text.split_once("\r\n\r\n").and_then(|(head, body)| {
            let length = head.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
            })?;
            Some(body.len() >= length)
        });
        if n == 0 || complete == Some(true) {
            return text.into_owned();
        }
    }
}

#[tokio::test]
async fn serves_the_ui_without_a_token_and_nothing_outside_it() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();

    let index = http.get(s.url("/")).send().await.unwrap();
    assert_eq!(index.status(), 200);
    assert!(index.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(index.text().await.unwrap().contains("tiny-skald-ui"));

    // The page arrives with ?token= in its address and must load before it can read it.
    let with_query = http.get(s.url("/?token=whatever")).send().await.unwrap();
    assert_eq!(with_query.status(), 200);

    let js = http.get(s.url("/assets/app.js")).send().await.unwrap();
    assert_eq!(js.status(), 200);
    assert!(js.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));

    for path in ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt"] {
        let reply = raw_get(s.port, path);
        assert!(!reply.starts_with("HTTP/1.1 200"), "{path}: {reply}");
        assert!(!reply.contains("TOP-SECRET"), "{path} leaked a file outside the UI");
    }
    let missing = http.get(s.url("/nope.js")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn ui_files_are_revalidated_on_every_load_and_unchanged_ones_answer_304() {
    let f = Fixture::new();
    let s = f.start();
    let http = reqwest::Client::new();

    let js = http.get(s.url("/assets/app.js")).send().await.unwrap();
    assert_eq!(js.status(), 200);
    let headers = js.headers().clone();
    assert_eq!(headers["cache-control"], "no-cache", "a rebuilt UI must show on the next reload");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let modified = headers["last-modified"].clone();
    assert_eq!(js.text().await.unwrap(), "console.log('tiny');");

    let again = http
        .get(s.url("/assets/app.js"))
        .header("if-modified-since", modified)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304, "an unchanged file is not sent again");

    let head = http.head(s.url("/index.html")).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert!(head.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let post = http.post(s.url("/index.html")).send().await.unwrap();
    assert_eq!(post.status(), 405);
}

#[tokio::test]
async fn a_missing_ui_build_is_a_clear_503_and_the_api_still_works() {
    let f = Fixture::new();
    let empty = f.tmp.path().join("not-built");
    std::fs::create_dir_all(&empty).unwrap();
    let s = Server::start(&f.data_dir(), &empty);
    let http = reqwest::Client::new();

    let page = http.get(s.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 503);
    let text = page.text().await.unwrap();
    assert!(text.contains("not built") && text.contains("npm --prefix ui"), "{text}");

    let api = s.authed(http.post(s.url("/api/inbox"))).send().await.unwrap();
    assert_eq!(api.status(), 200);
}
