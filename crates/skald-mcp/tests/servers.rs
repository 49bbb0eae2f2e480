//! The manager against a real third-party server, `@modelcontextprotocol/server-everything` from
//! npm, over stdio and streamable HTTP. #[ignore]d: `scripts/test.sh` installs the server
//! (`scripts/mcp-peers/install.sh`) and runs them with SKALD_MCP_EVERYTHING set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use skald_mcp::{
    Answer, Elicitor, FieldKind, Form, McpError, McpManager, Progress, ServerConfig, ServerState,
    Transport,
};
use tokio_util::sync::CancellationToken;

fn everything_bin() -> String {
    std::env::var("SKALD_MCP_EVERYTHING").expect(
        "SKALD_MCP_EVERYTHING: the path of mcp-server-everything (export \
         SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh))",
    )
}

fn stdio(name: &str) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command: everything_bin(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        },
        description: Some("test server".into()),
        enabled: true,
        call_timeout: None,
        trusted: true,
    }
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_stdio_server_starts_on_first_need_lists_and_calls_its_tools() {
    let logs = tempfile::tempdir().unwrap();
    let manager = McpManager::new(vec![stdio("everything")], Some(logs.path().into()));
    assert_eq!(manager.statuses()[0].state, ServerState::NotStarted);
    assert_eq!(manager.tools("everything"), None);

    let tools = manager.connect("everything", false).await.unwrap();
    let echo = tools.iter().find(|t| t.name == "echo").expect("echo");
    assert!(echo.read_only);
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    let toggle = tools.iter().find(|t| t.name == "toggle-simulated-logging").unwrap();
    assert!(!toggle.read_only);
    assert_eq!(manager.statuses()[0].state, ServerState::Ready);

    let cancel = CancellationToken::new();
    let out = manager.call("everything", "echo", &json!({"message": "hi"}), &cancel).await.unwrap();
    assert_eq!(out.text, "Echo: hi");
    assert!(!out.json && !out.is_error);

    let out = manager
        .call("everything", "get-structured-content", &json!({"location": "New York"}), &cancel)
        .await
        .unwrap();
    assert!(out.json, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert!(v.get("temperature").is_some(), "{v}");

    let err = manager.call("everything", "nope", &json!({}), &cancel).await.unwrap_err();
    assert_eq!(err, McpError::UnknownTool { server: "everything".into(), tool: "nope".into() });

    let log = std::fs::read_to_string(logs.path().join("everything.log")).unwrap();
    assert!(log.contains("[lifecycle] connected ("), "{log}");
    manager.shutdown().await;
    assert_eq!(manager.statuses()[0].state, ServerState::NotStarted);
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_stdio_server_sees_its_own_env_and_none_of_skalds_variables() {
    let mut config = stdio("everything");
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("GIVEN_TO_SERVER".into(), "yes".into());
    }
    let manager = McpManager::new(vec![config], None);
    let cancel = CancellationToken::new();
    let out = manager.call("everything", "get-env", &json!({}), &cancel).await.unwrap();
    assert!(out.text.contains("GIVEN_TO_SERVER"), "{}", out.text);
    assert!(out.text.contains("\"PATH\""), "{}", out.text);
    // Set for this test process (and so for Skald's), never passed on.
    assert!(std::env::var("SKALD_MCP_EVERYTHING").is_ok());
    assert!(!out.text.contains("SKALD_MCP_EVERYTHING"), "{}", out.text);
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_stop_cancels_a_long_call_and_the_server_keeps_serving() {
    let manager = McpManager::new(vec![stdio("everything")], None);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let args = json!({"duration": 30, "steps": 3});
    let err = manager
        .call("everything", "trigger-long-running-operation", &args, &cancel)
        .await
        .unwrap_err();
    assert_eq!(err, McpError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let fresh = CancellationToken::new();
    let out = manager.call("everything", "echo", &json!({"message": "after"}), &fresh).await;
    assert_eq!(out.unwrap().text, "Echo: after");
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_call_past_the_servers_timeout_is_cancelled_and_says_so() {
    let config = ServerConfig { call_timeout: Some(Duration::from_secs(1)), ..stdio("slow") };
    let manager = McpManager::new(vec![config], None);
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let args = json!({"duration": 30, "steps": 3});
    let err =
        manager.call("slow", "trigger-long-running-operation", &args, &cancel).await.unwrap_err();
    let want = McpError::Timeout {
        server: "slow".into(),
        tool: "trigger-long-running-operation".into(),
        secs: 1,
    };
    assert_eq!(err, want);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    let quick = manager.call("slow", "echo", &json!({"message": "quick"}), &cancel).await;
    assert_eq!(quick.unwrap().text, "Echo: quick", "the server still serves");
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_streamable_http_server_is_reached_by_url_and_its_log_messages_arrive() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = tokio::process::Command::new(everything_bin())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // What the server prints of each request (it says when a session is terminated).
    let said = Arc::new(Mutex::new(Vec::<String>::new()));
    {
        let said = said.clone();
        let stdout = child.stdout.take().unwrap();
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt as _;
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                said.lock().unwrap().push(line);
            }
        });
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP server did not listen");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let config = ServerConfig {
        name: "remote".into(),
        transport: Transport::Http {
            url: url.clone(),
            api_key: Some("k".into()),
            oauth: Default::default(),
        },
        description: None,
        enabled: true,
        call_timeout: None,
        trusted: true,
    };
    let manager = McpManager::new(vec![config], None);
    let cancel = CancellationToken::new();
    let out = manager.call("remote", "echo", &json!({"message": "over http"}), &cancel).await;
    assert_eq!(out.unwrap().text, "Echo: over http");
    // Its log messages come over HTTP too (the session's own stream) and reach its log.
    manager.call("remote", "toggle-simulated-logging", &json!({}), &cancel).await.unwrap();
    eventually("a log message over HTTP", || {
        manager.statuses()[0].log_lines.iter().any(|l| l.contains("-level message - SessionId "))
    })
    .await;
    // Progress comes over HTTP as well.
    let seen = Arc::new(Mutex::new(0));
    let sink: skald_mcp::ProgressSink = {
        let seen = seen.clone();
        Arc::new(move |_| *seen.lock().unwrap() += 1)
    };
    let args = json!({"duration": 1, "steps": 2});
    manager
        .call_watched("remote", "trigger-long-running-operation", &args, &cancel, hooks(sink))
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), 2);
    // Stopping ends the HTTP session at the server (DELETE), not only on our side.
    manager.shutdown().await;
    eventually("the session terminated at the server", || {
        said.lock().unwrap().iter().any(|l| l.contains("Received session termination request"))
    })
    .await;

    // A server that is gone is said in words, without Rust type names.
    child.kill().await.unwrap();
    let err = manager.call("remote", "echo", &json!({"message": "x"}), &cancel).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("could not reach the server"), "{text}");
    assert!(!text.contains("rmcp::") && !text.contains("Transport ["), "{text}");
}

#[tokio::test]
async fn a_server_that_refuses_the_key_says_it_needs_authorization_in_words() {
    // An HTTP endpoint that answers every request 401, as a server does to a wrong API key.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\n\
                  Content-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let config = ServerConfig {
        name: "locked".into(),
        transport: Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            api_key: Some("wrong".into()),
            oauth: Default::default(),
        },
        description: None,
        enabled: true,
        call_timeout: None,
        trusted: false,
    };
    let manager = McpManager::new(vec![config], None);
    let text = manager.connect("locked", false).await.unwrap_err().to_string();
    assert!(text.contains("requires authorization"), "{text}");
    assert!(!text.contains("rmcp::") && !text.contains("Transport ["), "{text}");
}

/// Pids of the processes whose environment holds `marker`.
#[cfg(target_os = "linux")]
fn pids_with_env(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        if let Ok(env) = std::fs::read(entry.path().join("environ"))
            && String::from_utf8_lossy(&env).contains(marker)
        {
            pids.push(pid);
        }
    }
    pids
}

#[cfg(target_os = "linux")]
#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_server_that_died_is_started_again_by_the_next_call() {
    let marker = format!("skald-test-{}", std::process::id());
    let mut config = stdio("everything");
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("SKALD_TEST_MARK".into(), marker.clone());
    }
    let manager = McpManager::new(vec![config], None);
    let cancel = CancellationToken::new();
    let out = manager.call("everything", "echo", &json!({"message": "one"}), &cancel).await;
    assert_eq!(out.unwrap().text, "Echo: one");
    let pids = pids_with_env(&marker);
    assert!(!pids.is_empty(), "the server runs");
    for pid in &pids {
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while manager.statuses()[0].state == ServerState::Ready {
        assert!(Instant::now() < deadline, "the dead server still counts as running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(manager.statuses()[0].state, ServerState::NotStarted);
    let out = manager.call("everything", "echo", &json!({"message": "two"}), &cancel).await;
    assert_eq!(out.unwrap().text, "Echo: two", "started again");
    let again = pids_with_env(&marker);
    assert!(!again.is_empty() && again.iter().all(|p| !pids.contains(p)), "a new process");
    manager.shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids_with_env(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the server outlived the shutdown");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn servers_that_cannot_run_say_why_and_are_not_retried_unless_asked() {
    let logs = tempfile::tempdir().unwrap();
    let broken = ServerConfig {
        name: "broken".into(),
        transport: Transport::Stdio {
            command: "/nonexistent/skald-mcp-server".into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        },
        description: None,
        enabled: true,
        call_timeout: None,
        trusted: true,
    };
    let off = ServerConfig { name: "off".into(), enabled: false, ..broken.clone() };
    let manager = McpManager::new(vec![broken, off], Some(logs.path().into()));
    let err = manager.connect("broken", false).await.unwrap_err();
    let McpError::Connect { message, .. } = &err else { panic!("{err:?}") };
    assert!(message.contains("cannot run `/nonexistent/skald-mcp-server`"), "{message}");
    assert!(matches!(manager.statuses()[0].state, ServerState::Failed(_)));
    assert_eq!(manager.connect("broken", false).await.unwrap_err(), err);
    assert_eq!(manager.connect("off", false).await.unwrap_err(), McpError::Disabled("off".into()));
    assert_eq!(
        manager.connect("ghost", false).await.unwrap_err(),
        McpError::UnknownServer("ghost".into())
    );
    assert_eq!(manager.enabled(), vec![("broken".to_string(), None)]);
    let log = std::fs::read_to_string(logs.path().join("broken.log")).unwrap();
    assert!(log.contains("[lifecycle] start failed: cannot run"), "{log}");
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn read_only_hints_count_only_for_a_trusted_server_and_never_for_an_open_world_tool() {
    let untrusted = ServerConfig { trusted: false, ..stdio("untrusted") };
    let manager = McpManager::new(vec![untrusted, stdio("trusted")], None);
    let read_only = |tools: &[skald_mcp::McpTool], name: &str| {
        tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name}")).read_only
    };
    // Same program, same annotations: the user's word decides whether they count.
    let tools = manager.connect("untrusted", false).await.unwrap();
    assert!(!read_only(&tools, "echo") && !read_only(&tools, "get-sum"));
    let tools = manager.connect("trusted", false).await.unwrap();
    assert!(read_only(&tools, "echo") && read_only(&tools, "get-sum"));
    // `gzip-file-as-resource` fetches a URL (`openWorldHint: true`): it asks even when trusted.
    assert!(!read_only(&tools, "gzip-file-as-resource"));
    manager.shutdown().await;
}

/// Waits (up to 15 s) until `done` holds.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_servers_log_messages_go_to_its_log_file_and_its_last_lines() {
    let logs = tempfile::tempdir().unwrap();
    let manager = McpManager::new(vec![stdio("everything")], Some(logs.path().into()));
    let cancel = CancellationToken::new();
    // server-everything sends one log message at once, then one every 5 s, at a random level.
    let out =
        manager.call("everything", "toggle-simulated-logging", &json!({}), &cancel).await.unwrap();
    assert!(out.text.starts_with("Started simulated"), "{out:?}");
    let levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
    let logged = |line: &str| {
        levels.iter().any(|l| line.contains(&format!(" [{l}]"))) && line.contains("message")
    };
    eventually("a log message in the server's last lines", || {
        manager.statuses()[0].log_lines.iter().any(|l| logged(l))
    })
    .await;
    let file = std::fs::read_to_string(logs.path().join("everything.log")).unwrap();
    assert!(file.lines().any(logged), "{file}");
    // The lines are the file's, connection events included, oldest first.
    let lines = &manager.statuses()[0].log_lines;
    assert!(lines[0].contains("[lifecycle] starting (stdio: "), "{lines:?}");
    assert!(lines.iter().all(|l| file.contains(l.as_str())), "{lines:?}\n{file}");
    // Log messages are not events.
    assert!(manager.events("everything").is_empty());
    manager.shutdown().await;
}

/// `scripts/mcp-peers/notifying-server.mjs`, run with node from the installed SDK.
fn notifier(name: &str, trusted: bool) -> ServerConfig {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/mcp-peers/notifying-server.mjs");
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![script.display().to_string()],
            env: BTreeMap::new(),
            cwd: None,
        },
        description: None,
        enabled: true,
        call_timeout: None,
        trusted,
    }
}

fn names(tools: &[skald_mcp::McpTool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_changed_tool_list_is_listed_again_before_the_call_that_changed_it_returns() {
    let logs = tempfile::tempdir().unwrap();
    let manager = McpManager::new(
        vec![notifier("trusted", true), notifier("untrusted", false)],
        Some(logs.path().into()),
    );
    let cancel = CancellationToken::new();
    let tools = manager.connect("trusted", false).await.unwrap();
    assert_eq!(
        names(&tools),
        ["add_tool", "remove_tool", "log", "login", "broken_chart", "emit_event"]
    );
    let err = manager.call("trusted", "added", &json!({"word": "hi"}), &cancel).await.unwrap_err();
    assert_eq!(err, McpError::UnknownTool { server: "trusted".into(), tool: "added".into() });

    manager.call("trusted", "add_tool", &json!({}), &cancel).await.unwrap();
    // No waiting: the call returned after the list was fetched again.
    let added = manager.tool("trusted", "added").expect("the added tool is listed");
    assert_eq!(added.input_schema["properties"]["word"]["type"], "string");
    assert!(added.read_only, "a trusted server's read-only hint counts for a new tool too");
    let out = manager.call("trusted", "added", &json!({"word": "hi"}), &cancel).await.unwrap();
    assert_eq!(out.text, "added says hi");
    assert_eq!(manager.statuses()[0].tools.len(), 7);

    manager.call("trusted", "remove_tool", &json!({}), &cancel).await.unwrap();
    assert!(manager.tool("trusted", "added").is_none());
    let err = manager.call("trusted", "added", &json!({"word": "hi"}), &cancel).await.unwrap_err();
    assert_eq!(err, McpError::UnknownTool { server: "trusted".into(), tool: "added".into() });
    let log = std::fs::read_to_string(logs.path().join("trusted.log")).unwrap();
    assert!(log.contains("[lifecycle] tool list changed (7 tools); added: added\n"), "{log}");
    assert!(log.contains("[lifecycle] tool list changed (6 tools); removed: added\n"), "{log}");

    // A tool that appears later is judged like the first ones: the same hint from a server
    // nobody trusted is only a claim.
    manager.call("untrusted", "add_tool", &json!({}), &cancel).await.unwrap();
    assert!(!manager.tool("untrusted", "added").expect("listed").read_only);
    assert!(manager.tools("untrusted").unwrap().iter().all(|t| !t.read_only));
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn log_messages_are_logged_sanitised_and_other_notifications_kept_as_events() {
    let manager = McpManager::new(vec![notifier("notifier", true)], None);
    let cancel = CancellationToken::new();
    let args = json!({"level": "warning", "message": "disk\nalmost full \u{1b}[31m"});
    manager.call("notifier", "log", &args, &cancel).await.unwrap();
    eventually("the log message", || {
        manager.statuses()[0]
            .log_lines
            .iter()
            .any(|l| l.ends_with(" [warning]   notifier: disk almost full  [31m"))
    })
    .await;
    let before = chrono::Utc::now();
    manager.call("notifier", "emit_event", &json!({"subject": "hello"}), &cancel).await.unwrap();
    eventually("the event", || !manager.events("notifier").is_empty()).await;
    let events = manager.events("notifier");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].method, "event/new_email");
    assert_eq!(events[0].params, Some(json!({"subject": "hello"})));
    assert!(events[0].at >= before - chrono::Duration::seconds(1));
    assert_eq!(manager.statuses()[0].events, events);
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn progress_reaches_the_caller_and_keeps_a_long_call_alive_past_its_idle_timeout() {
    // Idle timeout 2 s; the operation takes 4 s and reports progress every second.
    let config = ServerConfig { call_timeout: Some(Duration::from_secs(2)), ..stdio("long") };
    let manager = McpManager::new(vec![config], None);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink: skald_mcp::ProgressSink = {
        let seen = seen.clone();
        Arc::new(move |p: Progress| seen.lock().unwrap().push(p))
    };
    let cancel = CancellationToken::new();
    let args = json!({"duration": 4, "steps": 4});
    let started = Instant::now();
    let out = manager
        .call_watched("long", "trigger-long-running-operation", &args, &cancel, hooks(sink))
        .await
        .unwrap();
    assert!(out.text.contains("Long running operation completed"), "{}", out.text);
    assert!(started.elapsed() >= Duration::from_secs(4), "{:?}", started.elapsed());
    let seen = seen.lock().unwrap().clone();
    let steps: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0], "{seen:?}");
    assert!(seen.iter().all(|p| p.total == Some(4.0)), "{seen:?}");

    // Without progress inside the idle time, the same timeout ends it.
    let args = json!({"duration": 3, "steps": 1});
    let err = manager.call("long", "trigger-long-running-operation", &args, &cancel).await;
    assert!(matches!(err, Err(McpError::Timeout { secs: 2, .. })), "{err:?}");
    manager.shutdown().await;
}

/// Answers every form as `answer` says, keeping what it was asked.
struct Asked {
    forms: Mutex<Vec<Form>>,
    answer: fn(&Form) -> Answer,
}

impl Elicitor for Asked {
    fn elicit(&self, _server: &str, form: Form) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let answer = (self.answer)(&form);
        self.forms.lock().unwrap().push(form);
        Box::pin(async move { answer })
    }
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_servers_question_is_put_to_the_elicitor_as_a_form_and_its_answer_sent_back() {
    let accept = Arc::new(Asked {
        forms: Mutex::new(Vec::new()),
        answer: |form| {
            let mut values = form.defaults();
            values.insert("name".into(), json!("Ada Lovelace"));
            values.insert("integer".into(), json!("7"));
            Answer::Accept(values)
        },
    });
    let manager = McpManager::new(vec![stdio("asks")], None);
    manager.set_elicitor(accept.clone());
    let tools = manager.connect("asks", false).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "trigger-elicitation-request"), "elicitation offered");
    let cancel = CancellationToken::new();
    let out =
        manager.call("asks", "trigger-elicitation-request", &json!({}), &cancel).await.unwrap();
    assert!(out.text.contains("- Name: Ada Lovelace"), "{}", out.text);
    assert!(out.text.contains("- Favorite Integer: 7"), "a number typed as text: {}", out.text);
    let form = accept.forms.lock().unwrap()[0].clone();
    let field = |n: &str| form.fields.iter().find(|f| f.name == n).unwrap().clone();
    assert!(field("name").required);
    assert!(matches!(field("untitledMultipleSelectEnum").kind, FieldKind::MultiChoice { .. }));
    assert!(matches!(field("legacyTitledEnum").kind, FieldKind::Choice { .. }));
    assert_eq!(field("integer").default, Some(json!(42)));
    manager.shutdown().await;

    // An answer that does not fit the form is not sent: the server hears "cancel".
    let wrong = Arc::new(Asked {
        forms: Mutex::new(Vec::new()),
        answer: |_| Answer::Accept(serde_json::Map::from_iter([("integer".into(), json!(500))])),
    });
    let manager = McpManager::new(vec![stdio("asks")], None);
    manager.set_elicitor(wrong);
    let out =
        manager.call("asks", "trigger-elicitation-request", &json!({}), &cancel).await.unwrap();
    assert!(out.text.contains("cancelled"), "{}", out.text);
    manager.shutdown().await;

    // Without an elicitor Skald does not say it can ask, and the server does not offer the tool.
    let manager = McpManager::new(vec![stdio("asks")], None);
    let tools = manager.connect("asks", false).await.unwrap();
    assert!(!tools.iter().any(|t| t.name == "trigger-elicitation-request"));
    manager.shutdown().await;
}

fn hooks(sink: skald_mcp::ProgressSink) -> skald_mcp::CallHooks {
    skald_mcp::CallHooks { progress: Some(sink), elicitor: None }
}
