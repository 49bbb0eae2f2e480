//! Injected faults: HTTP errors N times, stalls, dropped and malformed streams.

use std::time::{Duration, Instant};

use serde_json::json;
use skald_testkit::{FakeLlm, FakeLlmOptions, Reply, WhenEmpty};

use super::helpers::*;

#[tokio::test]
async fn status_is_served_n_times_then_the_next_reply() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Status { code: 429, times: 2, retry_after: Some(3), body: None });
    fake.push(Reply::text("finally"));
    let client = reqwest::Client::new();
    for _ in 0..2 {
        let resp =
            client.post(chat_url(&fake)).json(&chat_body(vec![user("x")])).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 429);
        assert_eq!(resp.headers()["retry-after"], "3");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["type"], "rate_limit_error");
    }
    let (status, json) = post_chat(&fake, &chat_body(vec![user("x")])).await;
    assert_eq!(status, 200);
    assert_eq!(json["choices"][0]["message"]["content"], "finally");
    let statuses: Vec<u16> = fake.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![429, 429, 200]);
}

#[tokio::test]
async fn server_errors_with_custom_body_and_no_retry_after() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::status(500, 1));
    fake.push(Reply::Status {
        code: 503,
        times: 1,
        retry_after: None,
        body: Some("overloaded".into()),
    });
    let client = reqwest::Client::new();
    let resp = client.post(chat_url(&fake)).json(&chat_body(vec![user("x")])).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 500);
    assert!(resp.headers().get("retry-after").is_none());
    // Streaming requests get the status too, before any SSE.
    let resp = stream_chat(&fake, chat_body(vec![user("x")])).await;
    assert_eq!(resp.status().as_u16(), 503);
    assert_eq!(resp.text().await.unwrap(), "overloaded");
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn drop_mid_stream_ends_without_done() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::DropMidStream { partial: "I was about to say something".into() });
    let got = collect_sse(stream_chat(&fake, chat_body(vec![user("x")])).await).await;
    assert!(!got.done(), "no [DONE] after a drop");
    assert!(got.error.is_some(), "the client sees a broken body, not a clean end");
    assert_eq!(got.content(), "I was about to say something");
    let chunks = got.chunks();
    assert!(chunks.iter().all(|c| c["choices"][0]["finish_reason"].is_null()));
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
}

#[tokio::test]
async fn malformed_sse_sends_invalid_json_data() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::MalformedSse);
    let got = collect_sse(stream_chat(&fake, chat_body(vec![user("x")])).await).await;
    assert!(!got.done());
    let bad: Vec<&String> =
        got.data.iter().filter(|d| serde_json::from_str::<serde_json::Value>(d).is_err()).collect();
    assert_eq!(bad.len(), 1, "exactly one malformed data line: {:?}", got.data);
    assert!(bad[0].starts_with('{'));
}

#[tokio::test]
async fn a_stream_can_end_before_its_first_delta_with_or_without_an_error_object() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::StreamEndsBeforeDelta {
        error: Some("Automatic streaming tool choice is not supported".into()),
    });
    fake.push(Reply::StreamEndsBeforeDelta { error: None });
    let resp = stream_chat(&fake, chat_body(vec![user("x")])).await;
    assert_eq!(resp.status().as_u16(), 200);
    let got = collect_sse(resp).await;
    assert!(got.error.is_none(), "a clean end, not a broken body");
    assert!(!got.done());
    assert_eq!(got.data.len(), 1, "{:?}", got.data);
    let event: serde_json::Value = serde_json::from_str(&got.data[0]).unwrap();
    assert_eq!(event["error"]["message"], "Automatic streaming tool choice is not supported");
    assert!(event.get("choices").is_none());

    let got = collect_sse(stream_chat(&fake, chat_body(vec![user("x")])).await).await;
    assert!(got.error.is_none() && !got.done() && got.data.is_empty(), "{:?}", got.data);
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn a_stream_fault_taken_by_a_plain_request_is_a_500() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::StreamEndsBeforeDelta { error: None });
    let (status, _) = post_chat(&fake, &chat_body(vec![user("x")])).await;
    assert_eq!(status, 500);
}

#[tokio::test]
async fn stall_delays_the_next_reply() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Stall { ms: 300, then_hang: false });
    fake.push(Reply::text("after the stall"));
    let started = Instant::now();
    let (status, json) = post_chat(&fake, &chat_body(vec![user("x")])).await;
    assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
    assert_eq!(status, 200);
    assert_eq!(json["choices"][0]["message"]["content"], "after the stall");
    assert_eq!(fake.pending_replies(), 0);
}

#[tokio::test]
async fn hanging_stall_ends_when_the_client_hangs_up() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Stall { ms: 0, then_hang: true });
    let url = chat_url(&fake);
    let client_task = tokio::spawn(async move {
        reqwest::Client::new().post(url).json(&chat_body(vec![user("x")])).send().await
    });
    fake.wait_in_flight(1).await;
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(fake.requests()[0].status, 0, "no response started yet");
    client_task.abort();
    // The server side ends after the hang-up.
    fake.wait_in_flight(0).await;
    // The server is still healthy.
    fake.push(Reply::text("still here"));
    let (status, json) = post_chat(&fake, &chat_body(vec![user("again")])).await;
    assert_eq!(status, 200);
    assert_eq!(json["choices"][0]["message"]["content"], "still here");
}

#[tokio::test]
async fn empty_reply_has_empty_content_and_stop() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Empty);
    fake.push(Reply::Empty);
    let (_, json) = post_chat(&fake, &chat_body(vec![user("x")])).await;
    assert_eq!(json["choices"][0]["message"]["content"], "");
    assert!(json["choices"][0]["message"].get("tool_calls").is_none());
    let got = collect_sse(stream_chat(&fake, chat_body(vec![user("x")])).await).await;
    assert!(got.done());
    assert_eq!(got.content(), "");
    let chunks = got.chunks();
    assert_eq!(chunks[chunks.len() - 2]["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn when_empty_error_by_default_and_echo_on_request() {
    let body = chat_body(vec![user("first"), assistant("ok"), user("second")]);
    let strict = FakeLlm::start().await.unwrap();
    strict.allow_unscripted_requests();
    let (status, json) = post_chat(&strict, &body).await;
    assert_eq!(status, 500);
    assert_eq!(json["error"]["message"], "no scripted reply");
    assert_eq!(strict.requests()[0].status, 500);
    assert!(strict.requests()[0].unscripted);

    let opts = FakeLlmOptions { when_empty: WhenEmpty::Echo, ..FakeLlmOptions::default() };
    let echo = FakeLlm::start_with(opts).await.unwrap();
    echo.allow_unscripted_requests();
    let (status, json) = post_chat(&echo, &body).await;
    assert_eq!(status, 200);
    assert_eq!(json["choices"][0]["message"]["content"], "fake reply to: second");
    assert!(echo.requests()[0].unscripted, "an echo is still an unscripted request");
}

#[tokio::test]
async fn dropping_the_handle_shuts_the_server_down() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Stall { ms: 0, then_hang: true });
    let addr = fake.addr();
    let url = chat_url(&fake);
    let hanging = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .json(&json!({"model":"m","messages":[user("x")]}))
            .send()
            .await
    });
    fake.wait_in_flight(1).await;
    drop(fake);
    // The live connection is closed, not left hanging...
    let result = tokio::time::timeout(Duration::from_secs(5), hanging).await.unwrap().unwrap();
    assert!(result.is_err(), "the hanging request fails once the server is gone");
    // ...and no new connection is accepted.
    let mut refused = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "port still accepting after drop");
}

#[tokio::test]
async fn drop_mid_stream_breaks_a_non_streaming_body_too() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::DropMidStream { partial: "half".into() });
    let resp = reqwest::Client::new()
        .post(chat_url(&fake))
        .json(&chat_body(vec![user("x")]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.text().await.is_err(), "the body must not complete");
}

#[tokio::test]
async fn hang_mid_stream_sends_the_partial_text_then_nothing_while_the_connection_stays_open() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::HangMidStream { partial: "I was saying".into() });
    let resp = stream_chat(&fake, chat_body(vec![user("x")])).await;
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.bytes_stream();
    let mut raw = String::new();
    // The partial events arrive...
    while streamed_content(&raw) != "I was saying" {
        let chunk =
            tokio::time::timeout(Duration::from_secs(5), futures::StreamExt::next(&mut body))
                .await
                .expect("the partial text never came")
                .expect("the body ended early")
                .unwrap();
        raw.push_str(&String::from_utf8_lossy(&chunk));
    }
    // ...and then the body neither ends nor sends more (bounded wait: a hang has no event to
    // wait for, so this is the one place a short timeout is the assertion).
    let next =
        tokio::time::timeout(Duration::from_millis(300), futures::StreamExt::next(&mut body)).await;
    assert!(next.is_err(), "the stream was supposed to hang, got {next:?}");
    assert!(!raw.contains("[DONE]") && !raw.contains("finish_reason\":\"stop"));
}

/// The content deltas of the complete `data:` events in `raw` SSE text, joined.
fn streamed_content(raw: &str) -> String {
    raw.split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_status_body_that_is_a_json_object_is_sent_as_json() {
    let fake = FakeLlm::start().await.unwrap();
    let error = json!({"error": {"message": "upstream overloaded", "code": 502}});
    fake.push(Reply::Status {
        code: 200,
        times: 1,
        retry_after: None,
        body: Some(error.to_string()),
    });
    fake.push(Reply::Status { code: 503, times: 1, retry_after: None, body: Some("busy".into()) });
    let resp = stream_chat(&fake, chat_body(vec![user("x")])).await;
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    assert_eq!(resp.json::<serde_json::Value>().await.unwrap(), error);
    let resp = stream_chat(&fake, chat_body(vec![user("x")])).await;
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
}
