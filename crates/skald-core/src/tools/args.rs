//! Typed access to a tool call's JSON arguments, with errors the model can act on.

use serde_json::{Map, Value};

use super::ToolError;

pub(crate) struct Args<'a>(&'a Map<String, Value>);

fn invalid(message: String) -> ToolError {
    ToolError::InvalidArguments(message)
}

impl<'a> Args<'a> {
    pub(crate) fn new(value: &'a Value) -> Result<Self, ToolError> {
        match value {
            Value::Object(map) => Ok(Self(map)),
            _ => Err(invalid("arguments must be a JSON object".into())),
        }
    }

    /// Absent and `null` are the same: models often send explicit nulls for optional fields.
    fn field(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// A required string; may be empty.
    pub(crate) fn string(&self, key: &str) -> Result<&'a str, ToolError> {
        self.opt_string(key)?.ok_or_else(|| invalid(format!("`{key}` is required (string)")))
    }

    /// A required string that must not be empty.
    pub(crate) fn non_empty(&self, key: &str) -> Result<&'a str, ToolError> {
        let s = self.string(key)?;
        if s.is_empty() {
            return Err(invalid(format!("`{key}` must not be empty")));
        }
        Ok(s)
    }

    pub(crate) fn opt_string(&self, key: &str) -> Result<Option<&'a str>, ToolError> {
        match self.field(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(format!("`{key}` must be a string"))),
        }
    }

    /// An optional integer >= 1. Numeric strings ("12") are accepted because models send them.
    pub(crate) fn opt_positive(&self, key: &str) -> Result<Option<u64>, ToolError> {
        let bad = || invalid(format!("`{key}` must be a positive integer"));
        let n = match self.field(key) {
            None => return Ok(None),
            Some(Value::Number(n)) => n.as_u64().ok_or_else(bad)?,
            Some(Value::String(s)) => s.trim().parse::<u64>().map_err(|_| bad())?,
            Some(_) => return Err(bad()),
        };
        if n == 0 {
            return Err(bad());
        }
        Ok(Some(n))
    }

    /// An optional integer >= 0 (a count that may be zero); numeric strings accepted as above.
    pub(crate) fn opt_count(&self, key: &str) -> Result<Option<u64>, ToolError> {
        let bad = || invalid(format!("`{key}` must be an integer of 0 or more"));
        match self.field(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(bad),
            Some(Value::String(s)) => s.trim().parse::<u64>().map(Some).map_err(|_| bad()),
            Some(_) => Err(bad()),
        }
    }

    pub(crate) fn positive(&self, key: &str) -> Result<u64, ToolError> {
        self.opt_positive(key)?
            .ok_or_else(|| invalid(format!("`{key}` is required (positive integer)")))
    }

    pub(crate) fn opt_bool(&self, key: &str) -> Result<Option<bool>, ToolError> {
        match self.field(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(_) => Err(invalid(format!("`{key}` must be a boolean"))),
        }
    }
}

/// A usize from a u64 argument, saturating (line numbers beyond usize cannot exist anyway).
pub(crate) fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
