//! Reply scripts as JSON: the format the binary and the control endpoint accept.

use skald_testkit::{Reply, Script, ScriptedToolCall, TestkitError};

#[test]
fn script_accepts_an_array_or_an_object_with_by_model() {
    let list = Script::from_json(r#"[{"type":"text","content":"a"},{"type":"empty"}]"#).unwrap();
    assert_eq!(list.replies, vec![Reply::text("a"), Reply::Empty]);
    assert!(list.by_model.is_empty());

    let full = Script::from_json(
        r#"{"replies":[{"type":"stall","ms":5}],
            "by_model":{"m":[{"type":"status","code":429,"times":3,"retry_after":1}]}}"#,
    )
    .unwrap();
    assert_eq!(full.replies, vec![Reply::Stall { ms: 5, then_hang: false }]);
    assert_eq!(
        full.by_model["m"],
        vec![Reply::Status { code: 429, times: 3, retry_after: Some(1), body: None }]
    );
}

#[test]
fn script_errors_name_the_problem() {
    let err = Script::from_json(r#"[{"type":"text"}]"#).unwrap_err();
    assert!(matches!(err, TestkitError::ParseScript(_)));
    assert!(err.to_string().contains("content"), "{err}");
}

#[test]
fn replies_round_trip_through_json() {
    let replies = vec![
        Reply::tool_calls(vec![
            ScriptedToolCall::with_id("c1", "a", "{not json"),
            ScriptedToolCall::new("b", "{}"),
        ]),
        Reply::DropMidStream { partial: "par".into() },
        Reply::MalformedSse,
        Reply::status(500, 2),
    ];
    let text = serde_json::to_string(&replies).unwrap();
    assert!(text.contains(r#""type":"drop_mid_stream""#), "{text}");
    let back: Vec<Reply> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, replies);
}
