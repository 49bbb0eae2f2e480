//! `skald inbox` (approvals, questions and interrupted calls), `skald approve` (with an optional bypass), `skald deny`, `skald answer`.

use skald_api::{
    AnswerQuestionParams, Caller, DecideParams, InboxParams, OpenInterruptedCallsParams, ops,
};
use skald_core::Engine;
use skald_protocol::{
    ApiError, BypassDuration, BypassRequest, BypassScopeKind, DecisionInput, ErrorCode,
};

use super::show;
use crate::exit;
use crate::output::{Output, one_line};

pub async fn inbox(engine: &Engine, out: &Output) -> Result<u8, ApiError> {
    let inbox = ops::inbox(engine, &Caller::Cli, InboxParams {}).await?;
    let interrupted =
        ops::open_interrupted_calls(engine, &Caller::Cli, OpenInterruptedCallsParams {}).await?;
    if out.is_json() {
        // The inbox as the API answers it, with the calls that wait for the user's word.
        let mut json = serde_json::to_value(&inbox)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        json["interrupted"] = serde_json::to_value(&interrupted)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        out.json(&json)?;
        return Ok(exit::OK);
    }
    for call in &interrupted {
        out.line(&format!(
            "interrupted call {} · session {} · {} · cut off while it ran (Skald stopped, or could not save its result)",
            call.tool_call_id,
            call.session_id,
            one_line(&call.label)
        ));
        out.line(&format!(
            "  check its effects, then: skald api reconcile_call '{{\"tool_call_id\": {}, \
             \"choice\": \"ran\"}}' (or \"did_not_run\", \"run_again\")",
            call.tool_call_id
        ));
    }
    for q in &inbox.questions {
        out.line(&format!(
            "question {} · session {} ({}) · agent {} · waiting {}",
            q.tool_call_id,
            q.session_id,
            q.source,
            q.agent_id,
            age(q.age_secs)
        ));
        let (title, details) = show::question(&q.title, &q.question, &q.suggested_answers);
        out.line(&format!("  {title}"));
        for line in details {
            out.line(&format!("    {line}"));
        }
    }
    if inbox.items.is_empty() && inbox.questions.is_empty() {
        if interrupted.is_empty() {
            out.line("Nothing is waiting for a decision.");
        }
        return Ok(exit::OK);
    }
    for item in &inbox.items {
        out.line(&format!(
            "call {} · session {} ({}) · agent {} · waiting {}",
            item.tool_call_id,
            item.session_id,
            item.source,
            item.agent_id,
            age(item.age_secs)
        ));
        // All of it: what the person approves is what runs.
        let review = show::inbox_item(item);
        out.line(&format!("  {}", review.what));
        for line in &review.details {
            out.line(&format!("    {line}"));
        }
    }
    out.line(&format!(
        "{} waiting · skald approve CALL | skald deny CALL --note \"why\" | skald answer ID TEXT",
        inbox.total
    ));
    Ok(exit::OK)
}

/// The bypass `--bypass DURATION [--bypass-scope SCOPE]` asks for (clap allows only the listed
/// values; no scope asks the engine for the narrowest that fits the call).
pub fn bypass_request(duration: Option<&str>, scope: Option<&str>) -> Option<BypassRequest> {
    let duration = match duration? {
        "15m" => BypassDuration::FifteenMinutes,
        "1h" => BypassDuration::OneHour,
        _ => BypassDuration::Session,
    };
    let scope = scope.map(|s| match s {
        "all" => BypassScopeKind::All,
        "mcp_server" => BypassScopeKind::McpServer,
        _ => BypassScopeKind::Category,
    });
    Some(BypassRequest { duration, scope })
}

pub async fn answer(engine: &Engine, id: i64, text: &str, out: &Output) -> Result<u8, ApiError> {
    let params = AnswerQuestionParams { tool_call_id: id, answer: text.to_string() };
    let a = ops::answer_question(engine, &Caller::Cli, params).await?;
    if out.is_json() {
        out.json(&a)?;
    } else if a.resumed {
        out.line(&format!("question {id} answered; the running turn continues"));
    } else {
        out.line(&format!("question {id} answered; continue with `skald resume {}`", a.session_id));
    }
    Ok(exit::OK)
}

pub async fn decide(
    engine: &Engine,
    call_id: i64,
    approved: bool,
    note: Option<String>,
    bypass: Option<BypassRequest>,
    out: &Output,
) -> Result<u8, ApiError> {
    let input = DecisionInput { approved, note, bypass };
    let params = DecideParams { tool_call_id: call_id, input };
    let decision = ops::decide(engine, &Caller::Cli, params).await?;
    if out.is_json() {
        out.json(&decision)?;
    } else {
        let verb = if decision.approved { "approved" } else { "rejected" };
        let next = if decision.resumed {
            "the running turn continues".to_string()
        } else {
            format!("continue with `skald resume {}`", decision.session_id)
        };
        out.line(&format!("call {call_id} {verb}; {next}"));
        if let Some(b) = &decision.bypass {
            out.line(&format!("  {}", super::bypasses::describe(b)));
        }
    }
    Ok(exit::OK)
}

fn age(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s => format!("{}h{}m", s / 3600, (s % 3600) / 60),
    }
}
