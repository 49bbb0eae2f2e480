//! Shared test helpers: message builders, a chat client and an SSE collector.

use serde_json::{Value, json};
use skald_testkit::FakeLlm;

pub fn user(text: &str) -> Value {
    json!({ "role": "user", "content": text })
}

pub fn system(text: &str) -> Value {
    json!({ "role": "system", "content": text })
}

pub fn assistant(text: &str) -> Value {
    json!({ "role": "assistant", "content": text })
}

/// An assistant message calling `name` once per id.
pub fn assistant_calls(ids: &[&str]) -> Value {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({ "id": id, "type": "function",
                    "function": { "name": "read_file", "arguments": "{\"path\":\"a.txt\"}" } })
        })
        .collect();
    json!({ "role": "assistant", "content": null, "tool_calls": calls })
}

pub fn tool_result(id: &str, text: &str) -> Value {
    json!({ "role": "tool", "tool_call_id": id, "content": text })
}

pub fn tool_def(name: &str) -> Value {
    json!({ "type": "function", "function": { "name": name, "description": "d",
            "parameters": { "type": "object", "properties": {} } } })
}

pub fn chat_body(messages: Vec<Value>) -> Value {
    json!({ "model": "fake-model", "messages": messages })
}

pub fn chat_url(fake: &FakeLlm) -> String {
    format!("{}/chat/completions", fake.base_url())
}

/// POSTs a non-streaming request and returns status and JSON body.
pub async fn post_chat(fake: &FakeLlm, body: &Value) -> (u16, Value) {
    let resp = reqwest::Client::new().post(chat_url(fake)).json(body).send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, json)
}

/// Asserts a 400 whose OpenAI-style error message contains every one of `needles`.
pub async fn assert_rejected(fake: &FakeLlm, body: &Value, needles: &[&str]) -> String {
    fake.allow_rejected_requests();
    let (status, json) = post_chat(fake, body).await;
    assert_eq!(status, 400, "expected 400, got {status}: {json}");
    assert_eq!(json["error"]["type"], "invalid_request_error", "{json}");
    let message = json["error"]["message"].as_str().unwrap().to_owned();
    for needle in needles {
        assert!(message.contains(needle), "message {message:?} should mention {needle:?}");
    }
    message
}

/// What a streaming response delivered.
#[derive(Debug, Default)]
pub struct Collected {
    /// `data:` payloads in order (including `[DONE]` if it came).
    pub data: Vec<String>,
    /// The transport error that ended the body, if any.
    pub error: Option<String>,
}

impl Collected {
    pub fn done(&self) -> bool {
        self.data.last().is_some_and(|d| d == "[DONE]")
    }

    /// Payloads parsed as JSON (panics on a malformed one).
    pub fn chunks(&self) -> Vec<Value> {
        self.data
            .iter()
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    pub fn content(&self) -> String {
        self.chunks()
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
            .collect()
    }
}

/// Sends `body` with `stream: true` and returns the response (headers received).
pub async fn stream_chat(fake: &FakeLlm, mut body: Value) -> reqwest::Response {
    body["stream"] = json!(true);
    reqwest::Client::new().post(chat_url(fake)).json(&body).send().await.unwrap()
}

/// Collects the SSE events of a streaming response until its body ends.
pub async fn collect_sse(resp: reqwest::Response) -> Collected {
    use futures::StreamExt;
    let mut out = Collected::default();
    let mut buf = String::new();
    let mut body = resp.bytes_stream();
    loop {
        match body.next().await {
            None => break,
            Some(Ok(bytes)) => buf.push_str(std::str::from_utf8(&bytes).unwrap()),
            Some(Err(e)) => {
                out.error = Some(e.to_string());
                break;
            }
        }
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            for line in event.lines() {
                if let Some(data) = line.strip_prefix("data: ") {
                    out.data.push(data.to_owned());
                }
            }
        }
    }
    assert!(buf.trim().is_empty(), "unterminated SSE event left over: {buf:?}");
    out
}
