//! Provider faults: each is injected once (or, for the last-resort row, on every attempt) by the
//! strict fake provider over real HTTP; the turn must recover with the answer stored once and
//! shown as it is, or end with an error that names the fault, and the prompt is never lost.

use serde_json::json;
use skald_core::turn::TurnOutcome;
use skald_testkit::matrix::{Row, excerpt};
use skald_testkit::{Reply, ScriptedToolCall};

use super::{
    answers, messages, prompt_kept, retry_view, stored_view, streamed_answer, tool_results,
    user_view,
};
use crate::suite::turn::Rig;

const PROMPT: &str = "What is the plan?";
const ANSWER: &str = "Here is the plan, in full.";

/// Queues `faults`, then the answer, and measures the turn: it must end with the answer, stored
/// once, and the text the user saw streamed must be that answer.
async fn fault_then_answer(id: &str, rig: Rig, faults: Vec<Reply>) {
    for fault in faults {
        rig.fake.push(fault);
    }
    rig.fake.push(Reply::text(ANSWER));
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let mut row = Row::new(id);
    row.redact(rig.fake.base_url(), "<provider>")
        .user_sees(user_view(&events))
        .model_sees(retry_view(&rig.fake.requests()))
        .stored(stored_view(&detail))
        .lost_if(!prompt_kept(&detail, PROMPT), "the prompt");
    let stored = answers(&detail);
    let shown = streamed_answer(&events);
    let why = if !matches!(&outcome, TurnOutcome::Final { content, .. } if content == ANSWER) {
        format!("the turn ended {outcome:?}")
    } else if stored != [ANSWER] {
        format!("the answer is stored {} times", stored.len())
    } else {
        format!(
            "the screen showed {} while the answer is {}",
            excerpt(&shown, 60),
            excerpt(ANSWER, 60)
        )
    };
    row.recovered_if(why.starts_with("the screen") && shown == ANSWER, &why).finish();
}

#[tokio::test]
async fn rate_limit_with_retry_after() {
    let rig = Rig::new("").await;
    let fault = Reply::Status { code: 429, times: 1, retry_after: Some(1), body: None };
    fault_then_answer("provider.429-retry-after", rig, vec![fault]).await;
}

#[tokio::test]
async fn rate_limit_without_retry_after() {
    fault_then_answer(
        "provider.429-no-retry-after",
        Rig::new("").await,
        vec![Reply::status(429, 1)],
    )
    .await;
}

#[tokio::test]
async fn http_500() {
    fault_then_answer("provider.500", Rig::new("").await, vec![Reply::status(500, 1)]).await;
}

#[tokio::test]
async fn http_502() {
    fault_then_answer("provider.502", Rig::new("").await, vec![Reply::status(502, 1)]).await;
}

#[tokio::test]
async fn http_503() {
    fault_then_answer("provider.503", Rig::new("").await, vec![Reply::status(503, 1)]).await;
}

#[tokio::test]
async fn no_response_headers_before_the_request_timeout() {
    let rig = Rig::new("llm:\n  request_timeout_secs: 1\n").await;
    let stall = Reply::Stall { ms: 600_000, then_hang: true };
    fault_then_answer("provider.timeout-before-headers", rig, vec![stall]).await;
}

#[tokio::test]
async fn a_stream_that_goes_silent_mid_reply() {
    let rig = Rig::new("llm:\n  idle_timeout_secs: 1\n").await;
    let hang = Reply::HangMidStream { partial: "Here is the pl".into() };
    fault_then_answer("provider.stall-mid-stream", rig, vec![hang]).await;
}

#[tokio::test]
async fn a_stream_dropped_mid_reply() {
    let drop = Reply::DropMidStream { partial: "Here is the pl".into() };
    fault_then_answer("provider.dropped-stream", Rig::new("").await, vec![drop]).await;
}

#[tokio::test]
async fn malformed_sse() {
    fault_then_answer("provider.malformed-sse", Rig::new("").await, vec![Reply::MalformedSse])
        .await;
}

#[tokio::test]
async fn an_empty_reply() {
    fault_then_answer("provider.empty-reply", Rig::new("").await, vec![Reply::Empty]).await;
}

#[tokio::test]
async fn http_200_with_an_error_body() {
    let body = json!({"error": {"message": "upstream provider overloaded", "code": 502}});
    let fault =
        Reply::Status { code: 200, times: 1, retry_after: None, body: Some(body.to_string()) };
    fault_then_answer("provider.200-error-body", Rig::new("").await, vec![fault]).await;
}

#[tokio::test]
async fn a_streamed_reply_with_tools_that_ends_before_its_first_delta() {
    let fault = Reply::StreamEndsBeforeDelta {
        error: Some("Automatic streaming tool choice is not supported".into()),
    };
    fault_then_answer("provider.stream-ends-before-delta", Rig::new("").await, vec![fault]).await;
}

#[tokio::test]
async fn connection_refused_falls_back_to_the_next_model() {
    // Bound, then closed: nobody listens on this port.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let rig = Rig::configured(|url| {
        format!(
            "llm:\n  clients:\n    - name: primary\n      base_url: http://{dead}/v1\n      \
             model: fake-model\n    - name: backup\n      base_url: {url}\n      model: \
             fake-model-2\n"
        )
    })
    .await;
    rig.fake.push(Reply::text(ANSWER));
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let fell_back = events.iter().any(|e| {
        matches!(e, skald_protocol::Event::ModelFallback { reason, .. }
            if reason.to_lowercase().contains("connection refused"))
    });
    let mut row = Row::new("provider.connect-refused");
    row.redact(dead.to_string(), "127.0.0.1:<closed port>")
        .user_sees(user_view(&events))
        .model_sees(format!("the backup model gets {}", retry_view(&rig.fake.requests())))
        .stored(stored_view(&detail))
        .lost_if(!prompt_kept(&detail, PROMPT), "the prompt")
        .recovered_if(
            fell_back
                && matches!(&outcome, TurnOutcome::Final { content, .. } if content == ANSWER)
                && answers(&detail) == [ANSWER],
            &format!("the turn ended {outcome:?} (fallback named the refusal: {fell_back})"),
        )
        .finish();
}

#[tokio::test]
async fn http_503_on_every_attempt_of_every_model() {
    let rig = Rig::two_models().await;
    for model in ["fake-model", "fake-model-2"] {
        // First attempt + 3 retries each; `Retry-After: 0` keeps the test fast.
        let fault = Reply::Status { code: 503, times: 4, retry_after: Some(0), body: None };
        rig.fake.push_for_model(model, fault);
    }
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let error = events
        .iter()
        .rev()
        .find_map(|e| match e {
            skald_protocol::Event::TurnEnded {
                outcome: skald_protocol::TurnEnd::Failed { reason },
            } => Some(reason.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let kept = detail.messages.iter().any(
        |m| matches!(m, skald_protocol::DebugMessage::User { content, .. } if content == PROMPT),
    );
    let mut row = Row::new("provider.503-every-attempt");
    row.redact(rig.fake.base_url(), "<provider>")
        .user_sees(user_view(&events))
        .model_sees(retry_view(&rig.fake.requests()))
        .stored(stored_view(&detail))
        .lost_if(!kept, "the prompt");
    if matches!(outcome, TurnOutcome::Failed { .. }) {
        row.clear_error(&error, &["503", "primary", "backup"]);
    } else {
        row.recovered_if(false, &format!("a turn whose every request failed ended {outcome:?}"));
    }
    row.finish();
}

#[tokio::test]
async fn invalid_json_in_tool_arguments() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("plan.txt"), "the plan\n").unwrap();
    rig.fake.push(Reply::tool_call("read_file", "{\"path\": \"plan.txt\""));
    rig.fake.push(Reply::tool_call("read_file", r#"{"path": "plan.txt"}"#));
    rig.fake.push(Reply::text(ANSWER));
    tool_round_row("provider.invalid-tool-json", rig, &["json"]).await;
}

#[tokio::test]
async fn an_unknown_tool_name() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("plan.txt"), "the plan\n").unwrap();
    rig.fake.push(Reply::tool_call("read_plan", r#"{"path": "plan.txt"}"#));
    rig.fake.push(Reply::tool_call("read_file", r#"{"path": "plan.txt"}"#));
    rig.fake.push(Reply::text(ANSWER));
    tool_round_row("provider.unknown-tool", rig, &["read_plan", "read_file"]).await;
}

/// A bad call in round one, a good one in round two, then the answer: the model must be told
/// what was wrong (naming `must_name`) and the turn must finish.
async fn tool_round_row(id: &str, rig: Rig, must_name: &[&str]) {
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let reqs = rig.fake.requests();
    let told = reqs.get(1).map(tool_results).unwrap_or_default();
    let told = told.first().cloned().unwrap_or_default();
    let lower = told.to_lowercase();
    let named = must_name.iter().all(|n| lower.contains(&n.to_lowercase()));
    let mut row = Row::new(id);
    row.redact(rig.work.display().to_string(), "<workdir>")
        .user_sees(user_view(&events))
        .model_sees(format!(
            "{}; the next request answers the call with {}",
            retry_view(&reqs[..1]),
            excerpt(&told, 120)
        ))
        .stored(stored_view(&detail))
        .lost_if(!prompt_kept(&detail, PROMPT), "the prompt")
        .recovered_if(
            named
                && reqs.iter().all(|r| r.validation_error.is_none())
                && matches!(&outcome, TurnOutcome::Final { content, .. } if content == ANSWER),
            &format!("the model was told {} and the turn ended {outcome:?}", excerpt(&told, 80)),
        )
        .finish();
}

#[tokio::test]
async fn duplicate_tool_call_ids_in_one_reply() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(rig.work.join("b.txt"), "beta\n").unwrap();
    rig.fake.push(Reply::tool_calls(vec![
        ScriptedToolCall::with_id("call_dup", "read_file", r#"{"path": "a.txt"}"#),
        ScriptedToolCall::with_id("call_dup", "read_file", r#"{"path": "b.txt"}"#),
    ]));
    rig.fake.push(Reply::text(ANSWER));
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let reqs = rig.fake.requests();
    let second = reqs.get(1).map(messages).unwrap_or_default();
    let call_ids: Vec<String> = second
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str().map(str::to_owned))
        .collect();
    let results = reqs.get(1).map(tool_results).unwrap_or_default();
    let both = results.len() == 2
        && results[0].contains("alpha")
        && results[1].contains("beta")
        && call_ids.len() == 2
        && call_ids[0] != call_ids[1];
    let mut row = Row::new("provider.duplicate-call-ids");
    row.user_sees(user_view(&events))
        .model_sees(format!(
            "{}; the next request carries both results under the ids {}",
            retry_view(&reqs[..1]),
            call_ids.join(" and ")
        ))
        .stored(stored_view(&detail))
        .lost_if(!both, "one of the two calls' results")
        .recovered_if(
            matches!(&outcome, TurnOutcome::Final { content, .. } if content == ANSWER),
            &format!("the turn ended {outcome:?}"),
        )
        .finish();
}
