//! Builds the JSON body of a chat-completions request for one endpoint.

use serde_json::{Map, Value, json};

use crate::endpoint::ModelEndpoint;
use crate::turn::ChatRequest;

/// Header that switches on Anthropic prompt caching behind OpenAI-compatible gateways.
pub const PROMPT_CACHE_HEADER: (&str, &str) = ("anthropic-beta", "prompt-caching-2024-07-31");

/// The request body for `endpoint`. Built per endpoint, so a fallback to a model with a different
/// `prompt_cache` flag gets its own markers (or none) automatically.
pub fn build_body(endpoint: &ModelEndpoint, req: &ChatRequest, stream: bool) -> Value {
    let mut messages: Vec<Value> = req.messages.iter().map(normalise_message).collect();
    let mut tools = req.tools.clone();
    if endpoint.prompt_cache {
        mark_cache_points(&mut messages, &mut tools);
    }

    let mut body = Map::new();
    body.insert("model".into(), Value::String(endpoint.model.clone()));
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), Value::String("auto".into()));
    }
    body.insert("stream".into(), Value::Bool(stream));
    if stream {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    if let Some(t) = req.temperature {
        // Through f64 via the shortest decimal so 0.7 is sent as 0.7, not 0.699999988.
        let t = t.to_string().parse::<f64>().unwrap_or(f64::from(t));
        body.insert("temperature".into(), json!(t));
    }
    if let Some(m) = req.max_tokens {
        body.insert("max_tokens".into(), json!(m));
    }
    if let Some(Value::Object(extra)) = &endpoint.extra_params {
        for (k, v) in extra {
            body.insert(k.clone(), v.clone());
        }
    }
    Value::Object(body)
}

/// Some servers reject `content: null` on assistant messages (notably next to `tool_calls`);
/// an empty string means the same to every server.
fn normalise_message(msg: &Value) -> Value {
    let is_assistant = msg.get("role").and_then(Value::as_str) == Some("assistant");
    if !is_assistant {
        return msg.clone();
    }
    let has_tool_calls = msg.get("tool_calls").is_some_and(|t| !t.is_null());
    let content_null = msg.get("content").is_none_or(Value::is_null);
    if content_null && (has_tool_calls || msg.get("content").is_some()) {
        let mut m = msg.clone();
        if let Some(obj) = m.as_object_mut() {
            obj.insert("content".into(), Value::String(String::new()));
        }
        return m;
    }
    msg.clone()
}

/// Marks the static system prompt and the tool list as cacheable prefixes.
fn mark_cache_points(messages: &mut [Value], tools: &mut [Value]) {
    let ephemeral = json!({ "type": "ephemeral" });
    if let Some(system) =
        messages.iter_mut().find(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        && let Some(text) = system.get("content").and_then(Value::as_str).map(str::to_owned)
        && let Some(obj) = system.as_object_mut()
    {
        obj.insert(
            "content".into(),
            json!([{ "type": "text", "text": text, "cache_control": ephemeral }]),
        );
    }
    if let Some(Value::Object(last)) = tools.last_mut() {
        last.insert("cache_control".into(), ephemeral);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn req() -> ChatRequest {
        ChatRequest {
            messages: vec![
                json!({"role": "system", "content": "be brief"}),
                json!({"role": "user", "content": "hi"}),
                json!({"role": "assistant", "content": null,
                       "tool_calls": [{"id": "c1", "type": "function",
                                       "function": {"name": "f", "arguments": "{}"}}]}),
                json!({"role": "tool", "tool_call_id": "c1", "content": null}),
            ]
            .into(),
            tools: vec![json!({"type": "function", "function": {"name": "f"}})],
            temperature: Some(0.7),
            max_tokens: Some(100),
            stream: true,
        }
    }

    #[test]
    fn body_has_openai_shape_and_normalised_content() {
        let ep = ModelEndpoint::new("a", "http://x/v1", "m-1");
        let b = build_body(&ep, &req(), true);
        assert_eq!(b["model"], "m-1");
        assert_eq!(b["stream"], true);
        assert_eq!(b["stream_options"]["include_usage"], true);
        assert_eq!(b["tool_choice"], "auto");
        assert_eq!(b["temperature"], 0.7);
        assert_eq!(b["max_tokens"], 100);
        assert_eq!(b["messages"][2]["content"], "");
        // Only assistant messages are touched.
        assert!(b["messages"][3]["content"].is_null());
        assert_eq!(b["messages"][0]["content"], "be brief");
    }

    #[test]
    fn no_tools_no_tool_choice_and_no_stream_options_when_not_streaming() {
        let ep = ModelEndpoint::new("a", "http://x/v1", "m");
        let mut r = req();
        r.tools.clear();
        let b = build_body(&ep, &r, false);
        assert!(b.get("tools").is_none() && b.get("tool_choice").is_none());
        assert!(b.get("stream_options").is_none());
        assert_eq!(b["stream"], false);
    }

    #[test]
    fn extra_params_override_and_prompt_cache_marks() {
        let mut ep = ModelEndpoint::new("a", "http://x/v1", "m");
        ep.prompt_cache = true;
        ep.extra_params = Some(json!({"temperature": 0.1, "reasoning": {"effort": "high"}}));
        let b = build_body(&ep, &req(), true);
        assert_eq!(b["temperature"], 0.1);
        assert_eq!(b["reasoning"]["effort"], "high");
        assert_eq!(b["messages"][0]["content"][0]["text"], "be brief");
        assert_eq!(b["messages"][0]["content"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(b["tools"][0]["cache_control"]["type"], "ephemeral");
    }
}
