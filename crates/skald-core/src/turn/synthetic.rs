//! Tools the loop runs itself because they touch the session: scratchpad, todos, questions
//! (delegation is `subagent`).

use serde_json::{Value, json};
use skald_store::repo::notifications::{MAX_SUMMARY_CHARS, NewNotification};
use skald_store::repo::scratchpad::Todo;

use super::TurnCtx;
use super::tool_set::OfferedTool;
use crate::tools::names::{SessionTool, ToolName};
use crate::tools::{ToolError, ToolOutput};

/// A tool the loop runs, offered as `description` with `parameters`.
pub fn function(name: ToolName, description: &str, parameters: Value) -> OfferedTool {
    let def = json!({
        "type": "function",
        "function": { "name": name.wire(), "description": description, "parameters": parameters },
    });
    OfferedTool::interface(name, def)
}

/// The session's tools: scratchpad and todos always, the question where someone can answer.
pub fn tools(ctx: &TurnCtx) -> Vec<OfferedTool> {
    let mut defs = vec![
        function(
            ToolName::Session(SessionTool::Scratchpad),
            "Save a short note on the session scratchpad, shared with every agent of this session \
             (an empty value deletes the note).",
            json!({
                "type": "object",
                "properties": {
                    "key": { "type": "string", "description": "Short identifier of the note." },
                    "value": { "type": "string", "description": "The note; empty to delete." }
                },
                "required": ["key", "value"],
                "additionalProperties": false
            }),
        ),
        function(
            ToolName::Session(SessionTool::Todos),
            "Replace your todo list for this task. Send the whole list every time; keep at most \
             one item in_progress.",
            json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": { "type": "string" },
                                "status": { "type": "string", "enum": ["pending", "in_progress", "completed"] }
                            },
                            "required": ["content", "status"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["todos"],
                "additionalProperties": false
            }),
        ),
    ];
    if !ctx.policy.interactive {
        defs.push(function(
            ToolName::Session(SessionTool::Notify),
            "Tell the user something that matters to them: it reaches their home chat in the \
             next briefing (batched with other background reports). One neutral, factual \
             sentence or two; only what they would want to know, never routine noise.",
            json!({
                "type": "object",
                "properties": {
                    "summary": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_SUMMARY_CHARS,
                        "description": "The fact, in a sentence or two."
                    }
                },
                "required": ["summary"],
                "additionalProperties": false
            }),
        ));
    }
    if ctx.questions_available() {
        defs.push(function(
            ToolName::Session(SessionTool::Question),
            "Ask the user a question when you cannot proceed without their input (a choice \
             between options, a missing fact). The turn waits for the answer. Do not ask for \
             things you can find out with your tools.",
            json!({
                "type": "object",
                "properties": {
                    "title": { "type": "string", "description": "A few words: what you need." },
                    "question": { "type": "string", "description": "The question (Markdown)." },
                    "suggested_answers": {
                        "type": "array",
                        "items": { "type": "string" },
                        "description": "Likely answers the user can pick with one click."
                    }
                },
                "required": ["title", "question"],
                "additionalProperties": false
            }),
        ));
    }
    defs
}

/// Runs a session tool (the question is asked and answered by the call flow, never run).
pub async fn run(ctx: &TurnCtx, tool: SessionTool, args: &Value) -> Result<ToolOutput, ToolError> {
    let storage = |e: skald_store::StoreError| ToolError::Failed(format!("storage error: {e}"));
    match tool {
        SessionTool::Scratchpad => {
            let key = str_arg(args, "key")?;
            let value = str_arg(args, "value")?;
            if key.trim().is_empty() {
                return Err(ToolError::InvalidArguments("`key` must not be empty".into()));
            }
            ctx.deps
                .store
                .set_scratchpad(ctx.policy.scratchpad_session_id, key, value)
                .await
                .map_err(storage)?;
            Ok(ToolOutput::text(if value.is_empty() {
                format!("Removed note `{key}`.")
            } else {
                format!("Saved note `{key}`.")
            }))
        }
        SessionTool::Todos => {
            let todos: Vec<Todo> = serde_json::from_value(
                args.get("todos").cloned().unwrap_or(Value::Null),
            )
            .map_err(|e| {
                ToolError::InvalidArguments(format!(
                    "`todos` must be a list of {{content, status}}: {e}"
                ))
            })?;
            if let Some(bad) = todos
                .iter()
                .find(|t| !matches!(t.status.as_str(), "pending" | "in_progress" | "completed"))
            {
                return Err(ToolError::InvalidArguments(format!(
                    "status `{}` is not one of pending, in_progress, completed",
                    bad.status
                )));
            }
            if todos.iter().filter(|t| t.status == "in_progress").count() > 1 {
                return Err(ToolError::InvalidArguments(
                    "keep at most one item in_progress".into(),
                ));
            }
            ctx.deps.store.replace_todos(ctx.frame.stack_id, &todos).await.map_err(storage)?;
            let done = todos.iter().filter(|t| t.status == "completed").count();
            Ok(ToolOutput::text(format!("Todo list updated: {done} of {} done.", todos.len())))
        }
        SessionTool::Notify => {
            let summary = str_arg(args, "summary")?.trim();
            if summary.is_empty() {
                return Err(ToolError::InvalidArguments("`summary` must not be empty".into()));
            }
            let origin = match ctx.policy.source.as_str() {
                "tic" => "tic",
                "cron" => "job",
                _ => "agent",
            };
            let fact = NewNotification {
                origin: origin.into(),
                event_type: "notify".into(),
                summary: summary.to_string(),
                session_id: Some(ctx.policy.session_id),
                job_run_id: None,
            };
            let id = ctx.deps.store.insert_notification(&fact).await.map_err(storage)?;
            Ok(ToolOutput::text(format!(
                "Noted (notification {id}): the user reads it in their next briefing."
            )))
        }
        SessionTool::Question => {
            Err(ToolError::Failed("a question is asked, not run: call it again".into()))
        }
    }
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArguments(format!("`{key}` is required (string)")))
}
