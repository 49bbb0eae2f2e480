//! Turning a resolved reply into OpenAI wire format: a `chat.completion` or SSE chunk events.

use bytes::Bytes;
use serde_json::{Value, json};

use super::reply::Usage;

/// A resolved assistant answer (ids assigned, usage computed).
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub content: Option<String>,
    pub reasoning: Option<String>,
    pub calls: Vec<AnswerCall>,
    pub usage: Usage,
}

#[derive(Debug, Clone)]
pub(crate) struct AnswerCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl Answer {
    fn finish_reason(&self) -> &'static str {
        if self.calls.is_empty() { "stop" } else { "tool_calls" }
    }
}

/// Identity shared by every chunk of one completion.
#[derive(Debug, Clone)]
pub(crate) struct CompletionMeta {
    pub id: String,
    pub created: u64,
    pub model: String,
}

fn usage_json(u: Usage) -> Value {
    let mut usage = json!({
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
    });
    if let Some(cost) = u.cost {
        usage["cost"] = json!(cost);
    }
    usage
}

/// The non-streaming `chat.completion` object.
pub(crate) fn completion_json(meta: &CompletionMeta, answer: &Answer) -> Value {
    let mut message = json!({ "role": "assistant", "content": answer.content });
    if let Some(r) = &answer.reasoning {
        message["reasoning_content"] = json!(r);
    }
    if !answer.calls.is_empty() {
        message["tool_calls"] = Value::Array(
            answer
                .calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": { "name": c.name, "arguments": c.arguments },
                    })
                })
                .collect(),
        );
    }
    json!({
        "id": meta.id,
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
        "choices": [{ "index": 0, "message": message, "finish_reason": answer.finish_reason() }],
        "usage": usage_json(answer.usage),
    })
}

/// Splits `text` into pieces of 4 to 8 characters (cycling), never inside a UTF-8 character.
pub(crate) fn split_small(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut k = 0;
    while start < chars.len() {
        let size = 4 + (k * 3) % 5;
        let end = (start + size).min(chars.len());
        pieces.push(chars[start..end].iter().collect());
        start = end;
        k += 1;
    }
    pieces
}

/// Serialises one SSE event in a single buffer so it goes out in one write.
pub(crate) fn sse_event(data: &Value) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

pub(crate) fn sse_done() -> Bytes {
    Bytes::from_static(b"data: [DONE]\n\n")
}

fn chunk(meta: &CompletionMeta, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": meta.id,
        "object": "chat.completion.chunk",
        "created": meta.created,
        "model": meta.model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
    })
}

/// The opening chunk (role) and the content deltas of `content`.
pub(crate) fn content_events(meta: &CompletionMeta, content: Option<&str>) -> Vec<Bytes> {
    let mut events = vec![sse_event(&chunk(
        meta,
        json!({ "role": "assistant", "content": content.map(|_| "") }),
        None,
    ))];
    for piece in split_small(content.unwrap_or_default()) {
        events.push(sse_event(&chunk(meta, json!({ "content": piece }), None)));
    }
    events
}

/// Every event of a complete streamed answer, `[DONE]` included.
pub(crate) fn stream_events(meta: &CompletionMeta, answer: &Answer) -> Vec<Bytes> {
    let mut events = vec![sse_event(&chunk(
        meta,
        json!({ "role": "assistant", "content": answer.content.as_ref().map(|_| "") }),
        None,
    ))];
    for piece in split_small(answer.reasoning.as_deref().unwrap_or_default()) {
        events.push(sse_event(&chunk(meta, json!({ "reasoning_content": piece }), None)));
    }
    for piece in split_small(answer.content.as_deref().unwrap_or_default()) {
        events.push(sse_event(&chunk(meta, json!({ "content": piece }), None)));
    }
    for (index, call) in answer.calls.iter().enumerate() {
        let start = json!({ "tool_calls": [{
            "index": index,
            "id": call.id,
            "type": "function",
            "function": { "name": call.name, "arguments": "" },
        }]});
        events.push(sse_event(&chunk(meta, start, None)));
        for piece in split_small(&call.arguments) {
            let frag =
                json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] });
            events.push(sse_event(&chunk(meta, frag, None)));
        }
    }
    events.push(sse_event(&chunk(meta, json!({}), Some(answer.finish_reason()))));
    events.push(sse_event(&json!({
        "id": meta.id,
        "object": "chat.completion.chunk",
        "created": meta.created,
        "model": meta.model,
        "choices": [],
        "usage": usage_json(answer.usage),
    })));
    events.push(sse_done());
    events
}

/// A `data:` line that looks like the start of a chunk but is cut off (not valid JSON).
pub(crate) fn malformed_event(meta: &CompletionMeta) -> Bytes {
    Bytes::from(format!(
        "data: {{\"id\":\"{}\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"delta\":{{\"content\":\"trunc\n\n",
        meta.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_small_keeps_text_and_sizes() {
        let text = "héllo wörld, this is a longer sentence";
        let pieces = split_small(text);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|p| (1..=8).contains(&p.chars().count())));
        assert!(pieces[..pieces.len() - 1].iter().all(|p| p.chars().count() >= 4));
        assert!(split_small("").is_empty());
    }
}
