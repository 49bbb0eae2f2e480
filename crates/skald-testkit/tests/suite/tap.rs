//! The recording relay in front of a server: every request and the status it got, on one
//! kept-alive connection and on several.

use skald_testkit::{FakeLlm, HttpTap, Reply};

use super::helpers::*;

#[tokio::test]
async fn requests_and_their_statuses_are_recorded_through_the_relay() {
    let fake = FakeLlm::start().await.unwrap();
    let tap = HttpTap::start(fake.addr()).await.unwrap();
    let url = format!("http://{}/v1/chat/completions", tap.addr());
    fake.push(Reply::StreamEndsBeforeDelta { error: None });
    fake.push(Reply::text("plain"));
    fake.push(Reply::status(429, 1));
    fake.push(Reply::text("streamed"));
    fake.push(Reply::text("own connection"));
    // One client, so the requests share a kept-alive connection.
    let client = reqwest::Client::new();
    let mut streamed = chat_body(vec![user("x")]);
    streamed["stream"] = true.into();
    for body in [&streamed, &chat_body(vec![user("y")]), &chat_body(vec![user("z")]), &streamed] {
        let resp = client.post(&url).json(body).send().await.unwrap();
        resp.bytes().await.unwrap();
    }
    // And one more on a connection of its own.
    let other = reqwest::Client::new().post(&url).json(&chat_body(vec![user("w")])).send();
    assert_eq!(other.await.unwrap().status().as_u16(), 200);
    let seen: Vec<(bool, u16)> =
        tap.requests().iter().map(|r| (r.body["stream"] == true, r.status)).collect();
    assert_eq!(seen, [(true, 200), (false, 200), (false, 429), (true, 200), (false, 200)]);
    assert!(tap.requests().iter().all(|r| r.line == "POST /v1/chat/completions HTTP/1.1"));
}
