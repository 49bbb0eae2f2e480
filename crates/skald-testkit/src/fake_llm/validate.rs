//! Request validation as strict as real OpenAI-compatible providers (each failure is an HTTP 400).

use std::collections::HashSet;

use serde_json::{Map, Value};

/// Checks a `/v1/chat/completions` body the way a strict provider would.
///
/// Pure, so other crates' property tests can check the contexts they build without a server.
/// The error is the human-readable message the server puts in its 400 body.
pub fn validate_chat_request(body: &Value) -> Result<(), String> {
    let obj = body.as_object().ok_or("request body must be a JSON object")?;
    check_model(obj)?;
    if let Some(stream) = obj.get("stream")
        && !(stream.is_boolean() || stream.is_null())
    {
        return Err("`stream` must be a boolean".into());
    }
    check_tools(obj.get("tools"))?;
    let messages = match obj.get("messages") {
        None | Some(Value::Null) => return Err("`messages` is required".into()),
        Some(Value::Array(m)) if m.is_empty() => {
            return Err("`messages` must not be empty".into());
        }
        Some(Value::Array(m)) => m,
        Some(_) => return Err("`messages` must be an array".into()),
    };
    check_messages(messages)
}

fn check_model(obj: &Map<String, Value>) -> Result<(), String> {
    match obj.get("model") {
        None | Some(Value::Null) => Err("`model` is required".into()),
        Some(Value::String(s)) if s.trim().is_empty() => Err("`model` must not be empty".into()),
        Some(Value::String(_)) => Ok(()),
        Some(_) => Err("`model` must be a string".into()),
    }
}

fn check_tools(tools: Option<&Value>) -> Result<(), String> {
    let tools = match tools {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(t)) if t.is_empty() => {
            return Err("malformed `tools`: empty array (omit `tools` instead)".into());
        }
        Some(Value::Array(t)) => t,
        Some(_) => return Err("malformed `tools`: must be an array".into()),
    };
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let name = check_tool(tool).map_err(|e| format!("malformed `tools[{i}]`: {e}"))?;
        if !names.insert(name) {
            return Err(format!("duplicate function name '{name}' in `tools` (tools[{i}])"));
        }
    }
    Ok(())
}

/// Returns the function name of a well-formed tool entry.
fn check_tool(tool: &Value) -> Result<&str, String> {
    let tool = tool.as_object().ok_or("must be an object")?;
    match tool.get("type").and_then(Value::as_str) {
        Some("function") => {}
        Some(other) => return Err(format!("unsupported type '{other}' (expected 'function')")),
        None => return Err("missing `type` (expected 'function')".into()),
    }
    let function = tool.get("function").and_then(Value::as_object).ok_or("missing `function`")?;
    let name = function.get("name").and_then(Value::as_str).ok_or("missing `function.name`")?;
    let name_ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        return Err(format!(
            "invalid function name '{name}' (1-64 chars of a-z, A-Z, 0-9, '_' or '-')"
        ));
    }
    if let Some(d) = function.get("description")
        && !d.is_string()
    {
        return Err("`function.description` must be a string".into());
    }
    if let Some(p) = function.get("parameters")
        && !p.is_object()
    {
        return Err("`function.parameters` must be a JSON Schema object".into());
    }
    Ok(name)
}

/// The assistant message whose tool calls the following `tool` messages must answer.
struct OpenCalls {
    index: usize,
    ids: Vec<String>,
    answered: HashSet<String>,
}

impl OpenCalls {
    fn unanswered(&self) -> Vec<&str> {
        self.ids.iter().filter(|id| !self.answered.contains(*id)).map(String::as_str).collect()
    }

    fn check_all_answered(&self, before: &str) -> Result<(), String> {
        let missing = self.unanswered();
        if missing.is_empty() {
            return Ok(());
        }
        Err(format!(
            "assistant message messages[{}] has tool_calls not answered by tool messages {before}: {}",
            self.index,
            missing.join(", ")
        ))
    }
}

fn check_messages(messages: &[Value]) -> Result<(), String> {
    let mut open: Option<OpenCalls> = None;
    let mut seen_call_ids = HashSet::new();
    for (i, msg) in messages.iter().enumerate() {
        let msg = msg.as_object().ok_or_else(|| format!("messages[{i}] must be an object"))?;
        let role = match msg.get("role") {
            Some(Value::String(r)) => r.as_str(),
            None | Some(Value::Null) => return Err(format!("messages[{i}]: missing `role`")),
            Some(_) => return Err(format!("messages[{i}]: `role` must be a string")),
        };
        if role == "tool" {
            check_tool_message(i, msg, open.as_mut())?;
            continue;
        }
        if let Some(calls) = open.take() {
            calls.check_all_answered(&format!("before messages[{i}] ({role})"))?;
        }
        match role {
            "system" | "developer" => check_text_content(i, role, msg.get("content"), false)?,
            "user" => check_text_content(i, role, msg.get("content"), true)?,
            "assistant" => {
                open = check_assistant(i, msg, &mut seen_call_ids)?;
            }
            other => {
                return Err(format!(
                    "messages[{i}]: unknown role '{other}' (expected system, developer, user, \
                     assistant or tool)"
                ));
            }
        }
    }
    if let Some(calls) = open {
        calls.check_all_answered("at the end of `messages`")?;
    }
    Ok(())
}

/// Text of a `content` value: a string, or the concatenated `text` of an array of parts.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    }
}

fn check_text_content(
    i: usize,
    role: &str,
    content: Option<&Value>,
    must_be_non_empty: bool,
) -> Result<(), String> {
    let content = match content {
        None | Some(Value::Null) => {
            return Err(format!("messages[{i}] ({role}): missing `content`"));
        }
        Some(c) => c,
    };
    if let Value::Array(parts) = content {
        check_parts(i, role, parts)?;
    }
    let text = content_text(content).ok_or_else(|| {
        format!("messages[{i}] ({role}): `content` must be a string or an array of parts")
    })?;
    if must_be_non_empty && text.trim().is_empty() {
        return Err(format!("messages[{i}] ({role}): empty content"));
    }
    Ok(())
}

fn check_parts(i: usize, role: &str, parts: &[Value]) -> Result<(), String> {
    for (j, part) in parts.iter().enumerate() {
        let kind = part.get("type").and_then(Value::as_str);
        let ok = match kind {
            Some("text") => part.get("text").is_some_and(Value::is_string),
            Some(_) => true,
            None => false,
        };
        if !ok {
            return Err(format!(
                "messages[{i}] ({role}): malformed content part {j} (needs `type`, and `text` for \
                 text parts)"
            ));
        }
    }
    Ok(())
}

fn check_assistant(
    i: usize,
    msg: &Map<String, Value>,
    seen_call_ids: &mut HashSet<String>,
) -> Result<Option<OpenCalls>, String> {
    let has_content = match msg.get("content") {
        None | Some(Value::Null) => false,
        Some(c @ (Value::String(_) | Value::Array(_))) => {
            content_text(c).is_some_and(|t| !t.is_empty())
        }
        Some(_) => {
            return Err(format!(
                "messages[{i}] (assistant): `content` must be a string, an array or null"
            ));
        }
    };
    let calls = match msg.get("tool_calls") {
        None | Some(Value::Null) => None,
        Some(Value::Array(c)) if c.is_empty() => {
            return Err(format!(
                "messages[{i}] (assistant): `tool_calls` is an empty array (omit it instead)"
            ));
        }
        Some(Value::Array(c)) => Some(c),
        Some(_) => return Err(format!("messages[{i}] (assistant): `tool_calls` must be an array")),
    };
    let Some(calls) = calls else {
        if !has_content {
            return Err(format!("messages[{i}] (assistant): no content and no tool_calls"));
        }
        return Ok(None);
    };
    let mut ids = Vec::with_capacity(calls.len());
    for (j, call) in calls.iter().enumerate() {
        let id = check_call(call).map_err(|e| format!("messages[{i}].tool_calls[{j}]: {e}"))?;
        if !seen_call_ids.insert(id.to_owned()) {
            return Err(format!(
                "messages[{i}].tool_calls[{j}]: duplicate tool call id '{id}' in the request"
            ));
        }
        ids.push(id.to_owned());
    }
    Ok(Some(OpenCalls { index: i, ids, answered: HashSet::new() }))
}

/// Returns the id of a well-formed tool call.
fn check_call(call: &Value) -> Result<&str, String> {
    let call = call.as_object().ok_or("must be an object")?;
    let id = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id,
        _ => return Err("missing tool call `id`".into()),
    };
    if call.get("type").and_then(Value::as_str) != Some("function") {
        return Err(format!("tool call '{id}': `type` must be 'function'"));
    }
    let function = call
        .get("function")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("tool call '{id}': missing `function`"))?;
    match function.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => {}
        _ => return Err(format!("tool call '{id}': missing `function.name`")),
    }
    if !function.get("arguments").is_some_and(Value::is_string) {
        return Err(format!("tool call '{id}': `function.arguments` must be a string"));
    }
    Ok(id)
}

fn check_tool_message(
    i: usize,
    msg: &Map<String, Value>,
    open: Option<&mut OpenCalls>,
) -> Result<(), String> {
    let id = match msg.get("tool_call_id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id,
        _ => return Err(format!("messages[{i}] (tool): missing `tool_call_id`")),
    };
    match msg.get("content") {
        Some(Value::String(_)) => {}
        Some(Value::Array(parts)) => check_parts(i, "tool", parts)?,
        _ => return Err(format!("messages[{i}] (tool): `content` must be a string or an array")),
    }
    let Some(open) = open else {
        return Err(format!(
            "messages[{i}] (tool): tool message with tool_call_id '{id}' does not follow an \
             assistant message with tool_calls"
        ));
    };
    if !open.ids.iter().any(|c| c == id) {
        return Err(format!(
            "messages[{i}] (tool): tool_call_id '{id}' does not match any tool call of the \
             preceding assistant message messages[{}]",
            open.index
        ));
    }
    if !open.answered.insert(id.to_owned()) {
        return Err(format!("messages[{i}] (tool): tool_call_id '{id}' is answered twice"));
    }
    Ok(())
}
