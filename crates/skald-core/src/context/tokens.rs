//! Context-size accounting: provider usage when fresh, a chars/4 estimate otherwise.

use serde_json::Value;

/// Rough token estimate of a request's messages (chars / 4, images as 4 800 chars).
pub fn estimate_messages(messages: &[Value]) -> i64 {
    tokens_of_chars(messages.iter().map(message_chars).sum())
}

/// The chars one message counts for in the estimate.
pub fn message_chars(message: &Value) -> usize {
    value_chars(message)
}

/// The estimate for messages that count `chars` in total.
pub fn tokens_of_chars(chars: usize) -> i64 {
    i64::try_from(chars / 4).unwrap_or(i64::MAX)
}

fn value_chars(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        Value::Array(a) => a.iter().map(value_chars).sum(),
        Value::Object(o) => {
            if o.get("type").and_then(Value::as_str) == Some("image_url") {
                return 4_800;
            }
            o.iter().filter(|(k, _)| k.as_str() != "role").map(|(_, v)| value_chars(v)).sum()
        }
        _ => 0,
    }
}
