//! The schema check on flat, nested and hostile schemas.

#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ArgsError, check};

fn flat() -> Value {
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

fn nested() -> Value {
    json!({
        "type": "object",
        "properties": {
            "options": {
                "type": "object",
                "properties": {
                    "depth": {"type": "integer", "minimum": 1, "maximum": 3},
                    "mode": {"enum": ["fast", "exact"]}
                },
                "required": ["mode"]
            },
            "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
        }
    })
}

#[test]
fn a_complete_call_passes_and_top_level_nulls_count_as_absent() {
    assert_eq!(check(&flat(), &json!({"path": "a", "line": 3, "all": null})), Ok(()));
    assert_eq!(check(&nested(), &json!({"options": {"depth": 2, "mode": "fast"}})), Ok(()));
}

#[test]
fn missing_unknown_and_mistyped_fields_are_all_named() {
    let err = check(&flat(), &json!({"file": "a", "line": "3"})).unwrap_err().to_string();
    assert!(err.contains("`path` is required"), "{err}");
    assert!(err.contains("`file` is not an argument of this tool"), "{err}");
    assert!(err.contains("at `/line`: \"3\" is not of type \"integer\""), "{err}");
    assert!(err.contains("(arguments: all, line, path)"), "{err}");
}

#[test]
fn nested_objects_array_items_enums_and_ranges_are_checked_by_path() {
    let args =
        json!({"options": {"depth": 5, "mode": "slow"}, "items": [{"name": "a"}, {"name": 7}]});
    let err = check(&nested(), &args).unwrap_err().to_string();
    assert!(err.contains("at `/options/depth`: 5 is greater than the maximum of 3"), "{err}");
    assert!(err.contains("at `/options/mode`:"), "{err}");
    assert!(err.contains("\"fast\""), "the accepted values are named: {err}");
    assert!(err.contains("at `/items/1/name`: 7 is not of type \"string\""), "{err}");
    let missing = check(&nested(), &json!({"options": {}})).unwrap_err().to_string();
    assert_eq!(missing, "at `/options`: `mode` is required");
}

#[test]
fn an_open_schema_accepts_extra_fields_but_not_a_non_object() {
    let open = json!({"type": "object", "properties": {}, "required": []});
    assert_eq!(check(&open, &json!({"anything": 1})), Ok(()));
    assert_eq!(check(&open, &json!([1])), Err(ArgsError::NotAnObject));
}

#[test]
fn a_remote_ref_is_never_fetched_and_makes_the_tool_unusable() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/schema.json", listener.local_addr().unwrap());
    let schema = json!({"type": "object", "properties": {"a": {"$ref": url}}});
    let err = check(&schema, &json!({"a": 1})).unwrap_err();
    assert!(matches!(err, ArgsError::UnusableSchema(_)), "{err}");
    let accepted = listener.accept();
    assert!(accepted.is_err(), "the schema's $ref reached the network: {accepted:?}");
}

#[test]
fn huge_deep_and_self_referencing_schemas_end_quickly() {
    let mut deep = json!({"type": "object"});
    for _ in 0..200 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let mut props = serde_json::Map::new();
    for i in 0..20_000 {
        props
            .insert(format!("field_{i}"), json!({"type": "string", "description": "x".repeat(20)}));
    }
    let huge = json!({"type": "object", "properties": props});
    let looped = json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
    let selfish = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
    let started = Instant::now();
    for schema in [&deep, &huge] {
        let err = check(schema, &json!({})).unwrap_err();
        assert!(matches!(err, ArgsError::UnusableSchema(_)), "{err}");
    }
    // A cycle of references either fails to compile or validates; it never hangs.
    let _ = check(&looped, &json!({"a": 1}));
    let chain = json!({"next": {"next": {"next": {"next": 1}}}});
    let err = check(&selfish, &chain).unwrap_err().to_string();
    assert!(err.contains("at `/next/next/next/next`"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}
