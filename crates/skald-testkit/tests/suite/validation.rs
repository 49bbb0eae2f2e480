//! Each HTTP 400 case of the strict validation, and valid sequences that must pass.

use serde_json::{Value, json};
use skald_testkit::{FakeLlm, Reply, validate_chat_request};

use super::helpers::*;

#[tokio::test]
async fn missing_model_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = json!({ "messages": [user("hi")] });
    assert_rejected(&fake, &body, &["`model`", "required"]).await;
}

#[tokio::test]
async fn empty_model_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = json!({ "model": " ", "messages": [user("hi")] });
    assert_rejected(&fake, &body, &["`model`", "empty"]).await;
}

#[tokio::test]
async fn missing_messages_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    assert_rejected(&fake, &json!({ "model": "fake-model" }), &["`messages`", "required"]).await;
}

#[tokio::test]
async fn empty_messages_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    assert_rejected(&fake, &chat_body(vec![]), &["`messages`", "empty"]).await;
}

#[tokio::test]
async fn unknown_role_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![user("hi"), json!({ "role": "robot", "content": "beep" })]);
    assert_rejected(&fake, &body, &["messages[1]", "unknown role 'robot'"]).await;
}

#[tokio::test]
async fn whitespace_user_content_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![system("s"), user("  \n ")]);
    assert_rejected(&fake, &body, &["messages[1] (user)", "empty content"]).await;
}

#[tokio::test]
async fn user_parts_without_text_are_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let parts = json!([{ "type": "text", "text": "" }, { "type": "text", "text": "   " }]);
    let body = chat_body(vec![json!({ "role": "user", "content": parts })]);
    assert_rejected(&fake, &body, &["messages[0] (user)", "empty content"]).await;
    let body = chat_body(vec![json!({ "role": "user", "content": [] })]);
    assert_rejected(&fake, &body, &["empty content"]).await;
}

#[tokio::test]
async fn missing_user_content_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![json!({ "role": "user" })]);
    assert_rejected(&fake, &body, &["messages[0] (user)", "missing `content`"]).await;
}

#[tokio::test]
async fn tool_call_unanswered_before_next_message_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![user("read it"), assistant_calls(&["call_1"]), user("well?")]);
    assert_rejected(
        &fake,
        &body,
        &["messages[1]", "not answered by tool messages", "before messages[2]", "call_1"],
    )
    .await;
}

#[tokio::test]
async fn tool_call_unanswered_at_end_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![user("read it"), assistant_calls(&["call_1"])]);
    assert_rejected(&fake, &body, &["not answered", "end of `messages`", "call_1"]).await;
}

#[tokio::test]
async fn partly_answered_tool_calls_are_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![
        user("read both"),
        assistant_calls(&["call_a", "call_b"]),
        tool_result("call_b", "B"),
        user("next"),
    ]);
    let message = assert_rejected(&fake, &body, &["not answered", "call_a"]).await;
    assert!(!message.contains("call_b"), "only the unanswered id is named: {message}");
}

#[tokio::test]
async fn answer_after_an_intervening_message_is_rejected() {
    // The answer exists, but a user message sits between the call and its result.
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![
        user("read"),
        assistant_calls(&["call_1"]),
        user("hurry"),
        tool_result("call_1", "late"),
    ]);
    assert_rejected(&fake, &body, &["not answered", "before messages[2] (user)"]).await;
}

#[tokio::test]
async fn tool_message_without_its_call_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![user("hi"), tool_result("call_x", "orphan")]);
    assert_rejected(
        &fake,
        &body,
        &["messages[1] (tool)", "'call_x'", "does not follow an assistant message with tool_calls"],
    )
    .await;
}

#[tokio::test]
async fn tool_message_for_another_assistants_call_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![
        user("one"),
        assistant_calls(&["call_old"]),
        tool_result("call_old", "ok"),
        assistant("done"),
        user("two"),
        assistant_calls(&["call_new"]),
        tool_result("call_new", "ok"),
        tool_result("call_old", "again"),
    ]);
    assert_rejected(
        &fake,
        &body,
        &["messages[7] (tool)", "'call_old'", "does not match", "messages[5]"],
    )
    .await;
}

#[tokio::test]
async fn tool_message_answered_twice_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![
        user("read"),
        assistant_calls(&["call_1"]),
        tool_result("call_1", "first"),
        tool_result("call_1", "second"),
    ]);
    assert_rejected(&fake, &body, &["messages[3] (tool)", "'call_1'", "answered twice"]).await;
}

#[tokio::test]
async fn tool_message_without_tool_call_id_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let body = chat_body(vec![
        user("read"),
        assistant_calls(&["call_1"]),
        json!({ "role": "tool", "content": "x" }),
    ]);
    assert_rejected(&fake, &body, &["messages[2] (tool)", "missing `tool_call_id`"]).await;
}

#[tokio::test]
async fn duplicate_tool_names_are_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let mut body = chat_body(vec![user("hi")]);
    body["tools"] = json!([tool_def("read_file"), tool_def("grep"), tool_def("read_file")]);
    assert_rejected(&fake, &body, &["duplicate function name 'read_file'", "tools[2]"]).await;
}

#[tokio::test]
async fn duplicate_tool_call_ids_are_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    // Within one assistant message.
    let body = chat_body(vec![user("x"), assistant_calls(&["c1", "c1"])]);
    assert_rejected(&fake, &body, &["duplicate tool call id 'c1'"]).await;
    // Across two rounds, even when each round is answered.
    let body = chat_body(vec![
        user("x"),
        assistant_calls(&["c1"]),
        tool_result("c1", "r"),
        assistant_calls(&["c1"]),
        tool_result("c1", "r"),
    ]);
    assert_rejected(&fake, &body, &["messages[3].tool_calls[0]", "duplicate tool call id 'c1'"])
        .await;
}

#[tokio::test]
async fn assistant_without_content_or_tool_calls_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    for assistant_msg in [
        json!({ "role": "assistant", "content": null }),
        json!({ "role": "assistant", "content": "" }),
        json!({ "role": "assistant" }),
    ] {
        let body = chat_body(vec![user("a"), assistant_msg, user("b")]);
        assert_rejected(&fake, &body, &["messages[1] (assistant)", "no content and no tool_calls"])
            .await;
    }
}

#[tokio::test]
async fn empty_tool_calls_array_is_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let msg = json!({ "role": "assistant", "content": "hm", "tool_calls": [] });
    let body = chat_body(vec![user("a"), msg, user("b")]);
    assert_rejected(&fake, &body, &["`tool_calls` is an empty array"]).await;
}

#[tokio::test]
async fn malformed_tool_calls_are_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({ "type": "function", "function": { "name": "f", "arguments": "{}" } }),
            "missing tool call `id`",
        ),
        (
            json!({ "id": "c", "function": { "name": "f", "arguments": "{}" } }),
            "`type` must be 'function'",
        ),
        (
            json!({ "id": "c", "type": "function", "function": { "arguments": "{}" } }),
            "missing `function.name`",
        ),
        (
            json!({ "id": "c", "type": "function", "function": { "name": "f", "arguments": {} } }),
            "`function.arguments` must be a string",
        ),
    ];
    for (call, needle) in cases {
        let msg = json!({ "role": "assistant", "content": null, "tool_calls": [call] });
        let body = chat_body(vec![user("a"), msg]);
        assert_rejected(&fake, &body, &["messages[1].tool_calls[0]", needle]).await;
    }
}

#[tokio::test]
async fn malformed_tools_entries_are_rejected() {
    let fake = FakeLlm::start().await.unwrap();
    let cases: Vec<(Value, &str)> = vec![
        (json!({ "a": 1 }), "malformed `tools`: must be an array"),
        (json!([]), "malformed `tools`: empty array"),
        (json!(["read_file"]), "malformed `tools[0]`: must be an object"),
        (
            json!([{ "type": "retrieval", "function": { "name": "f" } }]),
            "unsupported type 'retrieval'",
        ),
        (json!([{ "function": { "name": "f" } }]), "missing `type`"),
        (json!([{ "type": "function" }]), "missing `function`"),
        (
            json!([{ "type": "function", "function": { "description": "d" } }]),
            "missing `function.name`",
        ),
        (
            json!([{ "type": "function", "function": { "name": "read file" } }]),
            "invalid function name 'read file'",
        ),
        (
            json!([{ "type": "function", "function": { "name": "f", "parameters": "{}" } }]),
            "`function.parameters` must be a JSON Schema object",
        ),
    ];
    for (tools, needle) in cases {
        let mut body = chat_body(vec![user("hi")]);
        body["tools"] = tools;
        assert_rejected(&fake, &body, &[needle]).await;
    }
}

#[tokio::test]
async fn invalid_json_body_is_rejected_and_recorded() {
    let fake = FakeLlm::start().await.unwrap();
    fake.allow_rejected_requests();
    let resp = reqwest::Client::new()
        .post(chat_url(&fake))
        .header("content-type", "application/json")
        .body("{\"model\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let json: Value = resp.json().await.unwrap();
    assert!(json["error"]["message"].as_str().unwrap().contains("invalid JSON body"));
    let recs = fake.requests();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].body, json!("{\"model\": "));
}

#[tokio::test]
async fn rejected_request_is_recorded_and_keeps_the_reply_queued() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("scripted"));
    let bad = chat_body(vec![user("hi"), tool_result("nope", "x")]);
    assert_rejected(&fake, &bad, &["nope"]).await;
    assert_eq!(fake.pending_replies(), 1, "a rejected request must not consume a reply");

    let recs = fake.requests();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].status, 400);
    assert_eq!(recs[0].seq, 1);
    assert_eq!(recs[0].model.as_deref(), Some("fake-model"));
    assert!(recs[0].validation_error.as_deref().unwrap().contains("'nope'"));
    assert_eq!(recs[0].body, bad);

    let (status, json) = post_chat(&fake, &chat_body(vec![user("hi")])).await;
    assert_eq!(status, 200);
    assert_eq!(json["choices"][0]["message"]["content"], "scripted");
    assert_eq!(fake.requests()[1].status, 200);
    assert_eq!(fake.requests()[1].validation_error, None);
}

#[tokio::test]
async fn valid_multi_round_tool_use_is_accepted() {
    let fake = FakeLlm::start().await.unwrap();
    let mut body = chat_body(vec![
        system("You are terse."),
        json!({ "role": "developer", "content": "Use tools." }),
        user("read a and b"),
        // Two calls in one message, answered in the opposite order.
        assistant_calls(&["call_a", "call_b"]),
        tool_result("call_b", "B"),
        tool_result("call_a", "A"),
        // A second round straight after the tool results, with text alongside the call.
        json!({ "role": "assistant", "content": "one more", "tool_calls": [
            { "id": "call_c", "type": "function", "function": { "name": "grep", "arguments": "not json" } }
        ]}),
        json!({ "role": "tool", "tool_call_id": "call_c", "content": [{ "type": "text", "text": "" }] }),
        assistant("Both files are empty."),
        json!({ "role": "user", "content": [
            { "type": "image_url", "image_url": { "url": "data:," } },
            { "type": "text", "text": "and now?" }
        ]}),
    ]);
    body["tools"] = json!([tool_def("read_file"), tool_def("grep")]);
    assert_eq!(validate_chat_request(&body), Ok(()));
    fake.push(Reply::text("accepted"));
    let (status, json) = post_chat(&fake, &body).await;
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["choices"][0]["message"]["content"], "accepted");
}

#[test]
fn pure_validation_agrees_with_the_server_rules() {
    let ok = chat_body(vec![user("hi"), assistant_calls(&["c"]), tool_result("c", "r")]);
    assert_eq!(validate_chat_request(&ok), Ok(()));
    let bad = chat_body(vec![user("hi"), assistant_calls(&["c"])]);
    assert!(validate_chat_request(&bad).unwrap_err().contains("not answered"));
    assert!(validate_chat_request(&json!([1])).unwrap_err().contains("JSON object"));
}
