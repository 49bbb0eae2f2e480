//! The `/v1/models` listing and the `/__fake/*` control endpoints, over HTTP.

use serde_json::{Value, json};
use skald_testkit::{FakeLlm, FakeLlmOptions, RecordedRequest};

use super::helpers::*;

fn root(fake: &FakeLlm) -> String {
    format!("http://{}", fake.addr())
}

#[tokio::test]
async fn models_lists_the_configured_models() {
    let fake = FakeLlm::start().await.unwrap();
    let list: Value =
        reqwest::get(format!("{}/models", fake.base_url())).await.unwrap().json().await.unwrap();
    assert_eq!(list["object"], "list");
    let ids: Vec<&str> =
        list["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["fake-model", "fake-model-2"]);
    assert_eq!(list["data"][0]["object"], "model");

    let opts = FakeLlmOptions { models: vec!["alpha".into()], ..FakeLlmOptions::default() };
    let custom = FakeLlm::start_with(opts).await.unwrap();
    let list: Value =
        reqwest::get(format!("{}/models", custom.base_url())).await.unwrap().json().await.unwrap();
    assert_eq!(
        list["data"],
        json!([{ "id": "alpha", "object": "model", "created": 0, "owned_by": "skald-testkit" }])
    );
}

#[tokio::test]
async fn replies_can_be_scripted_and_inspected_over_http() {
    let fake = FakeLlm::start().await.unwrap();
    let client = reqwest::Client::new();
    // An array, then a single reply for a specific model.
    let resp = client
        .post(format!("{}/__fake/replies", root(&fake)))
        .json(&json!([
            { "type": "text", "content": "from http" },
            { "type": "status", "code": 503 },
            { "type": "tool_calls", "calls": [{ "name": "ls", "arguments": "{}" }] }
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap()["queued"], 3);
    let resp = client
        .post(format!("{}/__fake/replies?model=fake-model-2", root(&fake)))
        .json(&json!({ "type": "text", "content": "for model 2" }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(fake.pending_replies(), 4);

    let (_, a) = post_chat(&fake, &chat_body(vec![user("x")])).await;
    assert_eq!(a["choices"][0]["message"]["content"], "from http");
    let (_, b) =
        post_chat(&fake, &json!({ "model": "fake-model-2", "messages": [user("y")] })).await;
    assert_eq!(b["choices"][0]["message"]["content"], "for model 2");
    let (status, _) = post_chat(&fake, &chat_body(vec![user("z")])).await;
    assert_eq!(status, 503, "status without `times` serves once");
    let (_, c) = post_chat(&fake, &chat_body(vec![user("z")])).await;
    assert_eq!(c["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "ls");

    let recs: Vec<RecordedRequest> = client
        .get(format!("{}/__fake/requests", root(&fake)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(recs.len(), 4);
    assert_eq!(recs.iter().map(|r| r.status).collect::<Vec<_>>(), vec![200, 200, 503, 200]);
    assert_eq!(recs, fake.requests());

    let resp = client.post(format!("{}/__fake/reset", root(&fake))).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(fake.requests().is_empty());
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn a_reply_pushed_for_a_prompt_answers_only_requests_whose_first_message_has_it() {
    let fake = FakeLlm::start().await.unwrap();
    let client = reqwest::Client::new();
    for (query, content) in [("?prompt=TASK-7", "for the task"), ("", "for anyone")] {
        let resp = client
            .post(format!("{}/__fake/replies{query}", root(&fake)))
            .json(&json!({ "type": "text", "content": content }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
    }
    let (_, other) = post_chat(&fake, &chat_body(vec![user("hello")])).await;
    assert_eq!(other["choices"][0]["message"]["content"], "for anyone");
    let (_, task) = post_chat(&fake, &chat_body(vec![user("TASK-7: count")])).await;
    assert_eq!(task["choices"][0]["message"]["content"], "for the task");
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn invalid_reply_json_is_rejected_by_the_control_endpoint() {
    let fake = FakeLlm::start().await.unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/__fake/replies", root(&fake)))
        .json(&json!({ "type": "telepathy" }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let body: Value = resp.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("telepathy"), "{body}");
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn unknown_paths_are_404_with_an_openai_error() {
    let fake = FakeLlm::start().await.unwrap();
    let resp = reqwest::get(format!("{}/embeddings", fake.base_url())).await.unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let body: Value = resp.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("/v1/embeddings"));
}
