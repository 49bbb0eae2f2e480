//! Builds the JSON body of a chat-completions request for one endpoint.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value, json};

use crate::endpoint::ModelEndpoint;
use crate::turn::ChatRequest;

/// Header that switches on Anthropic prompt caching behind OpenAI-compatible gateways.
pub const PROMPT_CACHE_HEADER: (&str, &str) = ("anthropic-beta", "prompt-caching-2024-07-31");

/// The request body for `endpoint` as the bytes sent: written straight from the request's
/// messages and tools, so a round copies neither its history nor its tool list. Built per
/// endpoint, so a fallback to a model with a different `prompt_cache` flag gets its own markers
/// (or none) automatically.
pub(crate) fn body_bytes(
    endpoint: &ModelEndpoint,
    req: &ChatRequest,
    stream: bool,
) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&RequestBody::new(endpoint, req, stream))
}

/// One request's body, borrowing what it can from the request.
struct RequestBody<'a> {
    endpoint: &'a ModelEndpoint,
    req: &'a ChatRequest,
    messages: Vec<Cow<'a, Value>>,
    tools: Cow<'a, [Value]>,
    stream: bool,
}

impl<'a> RequestBody<'a> {
    fn new(endpoint: &'a ModelEndpoint, req: &'a ChatRequest, stream: bool) -> Self {
        let mut messages: Vec<Cow<'a, Value>> =
            req.messages.iter().map(normalise_message).collect();
        let mut tools = Cow::Borrowed(&*req.tools);
        if endpoint.prompt_cache {
            mark_cache_points(&mut messages, &mut tools);
        }
        Self { endpoint, req, messages, tools, stream }
    }
}

impl Serialize for RequestBody<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // An endpoint's `extra_params` win over the fields Skald sets (a gateway that wants its
        // own temperature gets it), so a field they name is left to them.
        let extra = match &self.endpoint.extra_params {
            Some(Value::Object(extra)) => Some(extra),
            _ => None,
        };
        let ours = |key: &str| extra.is_none_or(|e| !e.contains_key(key));
        let mut map = serializer.serialize_map(None)?;
        if ours("model") {
            map.serialize_entry("model", &self.endpoint.model)?;
        }
        if ours("messages") {
            map.serialize_entry("messages", &self.messages)?;
        }
        if !self.tools.is_empty() {
            if ours("tools") {
                map.serialize_entry("tools", &self.tools)?;
            }
            if ours("tool_choice") {
                let choice = if self.req.answer_only { "none" } else { "auto" };
                map.serialize_entry("tool_choice", choice)?;
            }
        }
        if ours("stream") {
            map.serialize_entry("stream", &self.stream)?;
        }
        if self.stream && ours("stream_options") {
            map.serialize_entry("stream_options", &json!({ "include_usage": true }))?;
        }
        if let Some(t) = self.req.temperature
            && ours("temperature")
        {
            // Through f64 via the shortest decimal so 0.7 is sent as 0.7, not 0.699999988.
            let t = t.to_string().parse::<f64>().unwrap_or(f64::from(t));
            map.serialize_entry("temperature", &t)?;
        }
        if let Some(m) = self.req.max_tokens
            && ours("max_tokens")
        {
            map.serialize_entry("max_tokens", &m)?;
        }
        for (k, v) in extra.into_iter().flatten() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Some servers reject `content: null` on assistant messages (notably next to `tool_calls`);
/// an empty string means the same to every server. Any other message goes as it is.
fn normalise_message(msg: &Value) -> Cow<'_, Value> {
    let is_assistant = msg.get("role").and_then(Value::as_str) == Some("assistant");
    if !is_assistant {
        return Cow::Borrowed(msg);
    }
    let has_tool_calls = msg.get("tool_calls").is_some_and(|t| !t.is_null());
    let content_null = msg.get("content").is_none_or(Value::is_null);
    if content_null && (has_tool_calls || msg.get("content").is_some()) {
        let mut m = msg.clone();
        if let Some(obj) = m.as_object_mut() {
            obj.insert("content".into(), Value::String(String::new()));
        }
        return Cow::Owned(m);
    }
    Cow::Borrowed(msg)
}

/// Marks the static system prompt and the tool list as cacheable prefixes.
fn mark_cache_points(messages: &mut [Cow<'_, Value>], tools: &mut Cow<'_, [Value]>) {
    let ephemeral = json!({ "type": "ephemeral" });
    if let Some(system) =
        messages.iter_mut().find(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        && let Some(text) = system.get("content").and_then(Value::as_str).map(str::to_owned)
        && let Some(obj) = system.to_mut().as_object_mut()
    {
        obj.insert(
            "content".into(),
            json!([{ "type": "text", "text": text, "cache_control": ephemeral }]),
        );
    }
    if !tools.is_empty()
        && let Some(Value::Object(last)) = tools.to_mut().last_mut()
    {
        last.insert("cache_control".into(), ephemeral);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// The body as the JSON value the server parses.
    fn build_body(endpoint: &ModelEndpoint, req: &ChatRequest, stream: bool) -> Value {
        serde_json::from_slice(&body_bytes(endpoint, req, stream).unwrap()).unwrap()
    }

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
            tools: vec![json!({"type": "function", "function": {"name": "f"}})].into(),
            temperature: Some(0.7),
            max_tokens: Some(100),
            stream: true,
            answer_only: false,
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
    fn an_answer_only_request_keeps_its_tools_listed_and_forbids_calling_them() {
        let ep = ModelEndpoint::new("a", "http://x/v1", "m");
        let mut r = req();
        r.answer_only = true;
        let b = build_body(&ep, &r, true);
        assert_eq!(b["tools"], build_body(&ep, &req(), true)["tools"]);
        assert_eq!(b["tool_choice"], "none");
    }

    #[test]
    fn no_tools_no_tool_choice_and_no_stream_options_when_not_streaming() {
        let ep = ModelEndpoint::new("a", "http://x/v1", "m");
        let mut r = req();
        r.tools = Vec::new().into();
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

    #[test]
    fn the_bytes_sent_are_the_body_with_each_field_once() {
        let mut ep = ModelEndpoint::new("a", "http://x/v1", "m");
        ep.extra_params = Some(json!({"temperature": 0.1, "stream": false, "top_k": 5}));
        let r = req();
        let bytes = body_bytes(&ep, &r, true).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        // An extra param replaces Skald's field rather than adding a second key of that name.
        assert_eq!(text.matches("\"temperature\"").count(), 1, "{text}");
        assert_eq!(text.matches("\"stream\"").count(), 1, "{text}");
        let sent: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(sent["temperature"], 0.1);
        assert_eq!(sent["stream"], false);
        assert_eq!(sent["top_k"], 5);
        assert_eq!(sent["messages"][2]["content"], "");
        // The request's own tool list is left as it was (the cache marks go on a copy).
        ep.prompt_cache = true;
        let marked = build_body(&ep, &r, true);
        assert_eq!(marked["tools"][0]["cache_control"]["type"], "ephemeral");
        assert!(r.tools[0].get("cache_control").is_none());
    }
}
