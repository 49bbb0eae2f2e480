//! The agent operations through the dispatcher: list, read, save, delete, and a new session
//! running a chosen agent.

use serde_json::{Value, json};
use skald_protocol::ErrorCode;

use super::dispatch::{rig, web};

fn scout(kind: &str) -> Value {
    json!({
        "name": "Scout",
        "description": "looks around and reports",
        "friendly_description": null,
        "instructions": "  ",
        "type": kind,
        "inject_memory": [],
        "client": null,
        "scope": null,
        "strength": "high",
    })
}

#[tokio::test]
async fn agents_are_listed_saved_read_and_deleted_through_the_table() {
    let rig = rig().await;
    let listed = web(&rig, "list_agents", json!({})).await.unwrap();
    let ids: Vec<&str> =
        listed.as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["generalist", "main", "tic"]);
    assert_eq!(listed[1]["type"], "chat");
    // TIC's agent is listed as a system agent (never dispatchable, never a chat's).
    assert_eq!(listed[2]["type"], "system");
    assert_eq!((listed[1]["built_in"].as_bool(), listed[1]["error"].is_null()), (Some(true), true));

    let saved = web(
        &rig,
        "save_agent",
        json!({ "id": "scout", "meta": scout("task"), "prompt": "Look.\n" }),
    )
    .await
    .unwrap();
    assert_eq!((saved["type"].as_str(), saved["strength"].as_str()), (Some("task"), Some("high")));
    assert_eq!(saved["built_in"], false);
    let detail = web(&rig, "get_agent", json!({ "id": "scout" })).await.unwrap();
    assert_eq!(detail["prompt"], "Look.\n");
    assert!(detail["meta"]["instructions"].is_null(), "a blank text is stored as absent");
    assert_eq!(detail["meta"]["description"], "looks around and reports");
    let main = web(&rig, "get_agent", json!({ "id": "main" })).await.unwrap();
    assert!(main["prompt"].as_str().unwrap().contains("<!-- AGENTS_LIST -->"), "as written");

    let bad_id =
        web(&rig, "save_agent", json!({ "id": "Scout!", "meta": scout("task"), "prompt": "x" }))
            .await
            .unwrap_err();
    assert_eq!(bad_id.code, ErrorCode::InvalidInput);
    let bad_type =
        web(&rig, "save_agent", json!({ "id": "x", "meta": scout("helper"), "prompt": "x" }))
            .await
            .unwrap_err();
    assert_eq!(bad_type.code, ErrorCode::InvalidInput);
    let missing = web(&rig, "get_agent", json!({ "id": "nobody" })).await.unwrap_err();
    assert_eq!(missing.code, ErrorCode::NotFound);

    let built_in = web(&rig, "delete_agent", json!({ "id": "generalist" })).await.unwrap_err();
    assert_eq!(built_in.code, ErrorCode::Conflict);
    assert!(built_in.message.contains("built in"), "{}", built_in.message);
    web(
        &rig,
        "save_agent",
        json!({ "id": "generalist", "meta": scout("task"), "prompt": "Mine." }),
    )
    .await
    .unwrap();
    let listed = web(&rig, "list_agents", json!({})).await.unwrap();
    let over = listed.as_array().unwrap().iter().find(|a| a["id"] == "generalist").unwrap();
    assert_eq!(
        (over["built_in"].as_bool(), over["overrides_built_in"].as_bool()),
        (Some(false), Some(true))
    );
    web(&rig, "delete_agent", json!({ "id": "generalist" })).await.unwrap();
    web(&rig, "delete_agent", json!({ "id": "scout" })).await.unwrap();
    let listed = web(&rig, "list_agents", json!({})).await.unwrap();
    assert_eq!(listed[0]["built_in"], true, "the built-in generalist is back");
    assert_eq!(listed.as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn a_broken_agent_is_listed_with_its_error_and_new_session_takes_an_agent() {
    let rig = rig().await;
    let dir = rig.engine.data_dir().join("agents/broken");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("meta.json"), "{ not json").unwrap();
    std::fs::write(dir.join("AGENT.md"), "x").unwrap();
    let listed = web(&rig, "list_agents", json!({})).await.unwrap();
    let broken = &listed[0];
    assert_eq!((broken["id"].as_str(), broken["name"].as_str()), (Some("broken"), Some("broken")));
    assert!(broken["type"].is_null());
    let error = broken["error"].as_str().unwrap();
    assert!(error.contains(&dir.join("meta.json").display().to_string()), "{error}");
    let detail = web(&rig, "get_agent", json!({ "id": "broken" })).await.unwrap();
    assert!(detail["meta"].is_null());
    assert_eq!(detail["prompt"], "x");

    let refused = web(&rig, "new_session", json!({ "source": "web", "agent_id": "broken" }))
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::Config);
    let made = web(&rig, "new_session", json!({ "source": "web", "agent_id": "generalist" }))
        .await
        .unwrap();
    let id = made["session_id"].as_i64().unwrap();
    assert_eq!(rig.engine.session_detail(id).await.unwrap().session.agent_id, "generalist");
    let plain = web(&rig, "new_session", json!({ "source": "web" })).await.unwrap();
    let id = plain["session_id"].as_i64().unwrap();
    assert_eq!(rig.engine.session_detail(id).await.unwrap().session.agent_id, "main");
}
