//! Happy paths: streamed text and tool calls, non-streaming mode, and the request we send.

use serde_json::json;
use skald_llm::{ChatRequest, StreamDelta, ToolCallOut};
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall};

use super::support::{client, endpoint, run, tool, user};

#[tokio::test]
async fn streamed_text_arrives_as_deltas_and_as_the_turn() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Text {
        content: "Hello there, this is a longer streamed answer.".into(),
        reasoning: Some("thinking it over".into()),
        usage: Some(skald_testkit::Usage { prompt_tokens: 12, completion_tokens: 7, cost: None }),
    });
    let (client, _) = client();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi")).await;
    let turn = r.turn();
    assert_eq!(turn.content, "Hello there, this is a longer streamed answer.");
    assert_eq!(turn.reasoning.as_deref(), Some("thinking it over"));
    assert_eq!(turn.model, "m1");
    assert_eq!(turn.finish_reason.as_deref(), Some("stop"));
    let usage = turn.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (12, 7));
    assert!(r.deltas.len() > 2, "text should stream in several deltas: {:?}", r.deltas);
    assert_eq!(r.content_deltas(), turn.content);
    assert!(matches!(&r.deltas[0], StreamDelta::Reasoning(_)));
    assert!(r.notices.is_empty());
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].stream && reqs[0].validation_error.is_none());
    assert_eq!(reqs[0].body["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn several_streamed_tool_calls_are_assembled_with_split_arguments() {
    let fake = FakeLlm::start().await.unwrap();
    let long_args =
        json!({"path": "src/main.rs", "content": "fn main() {\n    println!(\"hi\");\n}\n"})
            .to_string();
    fake.push(Reply::tool_calls(vec![
        ScriptedToolCall::with_id("call_a", "write_file", &long_args),
        ScriptedToolCall::with_id("call_b", "read_file", r#"{"path":"Cargo.toml"}"#),
    ]));
    let (client, _) = client();
    let mut req = user("write it");
    req.tools = vec![tool("write_file"), tool("read_file")].into();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &req).await;
    let turn = r.turn();
    assert_eq!(
        turn.tool_calls,
        vec![
            ToolCallOut { id: "call_a".into(), name: "write_file".into(), arguments: long_args },
            ToolCallOut {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"Cargo.toml"}"#.into()
            },
        ]
    );
    assert_eq!(turn.finish_reason.as_deref(), Some("tool_calls"));
    let body = &fake.requests()[0].body;
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn invalid_json_tool_arguments_are_returned_raw() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::tool_call("read_file", r#"{"path": "a", oops"#));
    let (client, _) = client();
    let mut req = user("read");
    req.tools = vec![tool("read_file")].into();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &req).await;
    assert_eq!(r.turn().tool_calls[0].arguments, r#"{"path": "a", oops"#);
    assert_eq!(r.turn().tool_calls[0].name, "read_file");
    assert!(!r.turn().tool_calls[0].id.is_empty());
}

#[tokio::test]
async fn non_streaming_mode_parses_the_completion_json() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("plain answer"));
    fake.push(Reply::tool_call("ls", "{}"));
    let (client, _) = client();
    let mut req = ChatRequest { stream: false, ..user("hi") };
    let ep = endpoint(&fake.base_url(), "m1");
    let r = run(&client, std::slice::from_ref(&ep), &req).await;
    assert_eq!(r.turn().content, "plain answer");
    assert!(r.turn().usage.is_some());
    req.tools = vec![tool("ls")].into();
    let r = run(&client, &[ep], &req).await;
    assert_eq!(r.turn().tool_calls[0].name, "ls");
    let reqs = fake.requests();
    assert!(reqs.iter().all(|q| !q.stream && q.body.get("stream_options").is_none()));
}

#[tokio::test]
async fn auth_and_prompt_cache_headers_are_sent() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("ok"));
    let (client, _) = client();
    let mut ep = endpoint(&fake.base_url(), "m1");
    ep.api_key = Some("sk-test-123".into());
    ep.prompt_cache = true;
    let mut req = user("hi");
    req.messages = vec![json!({"role": "system", "content": "static prompt"})]
        .into_iter()
        .chain(req.messages.iter().cloned())
        .collect();
    let r = run(&client, &[ep], &req).await;
    assert_eq!(r.turn().content, "ok");
    let rec = &fake.requests()[0];
    let header = |name: &str| {
        rec.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default()
    };
    assert_eq!(header("authorization"), "Bearer sk-test-123");
    assert_eq!(header("anthropic-beta"), "prompt-caching-2024-07-31");
    assert_eq!(rec.body["messages"][0]["content"][0]["cache_control"]["type"], "ephemeral");
}

#[tokio::test]
async fn assistant_tool_call_with_null_content_passes_a_strict_server() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("done"));
    let (client, _) = client();
    let mut req = user("go");
    req.tools = vec![tool("ls")].into();
    req.messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}));
    req.messages.push(json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"}));
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &req).await;
    assert_eq!(r.turn().content, "done");
    let rec = &fake.requests()[0];
    assert_eq!(rec.validation_error, None);
    assert_eq!(rec.body["messages"][1]["content"], "");
}
