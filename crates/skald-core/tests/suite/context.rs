//! The context builder on real SQLite files: snapshots of every part, healing, hiding, the
//! two-process byte-identity check, a 60-round engine turn, and a property test against the
//! strict fake provider's validator.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use skald_core::approval::rejection_message;
use skald_core::config::DatetimeConfig;
use skald_core::context::call_results::{
    AWAITING_ANSWER, AWAITING_APPROVAL, CANCELLED_AWAITING_ANSWER, CANCELLED_AWAITING_APPROVAL,
    CANCELLED_RUNNING, CANCELLED_UNSTARTED, NEVER_STARTED,
};
use skald_core::context::{
    BuildSettings, ContextInputs, INTERRUPTED_RUNNING, MemoryFile, MessageBuilder,
    hidden_placeholder,
};
use skald_core::tools::ToolRegistry;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::ToolStatus;
use skald_store::repo::approvals::NewApprovalRequest;
use skald_store::repo::history::{NewMessage, Role, TokenUsage};
use skald_store::repo::sessions::NewSession;
use skald_store::{ManualClock, Store};
use skald_testkit::{Reply, validate_chat_request};

pub fn fixed_now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 17, 20, 7, 42).single().unwrap()
}

/// A session on a real database file in a temp dir.
pub struct Db {
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub session_id: i64,
    pub stack_id: i64,
}

impl Db {
    pub async fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        Db::open_at(dir).await
    }

    async fn open_at(dir: tempfile::TempDir) -> Db {
        let store = Store::open(
            &dir.path().join(skald_store::DB_FILE_NAME),
            Arc::new(ManualClock::new(fixed_now())),
        )
        .await
        .unwrap();
        let created = store.create_session(&NewSession::interactive("web")).await.unwrap();
        Db { dir, store, session_id: created.session_id, stack_id: created.root_stack_id }
    }

    pub async fn user(&self, text: &str) -> i64 {
        self.message(Role::User, text, None).await
    }

    pub async fn assistant(&self, text: &str) -> i64 {
        self.message(Role::Assistant, text, None).await
    }

    pub async fn message(&self, role: Role, text: &str, usage: Option<TokenUsage>) -> i64 {
        self.store
            .append_message(&NewMessage {
                stack_id: self.stack_id,
                role: Some(role),
                content: text.into(),
                usage,
                ..Default::default()
            })
            .await
            .unwrap()
    }

    /// An assistant row with calls; returns (message id, call ids). Calls start `pending`.
    pub async fn calls(&self, text: &str, calls: &[(&str, &str)]) -> (i64, Vec<i64>) {
        let calls: Vec<(String, String, Option<String>)> =
            calls.iter().map(|(n, a)| (n.to_string(), a.to_string(), None)).collect();
        self.store
            .append_assistant_with_calls(
                &NewMessage { stack_id: self.stack_id, content: text.into(), ..Default::default() },
                &calls,
            )
            .await
            .unwrap()
    }

    pub async fn settle(&self, call: i64, status: ToolStatus, result: Option<&str>) {
        if status == ToolStatus::Running {
            self.store.set_tool_status(call, ToolStatus::Running, None).await.unwrap();
            return;
        }
        if status != ToolStatus::Pending {
            self.store.set_tool_status(call, status, result).await.unwrap();
        }
    }

    /// One finished read: an assistant row with one `read_file` call done with `result`.
    pub async fn read(&self, path: &str, result: &str) -> i64 {
        let (_, ids) = self.calls("", &[("read_file", &json!({ "path": path }).to_string())]).await;
        self.settle(ids[0], ToolStatus::Done, Some(result)).await;
        ids[0]
    }

    pub async fn build(&self, settings: BuildSettings, inputs: &ContextInputs) -> Vec<Value> {
        MessageBuilder::new(self.store.clone(), settings).build(inputs).await.unwrap().messages
    }

    pub fn inputs(&self) -> ContextInputs {
        ContextInputs {
            stack_id: self.stack_id,
            scratchpad_session_id: self.session_id,
            agent_prompt: "You are Skald, a careful assistant.".into(),
            memory: Vec::new(),
            extra_static: None,
            substitutions: BTreeMap::new(),
            cache_hints: false,
            dynamic_fragments: Vec::new(),
            tail_reminder: None,
            workdir: PathBuf::from("/home/ada/project"),
            now: fixed_now(),
        }
    }
}

pub fn settings() -> BuildSettings {
    BuildSettings {
        max_history_messages: 30,
        max_tool_result_chars: None,
        compaction_enabled: false,
        compaction: None,
        datetime: DatetimeConfig { enabled: false, round_minutes: None },
        timezone: None,
    }
}

/// The messages with the machine-dependent OS line replaced, ready to snapshot.
fn redacted(messages: &[Value]) -> Value {
    let mut v = Value::Array(messages.to_vec());
    redact(&mut v);
    v
}

fn redact(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("Operating system: ") => {
            *s =
                s.lines()
                    .map(|l| {
                        if l.starts_with("Operating system: ") {
                            "Operating system: [os]"
                        } else {
                            l
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        Value::Object(o) => o.values_mut().for_each(redact),
        _ => {}
    }
}

pub fn text_of(msg: &Value) -> String {
    match &msg["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

fn tool_defs() -> Vec<Value> {
    ToolRegistry::builtin().defs().into_iter().map(|d| d.to_openai()).collect()
}

fn assert_valid(messages: &[Value]) {
    let body = json!({ "model": "m", "messages": messages, "tools": tool_defs() });
    if let Err(e) = validate_chat_request(&body) {
        panic!("invalid request: {e}\n{}", serde_json::to_string_pretty(messages).unwrap());
    }
}

// ---------------------------------------------------------------------------------------------
// Snapshots of each part present / absent

#[tokio::test]
async fn a_first_message_gets_only_the_system_prompt_the_message_and_the_environment() {
    let db = Db::new().await;
    db.user("What is in this folder?").await;
    let msgs = db.build(settings(), &db.inputs()).await;
    assert_eq!(msgs.len(), 3, "no scratchpad, summary or reminder parts when they are empty");
    assert!(!text_of(&msgs[2]).contains("Current date"), "date disabled in settings");
    assert_valid(&msgs);
    insta::assert_json_snapshot!("context_minimal", redacted(&msgs));
}

#[tokio::test]
async fn every_part_appears_in_the_reference_order_when_present() {
    let db = Db::new().await;
    db.store.set_scratchpad(db.session_id, "plan", "1. read 2. fix").await.unwrap();
    db.store.set_scratchpad(db.session_id, "branch", "fix/login").await.unwrap();
    let old = db.user("an old question").await;
    db.store
        .append_summary(db.stack_id, "## Goal\nFix the login bug.", old, 900, 120)
        .await
        .unwrap();
    db.user("Continue please.").await;
    let mut inputs = db.inputs();
    inputs.memory = vec![
        MemoryFile { shown_path: "MEMORY.md".into(), content: Some("User prefers tabs.\n".into()) },
        MemoryFile { shown_path: "notes/todo.md".into(), content: None },
    ];
    inputs.extra_static = Some("MCP servers: none.".into());
    inputs.dynamic_fragments = vec!["Relevant memory: the repo uses pnpm.".into(), "  ".into()];
    inputs.tail_reminder = Some("Remember to answer briefly.".into());
    let mut s = settings();
    s.datetime = DatetimeConfig { enabled: true, round_minutes: Some(15) };
    s.timezone = Some("Europe/Rome".into());
    let msgs = db.build(s, &inputs).await;
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "system", "system", "user", "system", "system"]);
    assert!(text_of(&msgs[1]).contains("<note key=\"branch\">fix/login</note>"));
    assert!(text_of(&msgs[2]).contains("Fix the login bug."));
    assert!(!msgs.iter().any(|m| text_of(m).contains("an old question")), "before the boundary");
    // 20:07 UTC is 22:07 in Rome in June, rounded down to the quarter hour.
    assert!(text_of(&msgs[4]).contains("2026-06-17T22:00:00+02:00 (Europe/Rome)"));
    assert_valid(&msgs);
    insta::assert_json_snapshot!("context_all_parts", redacted(&msgs));
}

#[tokio::test]
async fn consecutive_prompts_are_coalesced_and_failed_ones_left_out() {
    let db = Db::new().await;
    db.user("first part").await;
    let dead = db.user("this one died with the process").await;
    db.store.mark_message_failed(dead).await.unwrap();
    db.store
        .append_message(&NewMessage {
            stack_id: db.stack_id,
            role: Some(Role::User),
            content: "second part, with a file".into(),
            metadata: Some(
                json!({ "attachments": [{ "name": "log.txt", "path": "/tmp/log.txt" }] })
                    .to_string(),
            ),
            ..Default::default()
        })
        .await
        .unwrap();
    let msgs = db.build(settings(), &db.inputs()).await;
    let users: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 1);
    let text = text_of(users[0]);
    assert!(text.starts_with("first part\n\nsecond part"), "{text}");
    assert!(text.contains("- log.txt: /tmp/log.txt"));
    assert!(!text.contains("died"));
    assert_valid(&msgs);
    insta::assert_json_snapshot!("context_coalesced", redacted(&msgs));
}

/// One call of every status a call can be in when a request is built, each stored the way the
/// engine stores it, plus an oversized result of an earlier turn.
#[tokio::test]
async fn the_model_is_told_each_calls_fate_once() {
    let db = Db::new().await;
    db.user("Read the build log").await;
    db.read("build.log", &"warning: unused variable\n".repeat(20)).await;
    db.assistant("The log only has warnings.").await;
    db.user("Now fix everything").await;
    let file = r#"{"path":"a.txt"}"#;
    let write = r#"{"path":"a.txt","content":"x"}"#;
    let secret = r#"{"path":"secrets/key","content":"x"}"#;
    let ask = r#"{"title":"Which file?","question":"a.txt or b.txt?"}"#;
    let cases: Vec<(&str, &str, ToolStatus, Option<String>)> = vec![
        ("read_file", file, ToolStatus::Done, Some("hello".into())),
        ("read_file", r#"{"path":"gone.txt"}"#, ToolStatus::Failed, Some("file not found: gone.txt".into())),
        // Settled by resume: it was running when its process died.
        ("execute_cmd", r#"{"command":"make"}"#, ToolStatus::Failed, Some(INTERRUPTED_RUNNING.into())),
        // The same, stored by a version that put the label into the text.
        (
            "execute_cmd",
            r#"{"command":"make install"}"#,
            ToolStatus::Failed,
            Some(format!("Error: {INTERRUPTED_RUNNING}")),
        ),
        ("write_file", write, ToolStatus::Rejected, Some(rejection_message(Some(" use b.txt ")))),
        ("write_file", write, ToolStatus::Rejected, Some(rejection_message(None))),
        // As the gate words a rule's denial.
        (
            "write_file",
            secret,
            ToolStatus::Rejected,
            Some("Denied by policy: `write_file` is not allowed here (/home/ada/project/secrets/key).".into()),
        ),
        ("execute_cmd", r#"{"command":"sleep 100"}"#, ToolStatus::Cancelled, Some(CANCELLED_RUNNING.into())),
        ("write_file", write, ToolStatus::Cancelled, Some(CANCELLED_AWAITING_APPROVAL.into())),
        ("ask_user_clarification", ask, ToolStatus::Cancelled, Some(CANCELLED_AWAITING_ANSWER.into())),
        ("read_file", file, ToolStatus::Cancelled, Some(CANCELLED_UNSTARTED.into())),
        // Parked for a human, with the request recorded.
        ("write_file", write, ToolStatus::Pending, None),
        ("ask_user_clarification", ask, ToolStatus::Pending, None),
        // Never reached the gate: the run died mid-reply.
        ("read_file", file, ToolStatus::Pending, None),
        // Left running by a process that died.
        ("execute_cmd", r#"{"command":"make test"}"#, ToolStatus::Running, None),
    ];
    let specs: Vec<(&str, &str)> = cases.iter().map(|(n, a, ..)| (*n, *a)).collect();
    let (_, ids) = db.calls("On it.", &specs).await;
    for (id, (_, _, status, result)) in ids.iter().zip(&cases) {
        db.settle(*id, *status, result.as_deref()).await;
    }
    db.store
        .create_approval_request(&NewApprovalRequest {
            tool_call_id: ids[11],
            session_id: db.session_id,
            stack_id: db.stack_id,
            kind: skald_protocol::ApprovalKind::Write,
            tool_name: "write_file".into(),
            arguments: write.into(),
            path: Some("/home/ada/project/a.txt".into()),
            command: None,
            workdir: None,
            diff: None,
            summary: "write_file a.txt".into(),
        })
        .await
        .unwrap();
    db.store
        .create_question(
            ids[12],
            db.session_id,
            db.stack_id,
            "Which file?",
            "a.txt or b.txt?",
            "[]",
        )
        .await
        .unwrap();
    let mut s = settings();
    s.max_tool_result_chars = Some(200);
    let msgs = db.build(s, &db.inputs()).await;
    let results: Vec<String> = msgs.iter().filter(|m| m["role"] == "tool").map(text_of).collect();
    let interrupted = format!("Error: {INTERRUPTED_RUNNING}");
    assert_eq!(results[0], hidden_placeholder("read_file", 500, 200));
    assert_eq!(results[3..5], [interrupted.clone(), interrupted.clone()], "labelled once");
    assert_eq!(results[12..], [AWAITING_APPROVAL, AWAITING_ANSWER, NEVER_STARTED, &interrupted]);
    for r in &results {
        assert!(!r.contains("Error: Error") && r.matches("Error:").count() <= 1, "{r}");
    }
    assert_valid(&msgs);
    insta::assert_json_snapshot!("context_tool_statuses", redacted(&msgs));
}

/// A call left running by a process that died is settled by resume and reaches the model as one
/// error that says the call may have run.
#[tokio::test]
async fn a_call_a_crash_interrupted_reaches_the_model_labelled_once() {
    let rig = super::turn::Rig::new("").await;
    let sid = rig.engine.new_session("test").await.unwrap();
    let store = rig.store().await;
    let stack = store.root_frame(sid).await.unwrap().id;
    let user = NewMessage {
        stack_id: stack,
        role: Some(Role::User),
        content: "build it".into(),
        ..Default::default()
    };
    store.append_message(&user).await.unwrap();
    let reply = NewMessage { stack_id: stack, content: "Building.".into(), ..Default::default() };
    let call = ("execute_cmd".to_string(), r#"{"command":"make"}"#.to_string(), None);
    let (_, ids) = store.append_assistant_with_calls(&reply, &[call]).await.unwrap();
    store.start_tool_call(ids[0]).await.unwrap();

    rig.fake.push(Reply::text("I will check what make did first."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(rig.fake.pending_replies(), 0);
    let request = rig.fake.requests().pop().unwrap();
    let results: Vec<String> = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(text_of)
        .collect();
    assert_eq!(results, [format!("Error: {INTERRUPTED_RUNNING}")]);
    assert_eq!(results[0].matches("Error:").count(), 1, "{}", results[0]);
    assert!(results[0].starts_with("Error: the run stopped before this call's result was saved"));
}

#[tokio::test]
async fn big_results_of_earlier_turns_are_hidden_and_the_current_turns_stay_whole() {
    let db = Db::new().await;
    let big_old = "o".repeat(300);
    let big_new = "n".repeat(300);
    db.user("read the old file").await;
    db.read("old.txt", &big_old).await;
    db.assistant("It is full of o.").await;
    db.user("now the new one").await;
    db.read("new.txt", &big_new).await;
    let mut s = settings();
    s.max_tool_result_chars = Some(100);
    let msgs = db.build(s, &db.inputs()).await;
    let results: Vec<String> = msgs.iter().filter(|m| m["role"] == "tool").map(text_of).collect();
    assert!(results[0].contains("hidden: response was 300 chars, exceeding the 100-char limit"));
    assert_eq!(results[1], big_new);
    let stored = db.store.tool_calls_for_stack_after(db.stack_id, 0).await.unwrap();
    assert_eq!(stored[0].result.as_deref(), Some(big_old.as_str()), "the row never changes");
    assert_valid(&msgs);
    insta::assert_json_snapshot!("context_hiding", redacted(&msgs));
}

#[tokio::test]
async fn include_keys_become_sentinels_that_substitutions_fill() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rules.md"), "Rules for <!-- PROJECT -->: be brief.").unwrap();
    let (prompt, keys) = skald_core::agents::resolve_directives(
        "You work on <!-- PROJECT -->.\n<!-- INCLUDE: rules.md -->\n<!-- a plain comment -->\n\
         Unknown: <!-- EMPTY_KEY -->",
        dir.path(),
        "",
    )
    .unwrap();
    assert_eq!(keys, ["PROJECT", "EMPTY_KEY"]);
    let db = Db::new().await;
    db.user("hi").await;
    let mut inputs = db.inputs();
    inputs.agent_prompt = prompt;
    inputs.substitutions =
        BTreeMap::from([("PROJECT".into(), "skald".into()), ("EMPTY_KEY".into(), String::new())]);
    let msgs = db.build(settings(), &inputs).await;
    let system = text_of(&msgs[0]);
    assert_eq!(
        system,
        // An empty value at the end leaves no trailing blank behind.
        "You work on skald.\nRules for skald: be brief.\n<!-- a plain comment -->\nUnknown:"
    );
    insta::assert_json_snapshot!("context_substitutions", redacted(&msgs[..1]));
}

#[tokio::test]
async fn cache_hints_turn_the_system_prompt_into_one_cacheable_block() {
    let db = Db::new().await;
    db.user("hi").await;
    let mut inputs = db.inputs();
    let plain = db.build(settings(), &inputs).await;
    inputs.cache_hints = true;
    let hinted = db.build(settings(), &inputs).await;
    assert!(plain[0]["content"].is_string());
    assert_eq!(hinted[0]["content"][0]["cache_control"], json!({ "type": "ephemeral" }));
    assert_eq!(text_of(&plain[0]), text_of(&hinted[0]));
    assert_eq!(plain[1..], hinted[1..], "only the system message changes");
    assert_valid(&hinted);
    insta::assert_json_snapshot!("context_cache_hints", redacted(&hinted[..1]));
}

#[tokio::test]
async fn replay_starts_after_the_latest_compaction_boundary() {
    let db = Db::new().await;
    db.user("task one").await;
    db.read("a.txt", "alpha").await;
    let first_end = db.assistant("done with one").await;
    db.store.append_summary(db.stack_id, "first summary", first_end, 500, 50).await.unwrap();
    db.user("task two").await;
    let second_end = db.assistant("done with two").await;
    db.store.append_summary(db.stack_id, "second summary", second_end, 400, 60).await.unwrap();
    db.user("task three").await;
    let built =
        MessageBuilder::new(db.store.clone(), settings()).build(&db.inputs()).await.unwrap();
    assert_eq!(built.boundary_message_id, second_end);
    let all: String = built.messages.iter().map(text_of).collect::<Vec<_>>().join("\n");
    assert!(all.contains("second summary") && !all.contains("first summary"));
    assert!(!all.contains("task one") && !all.contains("task two") && all.contains("task three"));
    assert_valid(&built.messages);
    insta::assert_json_snapshot!("context_after_boundary", redacted(&built.messages));
}

#[tokio::test]
async fn the_count_cap_never_starts_inside_the_current_turn() {
    let db = Db::new().await;
    db.user("old question").await;
    db.assistant("old answer").await;
    db.user("read many files").await;
    for i in 0..8 {
        db.read(&format!("f{i}.txt"), "x").await;
    }
    let mut s = settings();
    s.max_history_messages = 3;
    let msgs = db.build(s, &db.inputs()).await;
    let users: Vec<String> = msgs.iter().filter(|m| m["role"] == "user").map(text_of).collect();
    assert_eq!(users, ["read many files"], "the turn's prompt stays, older turns go");
    assert_eq!(msgs.iter().filter(|m| m["role"] == "tool").count(), 8);
    assert_valid(&msgs);
}

// ---------------------------------------------------------------------------------------------
// Byte-identical rebuild in another process

const CHILD_DB: &str = "SKALD_CONTEXT_CHILD_DB";
const CHILD_OUT: &str = "SKALD_CONTEXT_CHILD_OUT";

/// The bytes that must match across processes: every built message (the date is off; the OS
/// line is the same machine) plus the tool list in registry order.
async fn request_prefix_bytes(store: &Store, data_dir: &Path) -> Vec<u8> {
    let root = store.root_frame(1).await.unwrap();
    let agent = skald_core::agents::load(data_dir, "main").unwrap();
    let substitutions: BTreeMap<String, String> =
        agent.substitution_keys.iter().map(|k| (k.clone(), String::new())).collect();
    let inputs = ContextInputs {
        stack_id: root.id,
        scratchpad_session_id: 1,
        agent_prompt: agent.prompt.clone(),
        memory: vec![MemoryFile { shown_path: "MEMORY.md".into(), content: Some("m".into()) }],
        extra_static: Some("static extra".into()),
        substitutions,
        cache_hints: true,
        dynamic_fragments: Vec::new(),
        tail_reminder: None,
        workdir: PathBuf::from("/w"),
        now: Utc::now(), // differs between processes on purpose: it must not leak in
    };
    let built = MessageBuilder::new(store.clone(), settings()).build(&inputs).await.unwrap();
    let mut out = serde_json::to_vec(&built.messages).unwrap();
    out.extend(serde_json::to_vec(&tool_defs()).unwrap());
    out
}

/// Entry point of the child process spawned by the test below; without the env vars it checks
/// that two builds in this process agree.
#[tokio::test]
async fn context_prefix_child() {
    match (std::env::var(CHILD_DB), std::env::var(CHILD_OUT)) {
        (Ok(db), Ok(out)) => {
            let db = PathBuf::from(db);
            let store = Store::open(&db, Arc::new(ManualClock::new(fixed_now()))).await.unwrap();
            let bytes = request_prefix_bytes(&store, db.parent().unwrap()).await;
            std::fs::write(out, bytes).unwrap();
        }
        _ => {
            let db = seeded_session().await;
            let a = request_prefix_bytes(&db.store, db.dir.path()).await;
            let b = request_prefix_bytes(&db.store, db.dir.path()).await;
            assert_eq!(a, b);
        }
    }
}

async fn seeded_session() -> Db {
    let db = Db::new().await;
    db.store.set_scratchpad(db.session_id, "b", "2").await.unwrap();
    db.store.set_scratchpad(db.session_id, "a", "1").await.unwrap();
    db.user("list the files").await;
    let (_, ids) =
        db.calls("", &[("list_dir", r#"{"path":"."}"#), ("read_file", r#"{"path":"x"}"#)]).await;
    db.settle(ids[0], ToolStatus::Done, Some("x\ny")).await;
    db.settle(ids[1], ToolStatus::Running, None).await;
    db
}

#[tokio::test]
async fn a_context_rebuilt_in_another_process_is_byte_identical() {
    let db = seeded_session().await;
    let here = request_prefix_bytes(&db.store, db.dir.path()).await;
    let out = db.dir.path().join("child.json");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["suite::context::context_prefix_child", "--exact", "--nocapture"])
        .env(CHILD_DB, db.dir.path().join(skald_store::DB_FILE_NAME))
        .env(CHILD_OUT, &out)
        .status()
        .unwrap();
    assert!(status.success());
    let there = std::fs::read(&out).unwrap();
    assert!(!there.is_empty(), "the child wrote its build");
    assert_eq!(String::from_utf8(here).unwrap(), String::from_utf8(there).unwrap());
}

// ---------------------------------------------------------------------------------------------
// A 60-round turn with compaction off

#[tokio::test]
async fn every_request_of_a_sixty_round_turn_keeps_the_users_message() {
    let rig =
        super::turn::Rig::new("llm:\n  max_tool_rounds: 70\n  max_history_messages: 10\n").await;
    std::fs::write(rig.work.join("notes.txt"), "line one\nline two\n").unwrap();
    for _ in 0..60 {
        rig.fake.push(Reply::tool_call("read_file", r#"{"path":"notes.txt"}"#));
    }
    rig.fake.push(Reply::text("I read it sixty times."));
    let prompt = "Please read notes.txt over and over";
    let (_, outcome, _) = rig.turn(prompt).await;
    assert!(
        matches!(outcome, skald_core::turn::TurnOutcome::Final { ref content, .. }
            if content == "I read it sixty times."),
        "{outcome:?}"
    );
    let requests = rig.fake.requests();
    assert_eq!(requests.len(), 61);
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.validation_error, None, "request {i}");
        let msgs = r.body["messages"].as_array().unwrap();
        assert!(
            msgs.iter().any(|m| m["role"] == "user" && text_of(m).contains(prompt)),
            "request {i} lost the user's message"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Property: random valid-or-crashed logs always build a valid request

#[derive(Debug, Clone)]
enum Op {
    User { text: &'static str, failed: bool },
    Assistant { text: &'static str },
    Calls { text: &'static str, calls: Vec<(u8, bool, usize)> },
    Summary { at: usize },
}

fn text() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", " ", "ok", "a longer message with some words in it"])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (text(), any::<bool>()).prop_map(|(text, failed)| Op::User { text, failed }),
        2 => text().prop_map(|text| Op::Assistant { text }),
        4 => (text(), prop::collection::vec((0u8..6, any::<bool>(), 0usize..400), 1..4))
            .prop_map(|(text, calls)| Op::Calls { text, calls }),
        1 => (0usize..64).prop_map(|at| Op::Summary { at }),
    ]
}

const STATUSES: [ToolStatus; 6] = [
    ToolStatus::Done,
    ToolStatus::Failed,
    ToolStatus::Rejected,
    ToolStatus::Cancelled,
    ToolStatus::Pending,
    ToolStatus::Running,
];

async fn play(db: &Db, ops: &[Op]) {
    let mut ids = Vec::new();
    for op in ops {
        match op {
            Op::User { text, failed } => {
                let id = db.user(text).await;
                if *failed {
                    db.store.mark_message_failed(id).await.unwrap();
                }
                ids.push(id);
            }
            Op::Assistant { text } => ids.push(db.assistant(text).await),
            Op::Calls { text, calls } => {
                let specs: Vec<(&str, String)> = calls
                    .iter()
                    .map(|(_, valid, _)| {
                        ("read_file", if *valid { r#"{"path":"f"}"#.into() } else { "{".into() })
                    })
                    .collect();
                let specs: Vec<(&str, &str)> =
                    specs.iter().map(|(n, a)| (*n, a.as_str())).collect();
                let (mid, call_ids) = db.calls(text, &specs).await;
                for ((status, _, len), id) in calls.iter().zip(call_ids) {
                    let result = "r".repeat(*len);
                    db.settle(id, STATUSES[*status as usize], Some(&result)).await;
                }
                ids.push(mid);
            }
            Op::Summary { at } => {
                if !ids.is_empty() {
                    let upto = ids[at % ids.len()];
                    db.store.append_summary(db.stack_id, "summary", upto, 1, 1).await.unwrap();
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn every_built_context_passes_the_strict_validator(
        ops in prop::collection::vec(op(), 0..24),
        max_history in 1usize..12,
        compaction in any::<bool>(),
        hide in prop::option::of(10usize..200),
        cache_hints in any::<bool>(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let db = Db::new().await;
            play(&db, &ops).await;
            // A context always ends the request with the turn's prompt or later rows; give
            // every log a final prompt as a new turn would.
            db.user("next question").await;
            let s = BuildSettings {
                max_history_messages: max_history,
                max_tool_result_chars: hide,
                compaction_enabled: compaction,
                ..settings()
            };
            let mut inputs = db.inputs();
            inputs.cache_hints = cache_hints;
            let msgs = db.build(s, &inputs).await;
            assert_valid(&msgs);
            let last_user = msgs.iter().rev().find(|m| m["role"] == "user").unwrap();
            assert!(text_of(last_user).ends_with("next question"));
        });
    }
}

/// The builder reads only the tail of a capped history; what it sends must equal the history
/// built from every stored row, for every cap and every kind of session shape.
#[tokio::test]
async fn reading_only_the_tail_equals_building_from_the_whole_log() {
    use skald_core::context::{HistoryOptions, history::history_messages};
    let db = Db::new().await;
    for turn in 0..12 {
        db.user(&format!("question {turn}")).await;
        if turn % 4 == 1 {
            let failed = db.user("sent twice").await;
            db.store.mark_message_failed(failed).await.unwrap();
        }
        if turn % 3 == 0 {
            db.user("a steer folded in").await;
        }
        for r in 0..(turn % 4) {
            db.read(&format!("f{turn}_{r}.txt"), &"x".repeat(40 * (r + 1))).await;
        }
        if turn != 11 {
            db.assistant(&format!("answer {turn}")).await;
        }
    }
    let rows = db.store.messages_for_stack_after(db.stack_id, 0).await.unwrap();
    let tools = db.store.tool_calls_for_stack_after(db.stack_id, 0).await.unwrap();
    for cap in [1, 2, 3, 4, 5, 7, 10, 16, 30, 200] {
        for hide in [None, Some(50)] {
            let s = BuildSettings {
                max_history_messages: cap,
                max_tool_result_chars: hide,
                ..settings()
            };
            let built = db.build(s, &db.inputs()).await;
            let history = &built[1..built.len() - 1];
            let expected = history_messages(
                rows.clone(),
                tools.clone(),
                HistoryOptions { max_messages: Some(cap), max_tool_result_chars: hide },
            );
            assert_eq!(history, expected.as_slice(), "cap {cap}, hide {hide:?}");
        }
    }
}
