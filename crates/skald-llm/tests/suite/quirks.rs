//! Servers that differ from OpenAI: no streamed tool calls (refused, or a stream that ends before
//! its first delta), JSON answers to streaming requests, clients configured not to stream.

use skald_testkit::{FakeLlm, Reply};

use super::support::{client, endpoint, run, tool, user};

/// A request with tools whose streamed attempt fails with `first` is asked once more without
/// streaming, silently and without backoff, and the model's next request with tools is plain.
async fn learns_to_ask_plainly(first: Reply) {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(first.clone());
    fake.push(Reply::tool_call("ls", "{}"));
    fake.push(Reply::text("second round"));
    let (client, sleeper) = client();
    let ep = endpoint(&fake.base_url(), "m1");
    let mut req = user("list");
    req.tools = vec![tool("ls")].into();
    let r = run(&client, std::slice::from_ref(&ep), &req).await;
    assert_eq!(r.turn().tool_calls[0].name, "ls", "{first:?}");
    assert!(r.notices.is_empty(), "not a retry the user is told about: {:?}", r.notices);
    assert!(sleeper.delays.lock().unwrap().is_empty(), "no backoff for this fallback");
    // Learnt: the next request with tools to this model goes out non-streaming straight away.
    let r = run(&client, &[ep], &req).await;
    assert_eq!(r.turn().content, "second round");
    let streams: Vec<bool> = fake.requests().iter().map(|q| q.stream).collect();
    assert_eq!(streams, vec![true, false, false], "{first:?}");
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn a_server_that_cannot_stream_tool_calls_is_asked_without_streaming() {
    learns_to_ask_plainly(Reply::Status {
        code: 400,
        times: 1,
        retry_after: None,
        body: Some("streaming is not supported with tools".into()),
    })
    .await;
}

#[tokio::test]
async fn a_stream_with_tools_that_ends_before_its_first_delta_is_asked_again_without_streaming() {
    // llama-cpp-python's server: HTTP 200, then the stream ends before any delta when it cannot
    // stream a reply to a request with tools (other servers send an error event first).
    learns_to_ask_plainly(Reply::StreamEndsBeforeDelta { error: None }).await;
    learns_to_ask_plainly(Reply::StreamEndsBeforeDelta {
        error: Some("Automatic streaming tool choice is not supported".into()),
    })
    .await;
}

#[tokio::test]
async fn a_stream_that_broke_after_its_first_delta_or_without_tools_is_an_ordinary_retry() {
    // After a delta the server can stream: a broken stream is a transient fault, retried as one.
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::DropMidStream { partial: "half".into() });
    fake.push(Reply::text("whole"));
    fake.push(Reply::text("streamed again"));
    let (client, sleeper) = client();
    let ep = endpoint(&fake.base_url(), "m1");
    let mut req = user("x");
    req.tools = vec![tool("ls")].into();
    assert_eq!(run(&client, std::slice::from_ref(&ep), &req).await.turn().content, "whole");
    assert_eq!(sleeper.delays.lock().unwrap().len(), 1, "backed off like any retry");
    assert_eq!(
        run(&client, std::slice::from_ref(&ep), &req).await.turn().content,
        "streamed again"
    );
    // Without tools there is nothing to fall back from.
    fake.push(Reply::StreamEndsBeforeDelta { error: None });
    fake.push(Reply::text("plain text"));
    let plain = user("y");
    assert_eq!(run(&client, &[ep], &plain).await.turn().content, "plain text");
    let streams: Vec<bool> = fake.requests().iter().map(|q| q.stream).collect();
    assert_eq!(streams, vec![true, true, true, true, true]);
}

#[tokio::test]
async fn a_client_configured_not_to_stream_never_asks_for_a_stream() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("plain"));
    fake.push(Reply::tool_call("ls", "{}"));
    let (client, _) = client();
    let mut ep = endpoint(&fake.base_url(), "m1");
    ep.stream = false;
    let r = run(&client, std::slice::from_ref(&ep), &user("hi")).await;
    assert_eq!(r.turn().content, "plain");
    let mut req = user("list");
    req.tools = vec![tool("ls")].into();
    assert_eq!(run(&client, &[ep], &req).await.turn().tool_calls[0].name, "ls");
    let streams: Vec<bool> = fake.requests().iter().map(|q| q.stream).collect();
    assert_eq!(streams, vec![false, false]);
    assert!(fake.requests().iter().all(|q| q.body.get("stream_options").is_none()));
}

#[tokio::test]
async fn a_bad_request_without_tools_is_not_retried() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::status(400, 1));
    let (client, _) = client();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("x")).await;
    assert!(matches!(r.result, Err(skald_llm::LlmError::Http { status: 400, .. })));
    assert_eq!(fake.requests().len(), 1);
}

use super::raw_server::{send, serve, sse_headers};

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_accepted() {
    let body = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"ls","arguments":{"dir":"."}}}]},"finish_reason":"tool_calls"}]}"#;
    let resp = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let url = serve(vec![send(&resp)]).await;
    let (client, _) = client();
    let mut req = user("ls");
    req.tools = vec![tool("ls")].into();
    let r = run(&client, &[endpoint(&url, "m1")], &req).await;
    let call = &r.turn().tool_calls[0];
    assert_eq!((call.id.as_str(), call.name.as_str()), ("c9", "ls"));
    assert_eq!(call.arguments, r#"{"dir":"."}"#);
}

#[tokio::test]
async fn ids_and_names_repeated_in_every_chunk_and_no_done_marker() {
    let chunk = |args: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{{\"name\":\"grep\",\"arguments\":\"{args}\"}}}}]}}}}]}}\r\n\r\n"
        )
    };
    let url = serve(vec![
        sse_headers(),
        send(": keep-alive\r\n\r\n"),
        send(&chunk("{\\\"q\\\":")),
        send(&chunk("\\\"x\\\"}")),
        send("data:{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n"),
    ])
    .await;
    let (client, _) = client();
    let mut req = user("find");
    req.tools = vec![tool("grep")].into();
    let r = run(&client, &[endpoint(&url, "m1")], &req).await;
    let calls = &r.turn().tool_calls;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "grep");
    assert_eq!(calls[0].arguments, r#"{"q":"x"}"#);
}

#[tokio::test]
async fn an_event_stream_answer_to_a_plain_request_is_parsed_as_sse() {
    let url = serve(vec![
        sse_headers(),
        send("data: {\"choices\":[{\"delta\":{\"content\":\"stre\"}}]}\n\n"),
        send("data: {\"choices\":[{\"delta\":{\"content\":\"amed\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"),
    ])
    .await;
    let (client, _) = client();
    let req = skald_llm::ChatRequest { stream: false, ..user("hi") };
    let r = run(&client, &[endpoint(&url, "m1")], &req).await;
    assert_eq!(r.turn().content, "streamed");
}
