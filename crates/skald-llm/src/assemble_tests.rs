//! Unit tests for chunk assembly, driven through the SSE parser like real traffic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::sse::SseParser;

/// Runs `sse` through the parser and assembler, split into `chunk`-byte network reads.
fn run(sse: &str, chunk: usize) -> (Result<LlmTurn, LlmError>, Vec<StreamDelta>) {
    let mut parser = SseParser::new();
    let mut asm = TurnAssembler::new();
    let mut deltas = Vec::new();
    let mut err = None;
    for piece in sse.as_bytes().chunks(chunk.max(1)) {
        parser.feed(piece, &mut |ev| {
            if err.is_none()
                && let Err(e) = asm.on_data(ev.data, &mut |d| deltas.push(d))
            {
                err = Some(e);
            }
        });
    }
    parser.finish(&mut |ev| {
        if err.is_none()
            && let Err(e) = asm.on_data(ev.data, &mut |d| deltas.push(d))
        {
            err = Some(e);
        }
    });
    match err {
        Some(e) => (Err(e), deltas),
        None => (asm.finish("m", true), deltas),
    }
}

fn sse(chunks: &[&str]) -> String {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect::<String>() + "data: [DONE]\n\n"
}

#[test]
fn text_deltas_usage_and_cost() {
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"cost":0.5,"prompt_tokens_details":{"cached_tokens":4}}}"#,
    ]);
    for chunk in [1, 7, 4096] {
        let (turn, deltas) = run(&body, chunk);
        let turn = turn.unwrap();
        assert_eq!(turn.content, "Hello");
        assert_eq!(turn.finish_reason.as_deref(), Some("stop"));
        assert_eq!(turn.cost, Some(0.5));
        let u = turn.usage.unwrap();
        assert_eq!((u.input_tokens, u.output_tokens, u.cache_read_tokens), (10, 2, 4));
        let texts: Vec<_> = deltas
            .iter()
            .map(|d| match d {
                StreamDelta::Content(t) => t.as_str(),
                StreamDelta::Reasoning(_) => "?",
            })
            .collect();
        assert_eq!(texts, vec!["Hel", "lo"]);
    }
}

#[test]
fn crlf_stream_parses_like_lf() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"content":"a"}}]}"#,
        r#"{"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}"#,
    ])
    .replace('\n', "\r\n");
    for chunk in [1, 2, 3, 1000] {
        assert_eq!(run(&body, chunk).0.unwrap().content, "ab");
    }
}

#[test]
fn tool_calls_by_index_with_split_arguments() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"ls","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let turn = run(&body, 13).0.unwrap();
    assert_eq!(
        turn.tool_calls,
        vec![
            ToolCallOut {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a"}"#.into()
            },
            ToolCallOut { id: "c2".into(), name: "ls".into(), arguments: "{}".into() },
        ]
    );
    assert_eq!(turn.finish_reason.as_deref(), Some("tool_calls"));
}

#[test]
fn repeated_id_and_name_in_every_chunk_are_not_duplicated() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"write","arguments":"{\"a\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"write","arguments":"1}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let turn = run(&body, 64).0.unwrap();
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].name, "write");
    assert_eq!(turn.tool_calls[0].id, "c1");
    assert_eq!(turn.tool_calls[0].arguments, r#"{"a":1}"#);
}

#[test]
fn missing_index_uses_id_then_last_call() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"x","function":{"name":"f","arguments":"{\"n\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"y","function":{"name":"g","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"x","function":{"arguments":""}}]}}]}"#,
        r#"{"choices":[{"finish_reason":"tool_calls"}]}"#,
    ]);
    let calls = run(&body, 50).0.unwrap().tool_calls;
    let got: Vec<_> =
        calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect();
    assert_eq!(got, vec![("x", "f", r#"{"n":1}"#), ("y", "g", "{}")]);
}

#[test]
fn every_call_on_index_zero_with_new_ids_are_separate_calls() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"finish_reason":"tool_calls"}]}"#,
    ]);
    let names: Vec<_> = run(&body, 99).0.unwrap().tool_calls.into_iter().map(|c| c.name).collect();
    assert_eq!(names, vec!["f", "g"]);
}

#[test]
fn invalid_json_arguments_are_kept_raw_and_missing_ids_are_generated() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{not json"}}]}}]}"#,
        r#"{"choices":[{"finish_reason":"tool_calls"}]}"#,
    ]);
    let calls = run(&body, 8).0.unwrap().tool_calls;
    assert_eq!(calls[0].arguments, "{not json");
    assert_eq!(calls[0].id, "call_0");
}

#[test]
fn reasoning_from_either_field_without_doubling() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"reasoning_content":"think "}}]}"#,
        r#"{"choices":[{"delta":{"reasoning":"more","reasoning_content":null}}]}"#,
        r#"{"choices":[{"delta":{"reasoning":"x","reasoning_content":"y"}}]}"#,
        r#"{"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}"#,
    ]);
    let (turn, deltas) = run(&body, 16);
    assert_eq!(turn.unwrap().reasoning.as_deref(), Some("think morey"));
    assert_eq!(deltas[0], StreamDelta::Reasoning("think ".into()));
}

#[test]
fn usage_last_wins() {
    let body = sse(&[
        r#"{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":null}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}"#,
    ]);
    let u = run(&body, 30).0.unwrap().usage.unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (9, 3));
}

#[test]
fn stream_without_done_or_finish_is_dropped() {
    let body = "data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n";
    assert!(matches!(run(body, 10).0, Err(LlmError::Stream(_))));
    // A finish reason without [DONE] is a complete reply (some servers never send [DONE]).
    let body =
        "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n";
    assert_eq!(run(body, 10).0.unwrap().content, "a");
}

#[test]
fn malformed_chunk_and_empty_reply_and_error_chunk() {
    assert!(matches!(run("data: {\"choices\":[{\"del\n\n", 5).0, Err(LlmError::Malformed(_))));
    let empty = sse(&[r#"{"choices":[{"delta":{"content":""},"finish_reason":"stop"}]}"#]);
    assert!(matches!(run(&empty, 5).0, Err(LlmError::Empty)));
    let err = "data: {\"error\":{\"message\":\"overloaded\"}}\n\n";
    match run(err, 5).0 {
        Err(LlmError::Provider(m)) => assert_eq!(m, "overloaded"),
        other => panic!("expected provider error, got {other:?}"),
    }
}

#[test]
fn data_lines_without_blank_separators_still_parse() {
    let body = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\ndata: [DONE]\n\n";
    assert_eq!(run(body, 7).0.unwrap().content, "ab");
}

#[test]
fn whole_reply_with_object_arguments_and_content_parts() {
    let mut asm = TurnAssembler::new();
    let body = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,
        "message":{"role":"assistant","content":[{"type":"text","text":"hi "},{"type":"text","text":"there"}],
        "tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]},
        "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
    let mut deltas = Vec::new();
    asm.on_json(body, &mut |d| deltas.push(d)).unwrap();
    let turn = asm.finish("m", false).unwrap();
    assert_eq!(turn.content, "hi there");
    assert_eq!(turn.tool_calls[0].arguments, r#"{"a":1}"#);
    assert_eq!(turn.usage.unwrap().output_tokens, 4);
    assert_eq!(deltas, vec![StreamDelta::Content("hi there".into())]);
}
