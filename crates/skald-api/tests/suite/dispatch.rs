//! `call`: one entry point for every shell, with the table's params, results and errors.

use std::sync::Arc;

use serde_json::{Value, json};
use skald_api::{Caller, call};
use skald_core::config::{EnvOverrides, MemorySecrets};
use skald_core::{Engine, EngineOptions};
use skald_protocol::{ApiError, ErrorCode, Event};
use skald_testkit::{FakeLlm, Reply};

pub(super) struct Rig {
    _dir: tempfile::TempDir,
    fake: FakeLlm,
    pub(super) engine: Engine,
}

pub(super) async fn rig() -> Rig {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(EngineOptions {
        data_dir: Some(dir.path().join("data")),
        env: Some(EnvOverrides {
            base_url: Some(fake.base_url()),
            model: Some("fake-model".into()),
            api_key: None,
        }),
        secrets: Some(Arc::new(MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap();
    Rig { _dir: dir, fake, engine }
}

impl Rig {
    pub(super) fn fake(&self) -> &FakeLlm {
        &self.fake
    }
}

pub(super) async fn web(rig: &Rig, op: &str, params: Value) -> Result<Value, ApiError> {
    call(&rig.engine, &Caller::Web, op, params).await
}

#[tokio::test]
async fn an_unknown_operation_is_not_found_and_names_it() {
    let rig = rig().await;
    let err = web(&rig, "drop_database", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(err.message.contains("`drop_database`"), "{}", err.message);
}

#[tokio::test]
async fn malformed_params_are_invalid_input_naming_the_operation_and_the_field() {
    let rig = rig().await;
    let wrong_type = web(&rig, "stop_turn", json!({ "session_id": "seven" })).await.unwrap_err();
    assert_eq!(wrong_type.code, ErrorCode::InvalidInput);
    assert!(wrong_type.message.contains("`stop_turn`"), "{}", wrong_type.message);
    assert!(wrong_type.message.contains("session_id"), "{}", wrong_type.message);

    let missing = web(&rig, "compact_session", json!({ "focus": null })).await.unwrap_err();
    assert_eq!(missing.code, ErrorCode::InvalidInput);
    assert!(missing.message.contains("session_id"), "{}", missing.message);

    let unknown =
        web(&rig, "new_session", json!({ "source": "web", "sourse": "x" })).await.unwrap_err();
    assert_eq!(unknown.code, ErrorCode::InvalidInput);
    assert!(unknown.message.contains("sourse"), "{}", unknown.message);

    // Nested input is checked down to the field that is wrong.
    let nested = web(&rig, "decide", json!({ "tool_call_id": 1, "input": { "approved": "yes" } }))
        .await
        .unwrap_err();
    assert!(nested.message.contains("input.approved"), "{}", nested.message);
}

/// A person writing `{}` or `{"query": {"page": 2}}` means the first (or second) page at the
/// default size: the paging fields left out take the defaults, a wrong one is still refused.
#[tokio::test]
async fn list_sessions_takes_the_default_paging_for_what_is_left_out() {
    let rig = rig().await;
    for id in 1..=3 {
        web(&rig, "new_session", json!({ "source": format!("s{id}") })).await.unwrap();
    }
    let paging = |v: &Value| (v["page"].clone(), v["per_page"].clone(), v["total"].clone());
    let none = web(&rig, "list_sessions", Value::Null).await.unwrap();
    assert_eq!(paging(&none), (json!(1), json!(20), json!(3)), "{none}");
    let empty = web(&rig, "list_sessions", json!({ "query": {} })).await.unwrap();
    assert_eq!(paging(&empty), (json!(1), json!(20), json!(3)), "{empty}");
    let part = web(&rig, "list_sessions", json!({ "query": { "per_page": 2, "page": 2 } })).await;
    let part = part.unwrap();
    assert_eq!(paging(&part), (json!(2), json!(2), json!(3)), "{part}");
    assert_eq!(part["items"].as_array().map(Vec::len), Some(1), "{part}");
    let typo = web(&rig, "list_sessions", json!({ "query": { "pages": 2 } })).await.unwrap_err();
    assert_eq!(typo.code, ErrorCode::InvalidInput);
}

#[tokio::test]
async fn results_have_the_declared_shape_whichever_shell_asks() {
    let rig = rig().await;
    let created = web(&rig, "new_session", json!({ "source": "web" })).await.unwrap();
    let id = created["session_id"].as_i64().expect("new_session answers {session_id}");
    let page = web(
        &rig,
        "list_sessions",
        json!({ "query": { "source": "web", "search": null, "page": 1, "per_page": 20 } }),
    )
    .await
    .unwrap();
    assert_eq!(page["items"][0]["id"], id);
    // The desktop used to answer a bare `false` here while `serve` answered an object.
    for caller in [Caller::App, Caller::Web, Caller::Cli] {
        let stopped =
            call(&rig.engine, &caller, "stop_turn", json!({ "session_id": id })).await.unwrap();
        assert_eq!(stopped, json!({ "stopped": false }), "{caller:?}");
    }
    assert_eq!(
        web(&rig, "turn_running", json!({ "session_id": id })).await.unwrap(),
        json!({ "running": false })
    );
    // No params at all (an empty HTTP body) is `{}`.
    assert_eq!(web(&rig, "inbox", Value::Null).await.unwrap()["total"], 0);
}

#[tokio::test]
async fn the_decider_is_the_calling_surface_and_the_params_cannot_name_another() {
    let rig = rig().await;
    let mut events = rig.engine.subscribe();
    // `send_message` has no working-directory param, so a turn works in this process's directory
    // (the crate's source dir under cargo): the file goes to an absolute path in the test's own
    // temporary dir instead, or the approved write would land in the source tree.
    let target = rig._dir.path().join("out.txt");
    let write = json!({ "path": target, "content": "hi\n" }).to_string();
    rig.fake.push(Reply::tool_call("write_file", &write));
    rig.fake.push(Reply::text("Wrote it."));
    let sent = web(&rig, "send_message", json!({ "source": "web", "text": "write out.txt" }))
        .await
        .unwrap();
    assert_eq!(sent["steered"], false);
    let call_id = loop {
        match events.recv().await.unwrap().event {
            Event::ApprovalRequested { tool_call_id, .. } => break tool_call_id,
            _ => continue,
        }
    };
    let input = json!({ "approved": true, "note": null, "bypass": null });
    let mut claimed = input.clone();
    claimed["decided_by"] = json!("cli");
    let refused = web(&rig, "decide", json!({ "tool_call_id": call_id, "input": claimed }))
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidInput, "{}", refused.message);

    let decision =
        web(&rig, "decide", json!({ "tool_call_id": call_id, "input": input })).await.unwrap();
    assert_eq!(decision["decided_by"], "web");
    assert_eq!(decision["approved"], true);
    // The parked turn goes on and asks the model for its answer.
    while !matches!(events.recv().await.unwrap().event, Event::Done { .. }) {}
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n", "the approved write ran");
}

#[tokio::test]
async fn search_and_find_in_session_are_operations_that_take_any_text() {
    let rig = rig().await;
    let mut events = rig.engine.subscribe();
    rig.fake.push(Reply::text("The wombat burrow is dry."));
    let sent =
        web(&rig, "send_message", json!({ "source": "web", "text": "where is the wombat?" }))
            .await
            .unwrap();
    let id = sent["session_id"].as_i64().expect("send_message answers its session");
    while !matches!(events.recv().await.unwrap().event, Event::TurnRunning { running: false }) {}

    let found =
        web(&rig, "search", json!({ "query": { "text": "wombat", "limit": 5 } })).await.unwrap();
    let kinds: Vec<&str> =
        found["hits"].as_array().unwrap().iter().filter_map(|h| h["at"]["kind"].as_str()).collect();
    assert_eq!(kinds.len(), 2, "{found:#}");
    assert!(kinds.contains(&"user") && kinds.contains(&"assistant"), "{found:#}");
    assert_eq!(found["hits"][0]["session_id"], id);
    let inside =
        web(&rig, "find_in_session", json!({ "session_id": id, "text": "burr" })).await.unwrap();
    assert_eq!(inside["matches"].as_array().map(Vec::len), Some(1), "{inside:#}");
    assert_eq!(inside["matches"][0]["kind"], "assistant");

    // FTS syntax a user might type is text, not an error.
    for text in ["\"wombat", "NEAR(wombat", "wombat*", "kind:user", "a OR"] {
        web(&rig, "search", json!({ "query": { "text": text, "limit": 5 } }))
            .await
            .unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
    }
    let missing = web(&rig, "find_in_session", json!({ "session_id": id + 100, "text": "wombat" }))
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::NotFound);
}
