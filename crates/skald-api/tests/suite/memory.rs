//! The memory operations through the table: files, content, the history of an agent's write
//! with its diff, the person's save, and undo (refused once the file changed).

use serde_json::{Value, json};
use skald_protocol::ErrorCode;
use skald_testkit::{Reply, ScriptedToolCall};

use super::dispatch::{Rig, rig, web};

/// An agent turn that writes `content` to memory file `path` (allowed by the seeded rule).
async fn agent_writes(rig: &Rig, path: &str, content: &str) -> i64 {
    let args = json!({"path": path, "content": content}).to_string();
    rig.fake().push(Reply::tool_calls(vec![ScriptedToolCall::new("memory_write", &args)]));
    rig.fake().push(Reply::text("noted"));
    let sent =
        web(rig, "send_message", json!({"source": "web", "text": "remember"})).await.unwrap();
    let sid = sent["session_id"].as_i64().unwrap();
    rig.engine.wait_turn(sid).await.unwrap();
    sid
}

#[tokio::test]
async fn an_agent_write_is_listed_with_its_diff_and_undone() {
    let rig = rig().await;
    assert_eq!(web(&rig, "list_memory_files", json!({})).await.unwrap(), json!([]));
    let sid = agent_writes(&rig, "notes.md", "likes tea\n").await;
    let files = web(&rig, "list_memory_files", json!({})).await.unwrap();
    assert_eq!(files[0]["path"], "notes.md");
    assert_eq!(files[0]["size"], 10);
    let file = web(&rig, "read_memory_file", json!({"path": "notes.md"})).await.unwrap();
    assert_eq!(file["content"], "likes tea\n");
    assert_eq!(file["max_bytes"], 65536);

    let history = web(&rig, "memory_history", json!({"path": "notes.md"})).await.unwrap();
    let edit = &history[0];
    assert_eq!(edit["author"], "agent");
    assert_eq!(edit["session_id"], sid);
    assert_eq!(edit["agent_id"], "main");
    assert_eq!(edit["created_file"], true);
    assert_eq!(edit["diff"]["added"], 1);
    assert!(edit["diff"]["unified"].as_str().unwrap().contains("+likes tea"));

    let undone = web(&rig, "undo_memory_edit", json!({"edit_id": edit["id"]})).await.unwrap();
    assert!(undone["undone_at"].is_string());
    let gone = web(&rig, "read_memory_file", json!({"path": "notes.md"})).await.unwrap_err();
    assert_eq!(gone.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn undo_after_the_file_changed_is_a_conflict_that_says_so() {
    let rig = rig().await;
    agent_writes(&rig, "notes.md", "likes tea\n").await;
    let history = web(&rig, "memory_history", json!({})).await.unwrap();
    let agent_edit = history[0]["id"].clone();
    let saved = web(&rig, "save_memory_file", json!({"path": "notes.md", "content": "coffee\n"}))
        .await
        .unwrap();
    assert_eq!(saved["content"], "coffee\n");
    let refused = web(&rig, "undo_memory_edit", json!({"edit_id": agent_edit})).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Conflict);
    assert!(refused.message.contains("notes.md changed since this edit"), "{}", refused.message);
    let file = web(&rig, "read_memory_file", json!({"path": "notes.md"})).await.unwrap();
    assert_eq!(file["content"], "coffee\n", "the person's edit is kept");
    let history = web(&rig, "memory_history", json!({})).await.unwrap();
    let authors: Vec<&Value> = history.as_array().unwrap().iter().map(|e| &e["author"]).collect();
    assert_eq!(authors, [&json!("user"), &json!("agent")]);
    let missing = web(&rig, "undo_memory_edit", json!({"edit_id": 999})).await.unwrap_err();
    assert_eq!(missing.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn bad_paths_and_oversized_saves_are_invalid_input() {
    let rig = rig().await;
    for path in ["../config.yml", "/etc/passwd", "a/../../b.md", "x.txt", ""] {
        let e = web(&rig, "read_memory_file", json!({"path": path})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{path}: {}", e.message);
        let e =
            web(&rig, "save_memory_file", json!({"path": path, "content": "x"})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{path}: {}", e.message);
    }
    let big = "x".repeat(65537);
    let e =
        web(&rig, "save_memory_file", json!({"path": "big.md", "content": big})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.contains("more than the 65536 bytes"), "{}", e.message);
    let e = web(&rig, "memory_history", json!({"path": "../x.md"})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
}
