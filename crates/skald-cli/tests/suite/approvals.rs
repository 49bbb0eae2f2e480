//! The approval flow across processes, as a user drives it from terminals: chat parks with a diff,
//! inbox shows it, deny with a note, resume, approve from another process, file written — the
//! same with the resuming process killed while it waits — and bypasses granted by one command that
//! later commands honour.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall};

struct Setup {
    _dir: tempfile::TempDir,
    data: String,
    work: std::path::PathBuf,
    fake: FakeLlm,
}

/// A data dir, a working dir with `main.rs`, and a fake provider with nothing scripted yet.
async fn bare_setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("main.rs"), "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    let fake = FakeLlm::start().await.unwrap();
    let data = dir.path().join("data").to_str().unwrap().to_string();
    Setup { _dir: dir, data, work, fake }
}

/// The model edits main.rs with two spaces (rejected in these flows), then with a tab.
async fn setup() -> Setup {
    setup_with([edit("  println"), edit("\tprintln"), Reply::text("Indented with a tab.")]).await
}

async fn setup_with(replies: impl IntoIterator<Item = Reply>) -> Setup {
    let s = bare_setup().await;
    for reply in replies {
        s.fake.push(reply);
    }
    s
}

/// An edit of main.rs's indentation.
fn edit(new: &str) -> Reply {
    Reply::tool_calls(vec![ScriptedToolCall::new(
        "edit_file",
        &serde_json::json!({ "path": "main.rs", "old": "    println", "new": new }).to_string(),
    )])
}

fn cmd(s: &Setup, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skald"));
    c.arg("--data-dir").arg(&s.data).args(args);
    c.env("SKALD_LLM_BASE_URL", s.fake.base_url())
        .env("SKALD_LLM_MODEL", "fake-model")
        .env_remove("SKALD_LLM_API_KEY")
        .env_remove("SKALD_DATA_DIR");
    c
}

fn run(s: &Setup, args: &[&str]) -> (i32, String, String) {
    let out = cmd(s, args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn inbox(s: &Setup) -> Value {
    let (code, out, err) = run(s, &["--json", "inbox"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Waits until the inbox holds a call other than `not`.
fn wait_for_new_item(s: &Setup, not: i64) -> Value {
    let start = Instant::now();
    loop {
        let inbox = inbox(s);
        if let Some(item) =
            inbox["items"].as_array().unwrap().iter().find(|i| i["tool_call_id"] != not)
        {
            return item.clone();
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no second approval appeared: {inbox}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_exit(child: &mut Child, within: Duration) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(start.elapsed() < within, "process did not exit in {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Chat parks the first edit; the inbox shows its diff; deny it with a note. Returns the call id.
fn park_and_deny(s: &Setup) -> i64 {
    let work = s.work.to_str().unwrap();
    let (code, out, err) = run(s, &["chat", "--workdir", work, "indent main.rs"]);
    assert_eq!(code, 3, "chat must exit 3 while parked\n{out}\n{err}");
    assert!(out.contains("needs approval"), "{out}");
    let inbox = inbox(s);
    assert_eq!(inbox["total"], 1, "{inbox}");
    let item = &inbox["items"][0];
    assert_eq!(item["kind"], "write");
    let unified = item["diff"]["unified"].as_str().unwrap();
    assert!(
        unified.contains("-    println!(\"hi\");") && unified.contains("+  println!(\"hi\");"),
        "{unified}"
    );
    let call = item["tool_call_id"].as_i64().unwrap();
    let (code, out, err) = run(s, &["deny", &call.to_string(), "--note", "use tabs"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("rejected"), "{out}");
    // A second, different decision about the same call is refused.
    let (code, _, err) = run(s, &["approve", &call.to_string()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("already rejected"), "{err}");
    assert_eq!(
        std::fs::read_to_string(s.work.join("main.rs")).unwrap(),
        "fn main() {\n    println!(\"hi\");\n}\n"
    );
    call
}

fn rejection_reached_the_model(s: &Setup) {
    let reqs = s.fake.requests();
    let tool_msgs: Vec<String> = reqs
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert!(
        tool_msgs.iter().any(|c| c == "User rejected this tool call. Reason: use tabs"),
        "{tool_msgs:?}"
    );
    assert!(reqs.iter().all(|r| r.validation_error.is_none()), "a request was invalid");
}

fn file_has_tab(s: &Setup) {
    assert_eq!(
        std::fs::read_to_string(s.work.join("main.rs")).unwrap(),
        "fn main() {\n\tprintln!(\"hi\");\n}\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_resume_and_approve_from_another_process() {
    let s = setup().await;
    let first = park_and_deny(&s);
    let mut resume = cmd(&s, &["--json", "resume", "1", "--wait"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let second = wait_for_new_item(&s, first);
    rejection_reached_the_model(&s);
    let id = second["tool_call_id"].as_i64().unwrap().to_string();
    let (code, out, err) = run(&s, &["approve", &id]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("the running turn continues"), "{out}");
    assert_eq!(wait_exit(&mut resume, Duration::from_secs(20)), 0);
    let mut stdout = String::new();
    std::io::Read::read_to_string(resume.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let events: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"]["type"].as_str()).collect();
    assert!(kinds.contains(&"tool_rejected") && kinds.contains(&"file_changed"), "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "done").count(), 1, "{kinds:?}");
    file_has_tab(&s);
    let detail = run(&s, &["--json", "sessions", "show", "1"]).1;
    let detail: Value = serde_json::from_str(&detail).unwrap();
    let statuses: Vec<&str> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "tool")
        .filter_map(|m| m["status"].as_str())
        .collect();
    assert_eq!(statuses, ["rejected", "done"]);
    assert!(Path::new(&s.data).join("skald.db").is_file());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resume_killed_while_parked_settles_on_the_next_resume() {
    let s = setup().await;
    let first = park_and_deny(&s);
    let mut resume = cmd(&s, &["resume", "1", "--wait"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let second = wait_for_new_item(&s, first);
    resume.kill().unwrap();
    resume.wait().unwrap();
    let id = second["tool_call_id"].as_i64().unwrap().to_string();
    let (code, out, err) = run(&s, &["approve", &id]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("skald resume 1"), "nothing runs it now: {out}");
    assert_eq!(
        std::fs::read_to_string(s.work.join("main.rs")).unwrap(),
        "fn main() {\n    println!(\"hi\");\n}\n"
    );
    let (code, out, err) = run(&s, &["resume", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    file_has_tab(&s);
    rejection_reached_the_model(&s);
    assert_eq!(inbox(&s)["total"], 0);
}

/// `skald chat` in the work dir whose model calls `tool` once, then — unless the call `parks`
/// the turn (exit 3), which then never asks the model again — answers.
fn chat_calling(s: &Setup, tool: &str, args: Value, parks: bool) -> (i32, String, String) {
    s.fake.push(Reply::tool_call(tool, &args.to_string()));
    if !parks {
        s.fake.push(Reply::text("done"));
    }
    run(s, &["chat", "--workdir", s.work.to_str().unwrap(), "go"])
}

fn bypasses(s: &Setup) -> Vec<Value> {
    let (code, out, err) = run(s, &["--json", "bypass", "list"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<Vec<Value>>(&out).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bypass_from_skald_approve_lets_a_later_chat_run_unasked_until_revoked() {
    let s = bare_setup().await;
    let write = |name: &str| serde_json::json!({ "path": name, "content": "x\n" });
    let (code, out, err) = chat_calling(&s, "write_file", write("a.txt"), true);
    assert_eq!(code, 3, "{out}{err}");
    let call = inbox(&s)["items"][0]["tool_call_id"].as_i64().unwrap().to_string();
    let (code, out, err) = run(&s, &["approve", &call, "--bypass", "15m"]);
    assert_eq!(code, 0, "{out}{err}");
    // What it covers, who granted it and how long it has left (under 15 minutes by now).
    let line = out.lines().find(|l| l.trim_start().starts_with("bypass ")).unwrap_or_default();
    assert!(line.contains("· session 1 (cli) · filesystem tools · granted by cli · 1"), "{out}");
    assert!(line.ends_with("m left"), "{out}");
    // The approving command has exited; a separate resume settles the approved call.
    s.fake.push(Reply::text("done"));
    let (code, out, err) = run(&s, &["resume", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(s.work.join("a.txt").is_file());

    // A later `skald chat`, another process again: its write runs without asking.
    let (code, out, err) = chat_calling(&s, "write_file", write("b.txt"), false);
    assert_eq!(code, 0, "the bypass should cover it\n{out}{err}");
    assert!(s.work.join("b.txt").is_file());
    let listed = bypasses(&s);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        (listed[0]["scope"].as_str(), listed[0]["duration"].as_str()),
        (Some("category"), Some("fifteen_minutes"))
    );

    let id = listed[0]["id"].as_i64().unwrap().to_string();
    let (code, out, err) = run(&s, &["bypass", "revoke", &id]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("is revoked"), "{out}");
    assert!(bypasses(&s).is_empty());
    let (code, out, err) = chat_calling(&s, "write_file", write("c.txt"), true);
    assert_eq!(code, 3, "revoked: the write asks again\n{out}{err}");
    assert!(!s.work.join("c.txt").exists());
}

/// A parked command is printed as the command and where it runs, not as a write.
#[tokio::test(flavor = "multi_thread")]
async fn a_parked_command_says_which_command_in_which_directory_needs_approval() {
    let s = bare_setup().await;
    let (code, out, err) =
        chat_calling(&s, "execute_cmd", serde_json::json!({ "command": "ls -la" }), true);
    assert_eq!(code, 3, "{out}{err}");
    let work = std::fs::canonicalize(&s.work).unwrap();
    let line = out.lines().find(|l| l.contains("needs approval")).unwrap_or_default();
    assert_eq!(
        line.trim(),
        format!("⏸ command `ls -la` in {} needs approval (call 1)", work.display()),
        "{out}"
    );
    assert!(!out.contains("write to"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bypass_scope_that_does_not_fit_the_call_is_refused_and_records_nothing() {
    let s = bare_setup().await;
    let (code, out, err) =
        chat_calling(&s, "execute_cmd", serde_json::json!({ "command": "true" }), true);
    assert_eq!(code, 3, "{out}{err}");
    let call = inbox(&s)["items"][0]["tool_call_id"].as_i64().unwrap().to_string();
    let (code, out, err) =
        run(&s, &["approve", &call, "--bypass", "1h", "--bypass-scope", "mcp_server"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        err.trim(),
        "skald: error: `mcp_server` bypass does not fit `execute_cmd`: it is not an MCP tool; \
         choose `category` (shell) or `all`"
    );
    // Nothing was recorded: the call still waits and no bypass exists.
    let inbox = inbox(&s);
    assert_eq!(inbox["items"][0]["tool_call_id"].as_i64().unwrap().to_string(), call, "{inbox}");
    assert!(bypasses(&s).is_empty());
    // `--bypass-scope` alone is a usage error.
    let (code, _, err) = run(&s, &["approve", &call, "--bypass-scope", "all"]);
    assert_eq!(code, 2, "{err}");
}

/// A model request holds the tool results and, after them, the user rows: the steer must follow
/// the settled call, never stand in front of an "interrupted" answer.
fn last_request_ends_with_the_steer(s: &Setup, result: &str, steer: &str) {
    let reqs = s.fake.requests();
    let msgs = reqs.last().unwrap().body["messages"].as_array().cloned().unwrap();
    let talk: Vec<(String, String)> = msgs
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| (m["role"].as_str().unwrap().to_string(), m["content"].to_string()))
        .collect();
    let tail = &talk[talk.len() - 2..];
    assert_eq!(tail[0].0, "tool", "{talk:?}");
    assert!(tail[0].1.contains(result), "{talk:?}");
    assert_eq!(tail[1], ("user".to_string(), serde_json::json!(steer).to_string()), "{talk:?}");
    assert!(!reqs.iter().any(|r| r.body.to_string().contains("interrupted")), "{talk:?}");
}

/// Decision 44 from the terminal: a second `chat` while the first one's edit is parked is
/// queued (exit 3, no model request); approve + resume runs the edit once, then the model reads
/// the queued message.
#[tokio::test(flavor = "multi_thread")]
async fn a_chat_sent_while_a_call_is_parked_is_queued_until_the_decision_is_settled() {
    let s = setup_with([edit("\tprintln"), Reply::text("Indented, and noted.")]).await;
    let work = s.work.to_str().unwrap();
    let (code, out, err) = run(&s, &["chat", "--workdir", work, "indent main.rs"]);
    assert_eq!(code, 3, "{out}{err}");
    let (code, out, err) = run(&s, &["chat", "--workdir", work, "also keep the braces"]);
    assert_eq!(code, 3, "a queued message exits like a parked chat\n{out}{err}");
    assert!(out.contains("queued: session 1 waits for your decision on call 1"), "{out}");
    assert!(out.contains("skald resume 1"), "{out}");
    assert_eq!(s.fake.requests().len(), 1, "nothing reached the model");
    assert_eq!(inbox(&s)["total"], 1, "the edit still waits");
    let (_, tree, _) = run(&s, &["sessions", "show", "1"]);
    assert!(tree.ends_with("queued: also keep the braces\n"), "{tree}");

    let (code, out, err) = run(&s, &["approve", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(&s, &["resume", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("» also keep the braces"), "the folded message is shown: {out}");
    file_has_tab(&s);
    assert_eq!(s.fake.requests().len(), 2);
    last_request_ends_with_the_steer(&s, "main.rs", "also keep the braces");
    let (_, tree, _) = run(&s, &["sessions", "show", "1"]);
    assert!(tree.contains("user: also keep the braces") && !tree.contains("queued:"), "{tree}");
}

/// `skald resume` ends like `chat` when the continued turn parks again: exit 3 with the hint,
/// instead of waiting for a decision nobody may be about to make.
#[tokio::test(flavor = "multi_thread")]
async fn resume_exits_3_when_the_turn_parks_again() {
    let s = setup().await;
    park_and_deny(&s);
    let mut resume =
        cmd(&s, &["resume", "1"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    assert_eq!(wait_exit(&mut resume, Duration::from_secs(20)), 3);
    let mut stdout = String::new();
    std::io::Read::read_to_string(resume.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(stdout.contains("needs approval (call 2)"), "{stdout}");
    assert!(stdout.contains("waiting for your decision in session 1"), "{stdout}");
    rejection_reached_the_model(&s);
    let items = inbox(&s)["items"].as_array().unwrap().clone();
    assert_eq!(items.iter().map(|i| i["tool_call_id"].as_i64().unwrap()).collect::<Vec<_>>(), [2]);
    // Decided later, a plain resume finishes the turn.
    assert_eq!(run(&s, &["approve", "2"]).0, 0);
    let (code, out, err) = run(&s, &["resume", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    file_has_tab(&s);
}
