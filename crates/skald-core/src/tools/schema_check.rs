//! Checks a call's arguments against its tool's JSON Schema (built-in and MCP alike) before any
//! gate, person or server sees them.
//!
//! A call that cannot run must not wait in the Agent Inbox nor reach a server: the model gets the
//! error at once, with the place in its arguments (`/options/depth`) and what was expected, and
//! can correct itself. Schemas are compiled once (cached by their text) with no `$ref` ever
//! fetched: a server's schema is a program we do not control, so it is bounded in size and depth,
//! and one that cannot be compiled within those bounds makes its tool's calls fail rather than
//! pass unchecked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Retrieve, Uri, Validator};
use serde_json::Value;

/// The largest schema compiled (its JSON text): the built-in ones are under 2 KB, the largest
/// real MCP schemas tens of KB.
const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// The deepest nesting of a schema's JSON.
const MAX_SCHEMA_DEPTH: usize = 64;
/// Compiled schemas kept; past it the cache starts over (tools rarely number in the hundreds).
const MAX_CACHED: usize = 512;
/// Problems named in one answer: enough to fix a call, never a wall of text.
const MAX_PROBLEMS: usize = 8;

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
    /// The tool's own schema cannot be used, so no call of it can be checked.
    #[error("this tool's input schema cannot be used ({0}), so it cannot be called")]
    UnusableSchema(String),
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

/// Checks `args` against `schema`. Top-level nulls count as absent (models send explicit nulls
/// for optional fields, and every tool reads them so).
pub fn check(schema: &Value, args: &Value) -> Result<(), ArgsError> {
    let Value::Object(given) = args else {
        return Err(ArgsError::NotAnObject);
    };
    let validator = compiled(schema)?;
    let present: serde_json::Map<String, Value> =
        given.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
    let present = Value::Object(present);
    let mut problems = Vec::new();
    let mut unknown_field = false;
    for error in validator.iter_errors(&present).take(MAX_PROBLEMS) {
        let at = error.instance_path().to_string();
        let top = at.is_empty();
        let what = match error.kind() {
            ValidationErrorKind::Required { property } => {
                format!("`{}` is required", property.as_str().unwrap_or_default())
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                unknown_field |= top;
                let place = if top { "of this tool" } else { "here" };
                let each: Vec<String> = unexpected
                    .iter()
                    .map(|u| format!("`{u}` is not an argument {place}"))
                    .collect();
                each.join("; ")
            }
            _ => error.to_string(),
        };
        problems.push(if top { what } else { format!("at `{at}`: {what}") });
    }
    if problems.is_empty() {
        return Ok(());
    }
    let accepted = unknown_field
        .then(|| schema.get("properties").and_then(Value::as_object))
        .flatten()
        .map(|p| p.keys().cloned().collect());
    Err(ArgsError::Schema { problems, accepted })
}

/// A schema compiled, or why it could not be.
type Compiled = Result<Arc<Validator>, String>;

/// The compiled validator of `schema`, from the cache or compiled now.
fn compiled(schema: &Value) -> Result<Arc<Validator>, ArgsError> {
    static CACHE: Mutex<Option<HashMap<String, Compiled>>> = Mutex::new(None);
    let key = schema.to_string();
    let lock = || CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(hit) = lock().as_ref().and_then(|c| c.get(&key)) {
        return hit.clone().map_err(ArgsError::UnusableSchema);
    }
    let built = compile(schema, key.len());
    let mut cache = lock();
    let map = cache.get_or_insert_with(HashMap::new);
    if map.len() >= MAX_CACHED {
        map.clear();
    }
    map.insert(key, built.clone());
    built.map_err(ArgsError::UnusableSchema)
}

fn compile(schema: &Value, text_len: usize) -> Compiled {
    if text_len > MAX_SCHEMA_BYTES {
        return Err(format!("{text_len} bytes, more than the {MAX_SCHEMA_BYTES} accepted"));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(format!("nested deeper than {MAX_SCHEMA_DEPTH} levels"));
    }
    jsonschema::options()
        .with_retriever(NoFetch)
        .build(schema)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// Refuses every external `$ref`: a schema is checked with what it holds, never with what a
/// URL or a file it names would say.
struct NoFetch;

impl Retrieve for NoFetch {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("external $ref {} is not fetched", uri.as_str()).into())
    }
}

/// How deeply `v` nests (iterative, so a hostile schema cannot overflow the stack here).
fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests;
