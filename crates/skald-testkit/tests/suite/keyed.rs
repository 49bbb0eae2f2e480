//! Keyed replies: answers chosen by the request's content, served as often as it repeats, ahead
//! of the FIFO, and counted by the drop check when never matched.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::json;
use skald_testkit::{FakeLlm, Reply, Script, ScriptedToolCall, When};

use super::helpers::*;

#[tokio::test]
async fn a_repeated_request_gets_the_same_keyed_answer_and_others_fall_back_to_the_queue() {
    let fake = FakeLlm::start().await.unwrap();
    fake.on(
        When::user_says("start"),
        Reply::tool_calls(vec![ScriptedToolCall::with_id("call_a", "read_file", "{}")]),
    );
    fake.on(When::result_of("call_a"), Reply::text("done"));
    fake.push(Reply::text("from the queue"));
    let start = chat_body(vec![user("please start")]);
    for _ in 0..2 {
        let (status, body) = post_chat(&fake, &start).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["id"], "call_a");
    }
    let after = chat_body(vec![
        user("please start"),
        assistant_calls(&["call_a"]),
        tool_result("call_a", "contents"),
    ]);
    let (_, body) = post_chat(&fake, &after).await;
    assert_eq!(body["choices"][0]["message"]["content"], "done");
    let (_, body) = post_chat(&fake, &chat_body(vec![user("something else")])).await;
    assert_eq!(body["choices"][0]["message"]["content"], "from the queue");
    fake.assert_script_consumed();
}

#[tokio::test]
async fn a_keyed_reply_nothing_matched_fails_the_test() {
    let fake = FakeLlm::start().await.unwrap();
    fake.on(When::result_of("call_never").in_frame("reviewer"), Reply::text("never sent"));
    let failure = catch_unwind(AssertUnwindSafe(move || drop(fake))).err().unwrap();
    let failure = failure.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(failure.contains("1 keyed reply never matched"), "{failure}");
    assert!(failure.contains("call_never") && failure.contains("never sent"), "{failure}");
}

#[test]
fn a_script_file_can_hold_keyed_replies() {
    let script = Script::from_json(
        &json!({
            "keyed": [{ "when": { "tool_result_of": "c1", "system_contains": "planner" },
                        "reply": { "type": "text", "content": "planned" } }]
        })
        .to_string(),
    )
    .unwrap();
    assert_eq!(script.keyed.len(), 1);
    assert_eq!(script.keyed[0].when, When::result_of("c1").in_frame("planner"));
    assert_eq!(script.keyed[0].reply, Reply::text("planned"));
}
