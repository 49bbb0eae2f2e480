//! Streaming with a real HTTP client: chunking, tool-call deltas, usage and `[DONE]`.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall, Usage};

use super::helpers::*;

/// Tool calls reassembled from deltas: index -> (id, name, arguments, argument fragment count).
fn reassemble_calls(chunks: &[Value]) -> BTreeMap<u64, (String, String, String, usize)> {
    let mut calls: BTreeMap<u64, (String, String, String, usize)> = BTreeMap::new();
    for chunk in chunks {
        let Some(deltas) = chunk["choices"][0]["delta"]["tool_calls"].as_array() else { continue };
        for d in deltas {
            let index = d["index"].as_u64().unwrap();
            let entry = calls.entry(index).or_default();
            if let Some(id) = d["id"].as_str() {
                assert!(entry.0.is_empty(), "id sent twice for call {index}");
                entry.0 = id.to_owned();
                assert_eq!(d["type"], "function");
                entry.1 = d["function"]["name"].as_str().unwrap().to_owned();
                assert_eq!(d["function"]["arguments"], "", "the opening delta has empty arguments");
            } else {
                assert!(!entry.0.is_empty(), "argument fragment before the call's opening delta");
                assert!(d.get("type").is_none() && d["function"].get("name").is_none());
                entry.2.push_str(d["function"]["arguments"].as_str().unwrap());
                entry.3 += 1;
            }
        }
    }
    calls
}

#[tokio::test]
async fn streamed_tool_calls_reassemble_from_split_deltas() {
    let fake = FakeLlm::start().await.unwrap();
    let args_a = r#"{"path":"src/main.rs","start":1,"end":40}"#;
    let args_b = r#"{"pattern":"fn main","glob":"**/*.rs"}"#;
    fake.push(Reply::ToolCalls {
        content: Some("Let me look at both.".into()),
        calls: vec![
            ScriptedToolCall::with_id("call_A", "read_file", args_a),
            ScriptedToolCall::new("grep", args_b),
        ],
        usage: None,
    });

    let resp = stream_chat(&fake, chat_body(vec![user("where is main?")])).await;
    assert_eq!(resp.status().as_u16(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    let got = collect_sse(resp).await;
    assert_eq!(got.error, None);
    assert!(got.done(), "stream must end with [DONE]");
    assert_eq!(got.data.iter().filter(|d| *d == "[DONE]").count(), 1);

    let chunks = got.chunks();
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(got.content(), "Let me look at both.");
    let content_deltas = chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"]["content"].as_str().is_some_and(|s| !s.is_empty()))
        .count();
    assert!(content_deltas >= 3, "content should arrive in small deltas, got {content_deltas}");

    let calls = reassemble_calls(&chunks);
    assert_eq!(calls.len(), 2);
    let (id_a, name_a, got_a, frags_a) = &calls[&0];
    assert_eq!((id_a.as_str(), name_a.as_str(), got_a.as_str()), ("call_A", "read_file", args_a));
    assert!(*frags_a >= 2, "arguments must be split over several chunks");
    let (id_b, name_b, got_b, frags_b) = &calls[&1];
    assert!(id_b.starts_with("call_fake_"), "generated id: {id_b}");
    assert_eq!((name_b.as_str(), got_b.as_str()), ("grep", args_b));
    assert!(*frags_b >= 2);

    // The last choice chunk carries the finish reason; then usage with no choices; then [DONE].
    let n = chunks.len();
    assert_eq!(chunks[n - 2]["choices"][0]["finish_reason"], "tool_calls");
    assert!(chunks[..n - 2].iter().all(|c| c["choices"][0]["finish_reason"].is_null()));
    assert_eq!(chunks[n - 1]["choices"], json!([]));
    let usage = &chunks[n - 1]["usage"];
    let (p, c) =
        (usage["prompt_tokens"].as_u64().unwrap(), usage["completion_tokens"].as_u64().unwrap());
    assert_eq!(usage["total_tokens"].as_u64().unwrap(), p + c);
    assert_eq!(p, "where is main?".len() as u64 / 4);
    assert!(c > 0);

    let rec = &fake.requests()[0];
    assert!(rec.stream);
    assert_eq!(rec.status, 200);
}

#[tokio::test]
async fn streamed_text_with_reasoning_and_scripted_usage() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Text {
        content: "The answer is forty-two.".into(),
        reasoning: Some("Think about the question first.".into()),
        usage: Some(Usage { prompt_tokens: 100, completion_tokens: 7, cost: None }),
    });
    let got = collect_sse(stream_chat(&fake, chat_body(vec![user("q")])).await).await;
    assert!(got.done());
    let chunks = got.chunks();
    let reasoning: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning, "Think about the question first.");
    assert_eq!(got.content(), "The answer is forty-two.");
    let n = chunks.len();
    assert_eq!(chunks[n - 2]["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        chunks[n - 1]["usage"],
        json!({ "prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107 })
    );
    // Every piece of content is a few characters, as real providers send it.
    for c in &chunks {
        if let Some(s) = c["choices"][0]["delta"]["content"].as_str() {
            assert!(s.chars().count() <= 8, "delta too large: {s:?}");
        }
    }
}

#[tokio::test]
async fn non_streaming_reply_is_a_chat_completion_object() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::tool_call("read_file", "{\"path\":\"x\"}"));
    fake.push(Reply::text("hello there"));
    let (status, json) = post_chat(&fake, &chat_body(vec![user("go")])).await;
    assert_eq!(status, 200);
    assert_eq!(json["object"], "chat.completion");
    assert_eq!(json["model"], "fake-model");
    let choice = &json["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert!(choice["message"]["content"].is_null());
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "read_file");
    assert_eq!(call["function"]["arguments"], "{\"path\":\"x\"}");
    let id = call["id"].as_str().unwrap().to_owned();

    // Feeding the call back as history is accepted and gets the next reply.
    let body = chat_body(vec![user("go"), choice["message"].clone(), tool_result(&id, "data")]);
    let (status, json) = post_chat(&fake, &body).await;
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["choices"][0]["message"]["content"], "hello there");
    assert_eq!(json["choices"][0]["finish_reason"], "stop");
    let u = &json["usage"];
    assert_eq!(u["completion_tokens"], "hello there".len() / 4);
    assert_eq!(
        u["total_tokens"].as_u64().unwrap(),
        u["prompt_tokens"].as_u64().unwrap() + u["completion_tokens"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn generated_tool_call_ids_are_unique_across_replies() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::tool_calls(vec![
        ScriptedToolCall::new("a", "{}"),
        ScriptedToolCall::new("b", "{}"),
    ]));
    fake.push(Reply::tool_call("a", "{}"));
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (_, json) = post_chat(&fake, &chat_body(vec![user("x")])).await;
        for call in json["choices"][0]["message"]["tool_calls"].as_array().unwrap() {
            ids.push(call["id"].as_str().unwrap().to_owned());
        }
    }
    let unique: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), 3, "{ids:?}");
}
