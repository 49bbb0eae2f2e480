//! Per-model reply queues and request recording.

use serde_json::json;
use skald_testkit::{FakeLlm, Reply};

use super::helpers::*;

fn body_for(model: &str, text: &str) -> serde_json::Value {
    json!({ "model": model, "messages": [user(text)] })
}

#[tokio::test]
async fn push_for_model_serves_only_that_model() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("global 1"));
    fake.push(Reply::text("global 2"));
    fake.push_for_model("fake-model-2", Reply::text("only for model 2"));
    assert_eq!(fake.pending_replies(), 3);

    let content = |v: serde_json::Value| v["choices"][0]["message"]["content"].clone();
    let (_, a) = post_chat(&fake, &body_for("fake-model", "x")).await;
    assert_eq!(content(a), "global 1");
    let (_, b) = post_chat(&fake, &body_for("fake-model-2", "x")).await;
    assert_eq!(content(b.clone()), "only for model 2");
    assert_eq!(b["model"], "fake-model-2");
    // Model 2's own queue is empty now, so it falls back to the global FIFO.
    let (_, c) = post_chat(&fake, &body_for("fake-model-2", "x")).await;
    assert_eq!(content(c), "global 2");
    // Nothing left: the request is unscripted.
    fake.allow_unscripted_requests();
    let (status, _) = post_chat(&fake, &body_for("fake-model", "ping")).await;
    assert_eq!(status, 500);
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn model_specific_reply_is_not_served_to_other_models() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push_for_model("big-model", Reply::text("big"));
    fake.allow_unscripted_requests();
    let (status, _) = post_chat(&fake, &body_for("fake-model", "small")).await;
    assert_eq!(status, 500, "another model's reply must not serve");
    assert_eq!(fake.pending_replies(), 1);
    let (_, b) = post_chat(&fake, &body_for("big-model", "large")).await;
    assert_eq!(b["choices"][0]["message"]["content"], "big");
}

#[tokio::test]
async fn requests_are_recorded_in_order_with_headers() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("1"));
    fake.push(Reply::text("2"));
    let client = reqwest::Client::new();
    client
        .post(chat_url(&fake))
        .bearer_auth("sk-test")
        .json(&body_for("fake-model", "one"))
        .send()
        .await
        .unwrap();
    let _ = collect_sse(stream_chat(&fake, body_for("fake-model-2", "two")).await).await;
    let recs = fake.requests();
    assert_eq!(recs.len(), 2);
    assert_eq!((recs[0].seq, recs[1].seq), (1, 2));
    assert_eq!(recs[0].path, "/v1/chat/completions");
    assert!(!recs[0].stream && recs[1].stream);
    assert_eq!(recs[1].model.as_deref(), Some("fake-model-2"));
    assert_eq!(recs[1].body["messages"][0]["content"], "two");
    assert!(
        recs[0].headers.iter().any(|(k, v)| k == "authorization" && v == "Bearer sk-test"),
        "{:?}",
        recs[0].headers
    );
    fake.reset();
    assert!(fake.requests().is_empty());
    fake.push(Reply::text("3"));
    post_chat(&fake, &body_for("fake-model", "three")).await;
    assert_eq!(fake.requests()[0].seq, 1, "sequence restarts after reset");
}
