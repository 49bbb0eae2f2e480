//! Agent memory: `inject_memory` files in the static system message, `memory_write` through the
//! seeded rule with each write recorded, the size limit, hostile paths, and the person's undo.

use serde_json::{Value, json};
use skald_core::agents::{AgentKind, AgentMeta};
use skald_core::context::MemoryFile;
use skald_core::engine::ChatOptions;
use skald_core::error::EngineError;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::MemoryAuthor;
use skald_testkit::{Reply, ScriptedToolCall};

use crate::suite::context::{Db, settings, text_of};
use crate::suite::turn::{Rig, finish};

/// The built-in `main` agent overridden to inject `entries`.
fn main_with_memory(rig: &Rig, entries: &[&str]) {
    let meta = AgentMeta {
        name: "Main".into(),
        description: "The chat agent".into(),
        friendly_description: None,
        instructions: None,
        kind: AgentKind::Chat,
        inject_memory: entries.iter().map(|e| e.to_string()).collect(),
        client: None,
        scope: None,
        strength: None,
    };
    skald_core::agents::save(&rig.data_dir(), "main", &meta, "You are Skald.").unwrap();
}

/// Options that leave gating to the rules (no approve-all) and never wait for a person.
fn gated(rig: &Rig) -> ChatOptions {
    ChatOptions { workdir: Some(rig.work.clone()), park_mode: ParkMode::Exit, ..Default::default() }
}

/// Runs one turn whose model calls `memory_write` with `args`, then answers; returns the
/// session and what the model was told about the call.
async fn write_turn(rig: &Rig, args: Value) -> (i64, String) {
    rig.fake
        .push(Reply::tool_calls(vec![ScriptedToolCall::new("memory_write", &args.to_string())]));
    rig.fake.push(Reply::text("noted"));
    let receipt = rig.engine.send_message("test", "remember this", gated(rig)).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    (sid, told(&rig.fake.requests().pop().unwrap().body))
}

/// The last tool result of a request.
fn told(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn system_text(body: &Value) -> String {
    text_of(&body["messages"][0])
}

#[tokio::test]
async fn a_memory_write_reaches_the_next_sessions_system_message() {
    let rig = Rig::new("").await;
    main_with_memory(&rig, &["notes.md"]);
    let (first, result) =
        write_turn(&rig, json!({"path": "notes.md", "content": "The user's cat is Miso.\n"})).await;
    assert!(result.contains("Created memory/notes.md"), "{result}");
    let sent = rig.fake.requests();
    assert!(
        system_text(&sent[0].body).contains(
            "<memory_file path=\"memory/notes.md\">\n(file not created yet)\n</memory_file>"
        ),
        "{}",
        system_text(&sent[0].body)
    );
    assert_eq!(
        std::fs::read_to_string(rig.data_dir().join("memory/notes.md")).unwrap(),
        "The user's cat is Miso.\n"
    );
    // Recorded with its session, call and agent.
    let history = rig.engine.memory_history(None, None).await.unwrap();
    assert_eq!(history.len(), 1);
    let edit = &history[0];
    assert_eq!(edit.author, MemoryAuthor::Agent);
    assert_eq!(edit.session_id, Some(first));
    assert!(edit.tool_call_id.is_some());
    assert_eq!(edit.agent_id.as_deref(), Some("main"));
    assert!(edit.created_file);
    assert!(edit.diff.unified.contains("+The user's cat is Miso."), "{}", edit.diff.unified);

    // A new session: its first request carries the file.
    let second = rig.engine.new_session("test").await.unwrap();
    assert_ne!(second, first);
    rig.fake.push(Reply::text("Miso"));
    let receipt = rig.engine.send_message("test", "what is my cat called?", gated(&rig)).await;
    let (sid, _) = finish(&rig.engine, receipt.unwrap()).await;
    assert_eq!(sid, second);
    let last = rig.fake.requests().pop().unwrap();
    assert!(
        system_text(&last.body).ends_with(
            "<memory_file path=\"memory/notes.md\">\nThe user's cat is Miso.\n</memory_file>"
        ),
        "{}",
        system_text(&last.body)
    );
}

#[tokio::test]
async fn a_write_over_the_size_limit_is_refused_with_a_clear_error_and_an_append_counts() {
    let rig = Rig::new("memory:\n  max_file_bytes: 1024\n").await;
    let big = "x".repeat(2000);
    let (_, result) = write_turn(&rig, json!({"path": "big.md", "content": big})).await;
    assert!(result.starts_with("Error:"), "{result}");
    assert!(result.contains("big.md would be 2000 bytes, more than the 1024 bytes"), "{result}");
    assert!(result.contains("Condense it"), "{result}");
    assert!(!rig.data_dir().join("memory/big.md").exists());
    // An append that would take the file past the limit is refused too; the file stays.
    std::fs::write(rig.data_dir().join("memory/log.md"), "y".repeat(900)).unwrap();
    let args = json!({"path": "log.md", "content": "z".repeat(200), "mode": "append"});
    let (_, result) = write_turn(&rig, args).await;
    assert!(result.contains("log.md would be 1101 bytes"), "{result}");
    assert_eq!(std::fs::read_to_string(rig.data_dir().join("memory/log.md")).unwrap().len(), 900);
    assert!(rig.engine.memory_history(None, None).await.unwrap().is_empty(), "nothing recorded");
}

#[tokio::test]
async fn hostile_paths_write_nothing_outside_memory() {
    let rig = Rig::new("").await;
    let outside = rig.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let memory = rig.data_dir().join("memory");
    std::os::unix::fs::symlink(&outside, memory.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("target.md"), memory.join("dangling.md")).unwrap();
    for (path, expect) in [
        ("../config.yml", "`..` is not accepted"),
        ("../../work/x.md", "`..` is not accepted"),
        ("/etc/x.md", "absolute paths"),
        ("link/x.md", "leads out of the memory directory"),
        ("dangling.md", "leads out of the memory directory"),
        ("evil\u{1b}]0;pwned\u{7}.md", "control character"),
        ("notes.sh", "ending in .md"),
    ] {
        let (_, result) = write_turn(&rig, json!({"path": path, "content": "owned\n"})).await;
        assert!(result.starts_with("Error:") && result.contains(expect), "{path:?}: {result}");
    }
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "written outside memory/");
    assert!(std::fs::read_to_string(rig.data_dir().join("config.yml")).unwrap().is_empty());
    assert!(rig.engine.memory_history(None, None).await.unwrap().is_empty());
}

#[tokio::test]
async fn undo_restores_the_file_and_is_refused_once_it_changed() {
    let rig = Rig::new("").await;
    let file = rig.data_dir().join("memory/prefs.md");
    std::fs::write(&file, "tabs\n").unwrap();
    write_turn(&rig, json!({"path": "prefs.md", "content": "spaces\n"})).await;
    write_turn(&rig, json!({"path": "new.md", "content": "created\n"})).await;
    let history = rig.engine.memory_history(None, None).await.unwrap();
    let (created, changed) = (&history[0], &history[1]);
    assert_eq!((created.path.as_str(), changed.path.as_str()), ("new.md", "prefs.md"));

    // The person edits prefs.md after the agent: undoing the agent's edit would lose theirs.
    rig.engine.save_memory("prefs.md", "spaces, 4 wide\n").await.unwrap();
    let refused = rig.engine.undo_memory_edit(changed.id).await.unwrap_err();
    assert!(
        matches!(&refused, EngineError::Conflict(m) if m.contains("prefs.md changed since this edit")),
        "{refused:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "spaces, 4 wide\n");
    // Undoing the person's save, then the agent's edit, walks back to the start.
    let saved = rig.engine.memory_history(Some("prefs.md"), None).await.unwrap()[0].clone();
    assert_eq!(saved.author, MemoryAuthor::User);
    rig.engine.undo_memory_edit(saved.id).await.unwrap();
    let undone = rig.engine.undo_memory_edit(changed.id).await.unwrap();
    assert!(undone.undone_at.is_some());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "tabs\n");
    let again = rig.engine.undo_memory_edit(changed.id).await.unwrap_err();
    assert!(
        matches!(&again, EngineError::Conflict(m) if m.contains("already undone")),
        "{again:?}"
    );
    // Undoing the edit that created a file deletes it.
    rig.engine.undo_memory_edit(created.id).await.unwrap();
    assert!(!rig.data_dir().join("memory/new.md").exists());
    let listed = rig.engine.list_memory().await.unwrap();
    assert_eq!(listed.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["prefs.md"]);
}

#[tokio::test]
async fn memory_search_finds_lines_and_reads_a_file() {
    let rig = Rig::new("").await;
    let memory = rig.data_dir().join("memory");
    std::fs::create_dir_all(memory.join("projects")).unwrap();
    std::fs::write(memory.join("projects/skald.md"), "# Skald\nUses SQLite.\n").unwrap();
    std::fs::write(memory.join("people.md"), "Ada likes sqlite too.\n").unwrap();
    let search = |args: Value| {
        rig.fake.push(Reply::tool_calls(vec![ScriptedToolCall::new(
            "memory_search",
            &args.to_string(),
        )]));
        rig.fake.push(Reply::text("ok"));
    };
    search(json!({"query": "SQLITE"}));
    let receipt = rig.engine.send_message("test", "look", gated(&rig)).await.unwrap();
    finish(&rig.engine, receipt).await;
    let result = told(&rig.fake.requests().pop().unwrap().body);
    assert_eq!(result, "people.md:1: Ada likes sqlite too.\nprojects/skald.md:2: Uses SQLite.");
    search(json!({"path": "memory/projects/skald.md"}));
    let receipt = rig.engine.send_message("test", "read", gated(&rig)).await.unwrap();
    finish(&rig.engine, receipt).await;
    let result = told(&rig.fake.requests().pop().unwrap().body);
    assert_eq!(result, "projects/skald.md (21 bytes):\n# Skald\nUses SQLite.\n");
}

/// The static system message with every kind of `inject_memory` entry.
#[tokio::test]
async fn injected_memory_files_in_the_static_system_message() {
    let db = Db::new().await;
    db.user("hi").await;
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let memory = data.path().join("memory");
    std::fs::create_dir_all(memory.join("people")).unwrap();
    std::fs::write(memory.join("index.md"), "- people/ada.md: who Ada is\n").unwrap();
    std::fs::write(memory.join("people/ada.md"), "Ada prefers short answers.").unwrap();
    std::fs::write(work.path().join("AGENTS.md"), "Run `cargo fmt` before committing.\n").unwrap();
    std::fs::write(data.path().join("secret.md"), "do not show").unwrap();
    std::os::unix::fs::symlink(data.path().join("secret.md"), memory.join("escape.md")).unwrap();
    std::fs::write(memory.join("huge.md"), "h".repeat(300 * 1024)).unwrap();
    let entries: Vec<String> = [
        "index.md",
        "memory/people/ada.md",
        "missing.md",
        "$WD/AGENTS.md",
        "escape.md",
        "../secret.md",
        "huge.md",
    ]
    .map(String::from)
    .to_vec();
    let files = skald_core::memory::inject(&entries, data.path(), work.path());
    assert_eq!(files[2], MemoryFile { shown_path: "memory/missing.md".into(), content: None });
    let mut inputs = db.inputs();
    inputs.memory = files;
    let msgs = db.build(settings(), &inputs).await;
    let system = text_of(&msgs[0]);
    assert!(!system.contains("do not show"), "a link out of memory/ was followed");
    insta::assert_snapshot!("context_injected_memory", system);
}

/// Without the seeded rule a memory write is an ordinary write: a person approves its diff, and
/// once approved it is recorded like any other; a file changed after the approval is not
/// overwritten.
#[tokio::test]
async fn without_the_seeded_rule_a_person_approves_the_diff_and_the_write_is_still_recorded() {
    let rig = Rig::new("").await;
    let seeded = rig.engine.approval_rules().await.unwrap();
    let rule = seeded.iter().find(|r| r.seed_key.as_deref() == Some("memory-write-allow")).unwrap();
    rig.engine.delete_approval_rule(rule.id).await.unwrap();
    let file = rig.data_dir().join("memory/notes.md");
    std::fs::write(&file, "one\n").unwrap();

    let park = |content: &str| {
        let args = json!({"path": "notes.md", "content": content}).to_string();
        rig.fake.push(Reply::tool_calls(vec![ScriptedToolCall::new("memory_write", &args)]));
        rig.fake.push(Reply::text("ok"));
    };
    park("one\ntwo\n");
    let receipt = rig.engine.send_message("test", "remember", gated(&rig)).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("not parked: {outcome:?}") };
    let inbox = rig.engine.inbox().await.unwrap();
    let item = inbox.items.iter().find(|i| i.tool_call_id == tool_call_ids[0]).unwrap();
    assert_eq!(item.kind, skald_protocol::ApprovalKind::Write);
    let diff = item.diff.as_ref().unwrap();
    assert!(diff.unified.contains("+two"), "{}", diff.unified);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\n", "nothing written before approval");
    let yes = skald_protocol::DecisionInput { approved: true, note: None, bypass: None };
    rig.engine.decide(tool_call_ids[0], yes.clone(), "test").await.unwrap();
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\ntwo\n");
    let history = rig.engine.memory_history(None, None).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].tool_call_id, Some(tool_call_ids[0]));

    // Approved, then the file changes before the write runs: nothing is written.
    park("one\ntwo\nthree\n");
    let receipt = rig.engine.send_message("test", "more", gated(&rig)).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("not parked: {outcome:?}") };
    std::fs::write(&file, "rewritten by hand\n").unwrap();
    rig.engine.decide(tool_call_ids[0], yes, "test").await.unwrap();
    rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    let result = told(&rig.fake.requests().pop().unwrap().body);
    assert!(result.contains("changed after this write was approved"), "{result}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "rewritten by hand\n");
    assert_eq!(rig.engine.memory_history(None, None).await.unwrap().len(), 1);
}

/// A file put in memory/ by hand past what is read is left alone by writes and reads, each
/// saying why; a FIFO named like a memory file never blocks a read.
#[tokio::test]
async fn an_oversized_or_special_file_is_refused_without_blocking() {
    let rig = Rig::new("").await;
    let memory = rig.data_dir().join("memory");
    std::fs::write(memory.join("huge.md"), "h".repeat(300 * 1024)).unwrap();
    let (_, result) = write_turn(&rig, json!({"path": "huge.md", "content": "short"})).await;
    assert!(
        result.contains("huge.md is 307200 bytes, more than the 262144 bytes read"),
        "{result}"
    );
    assert_eq!(std::fs::metadata(memory.join("huge.md")).unwrap().len(), 300 * 1024);
    let e = rig.engine.read_memory("huge.md").await.unwrap_err();
    assert!(matches!(&e, EngineError::InvalidInput(m) if m.contains("left alone")), "{e:?}");

    let fifo = memory.join("pipe.md");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let read =
        tokio::time::timeout(std::time::Duration::from_secs(5), rig.engine.read_memory("pipe.md"));
    let e = read.await.expect("a read of a FIFO blocked").unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e:?}");
    let (_, result) = write_turn(&rig, json!({"path": "pipe.md", "content": "x"})).await;
    assert!(result.starts_with("Error:") && result.contains("FIFO"), "{result}");
}
