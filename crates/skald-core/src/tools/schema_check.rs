//! Checks a call's arguments against its tool's (flat) JSON schema before any gate or human sees it.
//!
//! A call that cannot run must not wait in the Agent Inbox: the model gets the error at once and
//! can correct itself. Our schemas are flat objects of scalars and arrays, so required fields,
//! unknown fields and the JSON type of each property cover them; the tools still check values.

use serde_json::Value;

/// What is wrong with a call's arguments, in words the model can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    #[error("the arguments must be a JSON object")]
    NotAnObject,
    /// The parser's message about an empty argument string.
    #[error("the arguments are empty ({0})")]
    Empty(String),
    /// The parser's message about text that is not JSON.
    #[error("the arguments are not valid JSON ({0})")]
    NotJson(String),
    /// Each problem found against the schema, and the accepted names when the schema is closed.
    #[error("{}{}", problems.join("; "), accepted.as_ref().map(|a| format!(" (arguments: {})", a.join(", "))).unwrap_or_default())]
    Schema { problems: Vec<String>, accepted: Option<Vec<String>> },
}

/// Parses a call's raw argument text into the JSON object every tool takes.
pub fn parse_args(raw: &str) -> Result<Value, ArgsError> {
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ArgsError::NotAnObject),
        Err(e) if raw.trim().is_empty() => Err(ArgsError::Empty(e.to_string())),
        Err(e) => Err(ArgsError::NotJson(e.to_string())),
    }
}

/// Checks `args` against a tool's flat JSON schema.
pub(crate) fn check(schema: &Value, args: &Value) -> Result<(), ArgsError> {
    let Value::Object(given) = args else {
        return Err(ArgsError::NotAnObject);
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut problems = Vec::new();
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if given.get(key).is_none_or(Value::is_null) {
                problems.push(format!("`{key}` is required"));
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (key, value) in given {
        match properties.and_then(|p| p.get(key)) {
            None if closed => problems.push(format!("`{key}` is not an argument of this tool")),
            None => {}
            Some(property) => {
                if let Some(expected) = property.get("type").and_then(Value::as_str)
                    && !value.is_null()
                    && !has_type(value, expected)
                {
                    problems.push(format!("`{key}` must be {}", article(expected)));
                }
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let accepted = properties.filter(|_| closed).map(|p| p.keys().cloned().collect());
    Err(ArgsError::Schema { problems, accepted })
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" | "array" | "object" => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::check;

    fn schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "line": {"type": "integer"},
                "all": {"type": "boolean"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn a_complete_call_passes_and_nulls_count_as_absent() {
        assert_eq!(check(&schema(), &json!({"path": "a", "line": 3, "all": null})), Ok(()));
    }

    #[test]
    fn missing_unknown_and_mistyped_fields_are_all_named() {
        let err = check(&schema(), &json!({"file": "a", "line": "3"})).unwrap_err().to_string();
        assert!(err.contains("`path` is required"), "{err}");
        assert!(err.contains("`file` is not an argument"), "{err}");
        assert!(err.contains("`line` must be an integer"), "{err}");
        assert!(err.contains("(arguments: all, line, path)"), "{err}");
    }

    #[test]
    fn an_open_schema_accepts_extra_fields() {
        let open = json!({"type": "object", "properties": {}, "required": []});
        assert_eq!(check(&open, &json!({"anything": 1})), Ok(()));
        assert!(check(&open, &json!([1])).is_err());
    }
}
