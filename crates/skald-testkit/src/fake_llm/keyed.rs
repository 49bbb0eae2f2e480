//! Keyed replies: answers chosen by what the request says rather than by arrival order.
//!
//! A crash test repeats requests: a process killed after sending a request but before storing
//! the answer sends the same request again when it resumes, and one killed earlier never sends
//! some at all. A FIFO cannot follow that; a keyed reply answers every request whose content
//! matches, as often as it comes, so the script is "what the model says at this point of the
//! conversation". Keys look at the newest message (the user's prompt, the result of a call by
//! its id) and at the system prompt, which tells frames (sub-agents) apart.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::reply::Reply;

/// Which requests a keyed reply answers: every condition that is set must hold.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct When {
    /// The last message has this role (`user`, `tool`, `assistant`). "Last" skips system and
    /// developer messages at the end (reminders an engine appends after the conversation).
    #[serde(default)]
    pub last_role: Option<String>,
    /// The last message's text contains this.
    #[serde(default)]
    pub last_contains: Option<String>,
    /// The last message is the result of the tool call with this id.
    #[serde(default)]
    pub tool_result_of: Option<String>,
    /// The last message is the result of a call of the tool with this name (the call is looked
    /// up in the assistant message that made it). Unlike call ids, which engines may derive
    /// from their own row ids, tool names are the script's own.
    #[serde(default)]
    pub tool_result_for: Option<String>,
    /// Some system message contains this (tells one agent's frame from another's).
    #[serde(default)]
    pub system_contains: Option<String>,
}

impl When {
    /// Requests whose last message is a user message containing `text`.
    pub fn user_says(text: &str) -> When {
        When { last_role: Some("user".into()), last_contains: Some(text.into()), ..When::default() }
    }

    /// Requests whose last message is the result of the call `call_id`.
    pub fn result_of(call_id: &str) -> When {
        When { tool_result_of: Some(call_id.into()), ..When::default() }
    }

    /// Requests whose last message is the result of a call of the tool `name`.
    pub fn result_of_tool(name: &str) -> When {
        When { tool_result_for: Some(name.into()), ..When::default() }
    }

    /// Narrows to requests of the frame whose system prompt contains `text`.
    pub fn in_frame(mut self, text: &str) -> When {
        self.system_contains = Some(text.into());
        self
    }

    /// Whether the request body `body` meets every condition.
    pub fn matches(&self, body: &Value) -> bool {
        let messages = body.get("messages").and_then(Value::as_array);
        // Engines append system reminders (date, notes) after the conversation: the "last
        // message" is the newest one that is not one of those.
        let Some(last) = messages.into_iter().flatten().rev().find(|m| {
            !matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer"))
        }) else {
            return false;
        };
        let role = last.get("role").and_then(Value::as_str);
        if self.last_role.as_deref().is_some_and(|want| role != Some(want)) {
            return false;
        }
        if let Some(want) = &self.last_contains
            && !text_of(last).contains(want.as_str())
        {
            return false;
        }
        if let Some(want) = &self.tool_result_of {
            let id = last.get("tool_call_id").and_then(Value::as_str);
            if role != Some("tool") || id != Some(want.as_str()) {
                return false;
            }
        }
        if let Some(want) = &self.tool_result_for {
            let called = last
                .get("tool_call_id")
                .and_then(Value::as_str)
                .and_then(|id| called_tool(messages.into_iter().flatten(), id));
            if role != Some("tool") || called != Some(want.as_str()) {
                return false;
            }
        }
        if let Some(want) = &self.system_contains {
            let in_system = messages.into_iter().flatten().any(|m| {
                matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer"))
                    && text_of(m).contains(want.as_str())
            });
            if !in_system {
                return false;
            }
        }
        true
    }
}

/// A reply served to every request its key matches.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct KeyedReply {
    pub when: When,
    pub reply: Reply,
}

/// The keyed replies in the order they were added, with how often each served.
#[derive(Default, Debug)]
pub(crate) struct KeyedReplies {
    entries: Vec<(KeyedReply, u64)>,
}

impl KeyedReplies {
    /// Adds a rule. Stalls and HTTP statuses are order-dependent faults, so they stay in the
    /// FIFO; a keyed stall would hold every matching request forever.
    pub(crate) fn push(&mut self, keyed: KeyedReply) -> Result<(), String> {
        if matches!(keyed.reply, Reply::Stall { .. }) {
            return Err("a keyed reply cannot be a stall: queue it with push()".into());
        }
        self.entries.push((keyed, 0));
        Ok(())
    }

    /// The first rule whose key matches `body`, counted as served.
    pub(crate) fn take(&mut self, body: &Value) -> Option<Reply> {
        let (keyed, served) = self.entries.iter_mut().find(|(k, _)| k.when.matches(body))?;
        *served += 1;
        Some(keyed.reply.clone())
    }

    /// Rules no request has matched yet.
    pub(crate) fn unserved(&self) -> Vec<&KeyedReply> {
        self.entries.iter().filter(|(_, n)| *n == 0).map(|(k, _)| k).collect()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }
}

/// The name of the tool the call `id` of an assistant message in `messages` called.
fn called_tool<'a>(
    messages: impl DoubleEndedIterator<Item = &'a Value>,
    id: &str,
) -> Option<&'a str> {
    messages
        .rev()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(id))
        .and_then(|c| c.get("function")?.get("name")?.as_str())
}

/// A message's text: a string content, or its text parts joined.
fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect()
        }
        _ => String::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(messages: Value) -> Value {
        json!({ "model": "m", "messages": messages })
    }

    #[test]
    fn keys_look_at_the_last_message_and_the_system_prompt() {
        let req = body(json!([
            { "role": "system", "content": "You are the reviewer." },
            { "role": "user", "content": "check the parser" },
            { "role": "assistant", "content": null, "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "x", "arguments": "{}" } }
            ] },
            { "role": "tool", "tool_call_id": "c1", "content": "ok" },
        ]));
        assert!(When::result_of("c1").matches(&req));
        assert!(When::result_of_tool("x").matches(&req));
        assert!(!When::result_of_tool("y").matches(&req));
        assert!(!When::result_of("c2").matches(&req));
        assert!(!When::user_says("parser").matches(&req), "the last message is the tool's");
        assert!(When::result_of("c1").in_frame("reviewer").matches(&req));
        assert!(!When::result_of("c1").in_frame("planner").matches(&req));
        let prompt =
            body(json!([{ "role": "user", "content": [{ "type": "text", "text": "hi there" }] }]));
        assert!(When::user_says("there").matches(&prompt));
        assert!(!When::default().matches(&body(json!([]))), "no message, no match");
        let reminded = body(json!([
            { "role": "user", "content": "hi there" },
            { "role": "system", "content": "It is 10:00." }
        ]));
        assert!(When::user_says("there").matches(&reminded), "a trailing reminder is skipped");
    }

    #[test]
    fn the_first_matching_rule_serves_every_time_and_unserved_ones_are_listed() {
        let mut keyed = KeyedReplies::default();
        keyed.push(KeyedReply { when: When::user_says("hi"), reply: Reply::text("one") }).unwrap();
        keyed.push(KeyedReply { when: When::user_says("bye"), reply: Reply::text("two") }).unwrap();
        let hi = body(json!([{ "role": "user", "content": "hi" }]));
        assert_eq!(keyed.take(&hi), Some(Reply::text("one")));
        assert_eq!(keyed.take(&hi), Some(Reply::text("one")));
        assert_eq!(keyed.unserved().len(), 1);
        assert_eq!(keyed.take(&body(json!([{ "role": "user", "content": "?" }]))), None);
        assert!(
            keyed
                .push(KeyedReply {
                    when: When::default(),
                    reply: Reply::Stall { ms: 1, then_hang: false }
                })
                .is_err()
        );
    }
}
