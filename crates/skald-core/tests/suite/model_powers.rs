//! The model can never approve, bypass or change approval rules through a tool call.

use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall};

use super::turn::{fake_env, open_engine};

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_cannot_decide_bypass_or_edit_rules() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let engine = open_engine(&data, fake_env(&fake)).await;

    // Round 1: a write that parks (call 1). Round 2 (after resume): every trick at once.
    fake.push(Reply::tool_call("write_file", r#"{"path":"a.txt","content":"x"}"#));
    let call = |name: &str, args: serde_json::Value| ScriptedToolCall::new(name, &args.to_string());
    fake.push(Reply::tool_calls(vec![
        call("approve_tool", serde_json::json!({ "request_id": 1 })),
        call("decide", serde_json::json!({ "tool_call_id": 1, "approved": true })),
        call("bypass_approvals", serde_json::json!({ "scope": "all" })),
        call(
            "update_approval_rules",
            serde_json::json!({ "tool_pattern": "*", "action": "allow" }),
        ),
        call(
            "write_file",
            serde_json::json!({
            "path": data.join("skald.db").display().to_string(), "content": "x" }),
        ),
        call("execute_cmd", serde_json::json!({ "command": "skald approve 1" })),
    ]));
    let opts = ChatOptions {
        park_mode: ParkMode::Exit,
        workdir: Some(work.clone()),
        ..Default::default()
    };
    let receipt = engine.send_message("web", "write a.txt", opts).await.unwrap();
    let outcome = engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");
    let first = engine.inbox().await.unwrap();
    assert_eq!(first.total, 1);

    // A human rejects the write; the model's second round tries everything above.
    engine
        .decide(
            1,
            skald_protocol::DecisionInput {
                approved: false,
                note: Some("no".into()),
                bypass: None,
            },
            "test",
        )
        .await
        .unwrap();
    let outcome = engine.resume(receipt.session_id, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");

    let detail = engine.session_detail(receipt.session_id).await.unwrap();
    let tools: Vec<(String, skald_protocol::ToolStatus, String)> = detail
        .messages
        .iter()
        .filter_map(|m| match m {
            skald_protocol::DebugMessage::Tool { name, status, result, .. } => {
                Some((name.clone(), *status, result.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .collect();
    use skald_protocol::ToolStatus::*;
    for (name, status, result) in &tools[1..5] {
        assert_eq!(*status, Failed, "{name}: {result}");
        assert!(result.contains("unknown tool"), "{name}: {result}");
    }
    // Writing the database and running `skald approve` are ordinary risky calls: they wait for a
    // human instead of running.
    assert_eq!((tools[5].0.as_str(), tools[5].1), ("write_file", Pending));
    assert_eq!((tools[6].0.as_str(), tools[6].1), ("execute_cmd", Pending));
    let inbox = engine.inbox().await.unwrap();
    assert_eq!(inbox.total, 2);
    assert!(!work.join("a.txt").exists());
    // The rejected call stays rejected: nothing the model did changed the human's decision.
    assert_eq!(
        (tools[0].1, tools[0].2.as_str()),
        (Rejected, "User rejected this tool call. Reason: no")
    );
    // And the offered tool list never contained an approval tool.
    for req in fake.requests() {
        let names: Vec<&str> = req.body["tools"]
            .as_array()
            .map(|t| t.iter().filter_map(|d| d["function"]["name"].as_str()).collect())
            .unwrap_or_default();
        assert!(
            names
                .iter()
                .all(|n| !n.contains("approv") && !n.contains("bypass") && !n.contains("rule")),
            "{names:?}"
        );
    }
}
