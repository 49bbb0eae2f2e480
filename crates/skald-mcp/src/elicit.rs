//! A server asking the user for input (`elicitation/create`, form mode): the requested schema
//! read into a [`Form`] of flat fields, an [`Elicitor`] (the engine) that puts it to a person,
//! and the answer checked against the form before it goes back to the server.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Most fields a form may have (a server asking for more is refused).
pub const MAX_FIELDS: usize = 20;
/// Longest message, title, description or enum label kept (characters; the rest is cut).
const MAX_TEXT: usize = 2000;
/// Most options of one enum field.
const MAX_OPTIONS: usize = 100;

/// What a field holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldKind {
    Text {
        /// `email`, `uri`, `date`, `date-time` or `password` (shown as such; not checked here).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        format: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_length: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_length: Option<u64>,
    },
    Number {
        integer: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
    },
    Boolean,
    /// One of `options` (their values; `labels` as shown, same length).
    Choice {
        options: Vec<String>,
        labels: Vec<String>,
    },
    /// Some of `options` (an array of them).
    MultiChoice {
        options: Vec<String>,
        labels: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_items: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_items: Option<u64>,
    },
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The property name the server reads the value under.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub kind: FieldKind,
    pub required: bool,
    /// Masked when typed, never stored or shown: `format: password`, `writeOnly`, or a name
    /// that says it is a secret.
    pub sensitive: bool,
    /// The server's default, offered pre-filled (a sensitive field's default is dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

/// What a server asks: its message and the fields to fill (none: a yes/no confirmation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Form {
    pub message: String,
    pub fields: Vec<Field>,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Submitted, with the values of the form (checked by [`Form::check`]).
    Accept(Map<String, Value>),
    /// Said no.
    Decline,
    /// Dismissed without choosing (or nobody was there to ask).
    Cancel,
}

/// Puts a server's form to a person. The engine's implementation asks in the Agent Inbox, or
/// declines at once where nobody attends the session.
pub trait Elicitor: Send + Sync + 'static {
    fn elicit(&self, server: &str, form: Form) -> Pin<Box<dyn Future<Output = Answer> + Send>>;
}

fn cut(s: &str) -> String {
    let s: String = s.chars().filter(|c| !c.is_control() || *c == '\n').collect();
    match s.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s,
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(cut)
}

/// Whether a property named `name` holds a secret by its name alone.
fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["password", "passphrase", "passwd", "secret", "token", "api_key", "apikey", "private_key"]
        .iter()
        .any(|w| name.contains(w))
}

impl Form {
    /// Reads `schema` (`requestedSchema`: an object of flat, primitive properties). Anything
    /// else — nested objects, arrays, too many fields — is refused with the reason.
    pub fn from_schema(message: &str, schema: &Value) -> Result<Self, String> {
        let empty = Map::new();
        let props = match schema.get("properties") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => return Err("`properties` is not an object".into()),
        };
        if props.len() > MAX_FIELDS {
            return Err(format!("{} fields (at most {MAX_FIELDS})", props.len()));
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::with_capacity(props.len());
        for (name, prop) in props {
            fields.push(field(name, prop, required.contains(&name.as_str()))?);
        }
        Ok(Self { message: cut(message), fields })
    }

    /// Each field's default (the values a form shows before anyone types).
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields.iter().filter_map(|f| Some((f.name.clone(), f.default.clone()?))).collect()
    }

    /// Checks a submitted `content` against the form: every value of the right kind and in its
    /// range, every required field there, no field the form does not have. Numbers given as
    /// strings (from a text input) are read as numbers.
    pub fn check(&self, content: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        if let Some(unknown) = content.keys().find(|k| !self.fields.iter().any(|f| &f.name == *k)) {
            return Err(format!("the form has no field `{unknown}`"));
        }
        let mut out = Map::new();
        for f in &self.fields {
            match content.get(&f.name) {
                None | Some(Value::Null) if f.required => {
                    return Err(format!("`{}` is required", f.name));
                }
                None | Some(Value::Null) => {}
                Some(v) => {
                    out.insert(f.name.clone(), f.check(v)?);
                }
            }
        }
        Ok(out)
    }
}

/// An enum's values and, in the same order, their labels.
type Options = (Vec<String>, Vec<String>);

/// The options of an enum schema and their labels: `enum` (with the older `enumNames`), or
/// `oneOf`/`anyOf` entries of `{const, title}`. `None`: not an enum.
fn choices(name: &str, schema: &Value) -> Result<Option<Options>, String> {
    let bad = |why: &str| Err(format!("field `{name}`: {why}"));
    let (options, labels): (Vec<String>, Vec<String>) = if let Some(values) =
        schema.get("enum").and_then(Value::as_array)
    {
        let options: Vec<String> = values.iter().filter_map(|v| v.as_str().map(cut)).collect();
        if options.len() != values.len() {
            return bad("enum values must be strings");
        }
        let labels = match schema.get("enumNames").and_then(Value::as_array) {
            Some(n) if n.len() == options.len() => {
                n.iter().zip(&options).map(|(l, o)| text(Some(l)).unwrap_or(o.clone())).collect()
            }
            _ => options.clone(),
        };
        (options, labels)
    } else if let Some(entries) =
        schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array)
    {
        let mut pairs = Vec::with_capacity(entries.len());
        for e in entries {
            let Some(value) = e.get("const").and_then(Value::as_str) else {
                return bad("each option must have a string `const`");
            };
            pairs.push((cut(value), text(e.get("title")).unwrap_or_else(|| cut(value))));
        }
        pairs.into_iter().unzip()
    } else {
        return Ok(None);
    };
    if options.is_empty() {
        return bad("no options");
    }
    if options.len() > MAX_OPTIONS {
        return bad(&format!("more than {MAX_OPTIONS} options"));
    }
    Ok(Some((options, labels)))
}

fn field(name: &str, prop: &Value, required: bool) -> Result<Field, String> {
    let bad = |why: &str| Err(format!("field `{name}`: {why}"));
    if !prop.is_object() {
        return bad("not a schema object");
    }
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("string");
    let kind = if ty == "array" {
        let items = prop.get("items").unwrap_or(&Value::Null);
        let Some((options, labels)) = choices(name, items)? else {
            return bad("an array must list its options (`items.enum` or `items.anyOf`)");
        };
        FieldKind::MultiChoice {
            options,
            labels,
            min_items: prop.get("minItems").and_then(Value::as_u64),
            max_items: prop.get("maxItems").and_then(Value::as_u64),
        }
    } else if let Some((options, labels)) = choices(name, prop)? {
        FieldKind::Choice { options, labels }
    } else {
        match ty {
            "string" => FieldKind::Text {
                format: text(prop.get("format")),
                min_length: prop.get("minLength").and_then(Value::as_u64),
                max_length: prop.get("maxLength").and_then(Value::as_u64),
            },
            "number" | "integer" => FieldKind::Number {
                integer: ty == "integer",
                minimum: prop.get("minimum").and_then(Value::as_f64),
                maximum: prop.get("maximum").and_then(Value::as_f64),
            },
            "boolean" => FieldKind::Boolean,
            other => return bad(&format!("type `{other}` is not a string, number or boolean")),
        }
    };
    let sensitive = prop.get("format").and_then(Value::as_str) == Some("password")
        || prop.get("writeOnly").and_then(Value::as_bool) == Some(true)
        || secret_name(name);
    let mut f = Field {
        name: cut(name),
        title: text(prop.get("title")),
        description: text(prop.get("description")),
        kind,
        required,
        sensitive,
        default: None,
    };
    // A default that does not fit the field is ignored, not offered; a secret's default is
    // never kept (it would be stored with the question).
    if !sensitive && let Some(d) = prop.get("default") {
        f.default = f.check(d).ok();
    }
    Ok(f)
}

impl Field {
    fn check(&self, v: &Value) -> Result<Value, String> {
        let name = &self.name;
        match &self.kind {
            FieldKind::Text { min_length, max_length, .. } => {
                let Some(s) = v.as_str() else { return Err(format!("`{name}` must be text")) };
                let len = s.chars().count() as u64;
                if min_length.is_some_and(|m| len < m) || max_length.is_some_and(|m| len > m) {
                    return Err(format!("`{name}` has the wrong length ({len} characters)"));
                }
                Ok(v.clone())
            }
            FieldKind::Number { integer, minimum, maximum } => {
                let n = match v {
                    Value::Number(n) => n.as_f64(),
                    Value::String(s) => s.trim().parse::<f64>().ok(),
                    _ => None,
                };
                let Some(n) = n.filter(|n| n.is_finite()) else {
                    return Err(format!("`{name}` must be a number"));
                };
                if *integer && n.fract() != 0.0 {
                    return Err(format!("`{name}` must be a whole number"));
                }
                if minimum.is_some_and(|m| n < m) || maximum.is_some_and(|m| n > m) {
                    return Err(format!("`{name}` is out of range"));
                }
                if *integer {
                    #[expect(clippy::cast_possible_truncation, reason = "checked whole above")]
                    return Ok(Value::from(n as i64));
                }
                Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
            }
            FieldKind::Boolean => match v {
                Value::Bool(_) => Ok(v.clone()),
                _ => Err(format!("`{name}` must be true or false")),
            },
            FieldKind::Choice { options, .. } => match v.as_str() {
                Some(s) if options.iter().any(|o| o == s) => Ok(v.clone()),
                _ => Err(format!("`{name}` must be one of {}", options.join(", "))),
            },
            FieldKind::MultiChoice { options, min_items, max_items, .. } => {
                let picked = v.as_array().filter(|a| {
                    a.iter().all(|p| p.as_str().is_some_and(|s| options.iter().any(|o| o == s)))
                });
                let Some(picked) = picked else {
                    return Err(format!("`{name}` must be some of {}", options.join(", ")));
                };
                let n = picked.len() as u64;
                if min_items.is_some_and(|m| n < m) || max_items.is_some_and(|m| n > m) {
                    return Err(format!("`{name}`: {n} chosen, out of the allowed range"));
                }
                Ok(v.clone())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::{FieldKind, Form};

    #[test]
    fn a_schema_becomes_fields_with_defaults_and_secrets_masked() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "Ann"},
                "age": {"type": "integer", "minimum": 0, "default": 30},
                "colour": {"type": "string", "enum": ["red", "blue"], "enumNames": ["Red", "Blue"]},
                "ok": {"type": "boolean", "default": true},
                "api_token": {"type": "string", "default": "leaked"},
                "pin": {"type": "string", "format": "password"},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
                "tags": {"type": "array", "maxItems": 1, "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b"}]}, "default": ["a"]}
            },
            "required": ["name", "pin"]
        });
        let form = Form::from_schema("Who are you?", &schema).unwrap();
        let f = |n: &str| form.fields.iter().find(|f| f.name == n).unwrap();
        assert!(f("name").required && !f("age").required);
        assert!(f("api_token").sensitive && f("pin").sensitive && !f("name").sensitive);
        assert_eq!(f("api_token").default, None, "a secret's default is never kept");
        assert_eq!(
            f("colour").kind,
            FieldKind::Choice {
                options: vec!["red".into(), "blue".into()],
                labels: vec!["Red".into(), "Blue".into()]
            }
        );
        assert_eq!(
            f("size").kind,
            FieldKind::Choice { options: vec!["s".into()], labels: vec!["Small".into()] }
        );
        assert_eq!(
            serde_json::Value::Object(form.defaults()),
            json!({"name": "Ann", "age": 30, "ok": true, "tags": ["a"]})
        );
        assert_eq!(
            f("tags").kind,
            FieldKind::MultiChoice {
                options: vec!["a".into(), "b".into()],
                labels: vec!["A".into(), "b".into()],
                min_items: None,
                max_items: Some(1)
            }
        );
        assert!(
            form.check(json!({"name": "x", "pin": "y", "tags": ["a", "b"]}).as_object().unwrap())
                .is_err()
        );
    }

    #[test]
    fn unsupported_schemas_are_refused() {
        for bad in [
            json!({"properties": {"a": {"type": "object"}}}),
            json!({"properties": {"a": {"type": "array"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
            json!({"properties": {"a": {"enum": [1, 2]}}}),
            json!({"properties": "x"}),
        ] {
            assert!(Form::from_schema("m", &bad).is_err(), "{bad}");
        }
        let many: serde_json::Map<_, _> =
            (0..21).map(|i| (format!("f{i}"), json!({"type": "string"}))).collect();
        assert!(Form::from_schema("m", &json!({"properties": many})).is_err());
        // No properties: a yes/no confirmation.
        assert!(Form::from_schema("Sure?", &json!({"type": "object"})).unwrap().fields.is_empty());
    }

    #[test]
    fn answers_are_checked_against_the_form() {
        let schema = json!({"properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 5},
            "c": {"enum": ["a", "b"]},
            "t": {"type": "string", "maxLength": 3}
        }, "required": ["n"]});
        let form = Form::from_schema("m", &schema).unwrap();
        let ok = |v: serde_json::Value| form.check(v.as_object().unwrap());
        assert_eq!(
            ok(json!({"n": "3", "c": "a"})).unwrap(),
            *json!({"n": 3, "c": "a"}).as_object().unwrap()
        );
        assert!(ok(json!({"c": "a"})).unwrap_err().contains("required"));
        assert!(ok(json!({"n": 9})).is_err());
        assert!(ok(json!({"n": 2.5})).is_err());
        assert!(ok(json!({"n": 1, "c": "z"})).is_err());
        assert!(ok(json!({"n": 1, "t": "long"})).is_err());
        assert!(ok(json!({"n": 1, "extra": 1})).unwrap_err().contains("no field"));
    }
}
