//! Calls cut off while they ran (decision 3): flagging one when resume answers it with the
//! interrupted result, its wire shape, and the note that tells the model what the user confirmed.

use skald_protocol::{Event, InterruptedCall, ReconcileChoice, ToolStatus};
use skald_store::Store;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::interrupted::InterruptedCallRow;
use skald_store::repo::tools::ToolCallRow;

use crate::context::call_results::INTERRUPTED_RUNNING;
use crate::error::EngineError;
use crate::tools::ToolRegistry;
use crate::turn::TurnEmitter;

/// Answers a call a dead process left `running` with the interrupted result and flags it for the
/// user, in one transaction; tells every client.
pub async fn flag(
    store: &Store,
    tools: &ToolRegistry,
    emitter: &TurnEmitter,
    session_id: i64,
    row: &ToolCallRow,
) -> Result<(), EngineError> {
    store.fail_interrupted_call(row.id, session_id, INTERRUPTED_RUNNING).await?;
    emitter.emit(Event::ToolError {
        tool_call_id: row.id,
        error: INTERRUPTED_RUNNING.to_string(),
        media: Default::default(),
    });
    if let Some(flagged) = store.interrupted_call(row.id).await? {
        emitter.emit(Event::InterruptedCall { call: to_wire(flagged, tools)? });
    }
    Ok(())
}

/// The stored flag as the wire shows it, labelled as the call was live.
pub fn to_wire(
    row: InterruptedCallRow,
    tools: &ToolRegistry,
) -> Result<InterruptedCall, EngineError> {
    let args = row
        .arguments
        .as_deref()
        .and_then(|a| serde_json::from_str::<serde_json::Value>(a).ok())
        .unwrap_or(serde_json::Value::Null);
    let label = match tools.get(&row.tool_name) {
        Some(t) => t.describe(&args, true),
        None => crate::tools::interface_label(&row.tool_name, &args, true)
            .unwrap_or_else(|| row.tool_name.clone()),
    };
    let corrupt = |what: &str, v: &str| {
        EngineError::Internal(format!(
            "interrupted call {}: unknown {what} `{v}`",
            row.tool_call_id
        ))
    };
    let choice = row
        .choice
        .as_deref()
        .map(|c| ReconcileChoice::parse(c).ok_or_else(|| corrupt("choice", c)))
        .transpose()?;
    let rerun_status = row
        .rerun_status
        .as_deref()
        .map(|s| ToolStatus::parse(s).ok_or_else(|| corrupt("re-run status", s)))
        .transpose()?;
    Ok(InterruptedCall {
        tool_call_id: row.tool_call_id,
        session_id: row.session_id,
        tool_name: row.tool_name,
        label,
        flagged_at: row.flagged_at,
        choice,
        decided_by: row.decided_by,
        decided_at: row.decided_at,
        rerun_status,
        rerun_result: row.rerun_result,
    })
}

/// What the model is told once the user reconciled `call`: for `run_again`, with the re-run's
/// outcome.
pub fn note_text(call: &InterruptedCall, rerun: Option<(ToolStatus, &str)>) -> String {
    // Said for both causes: Skald stopped (a crash, a kill, a restart), or it could not store
    // the result (a full disk, a read-only database) and the turn ended there.
    let what = format!(
        "[Note from the system] The call `{}` (id call_{}) was cut off before its result was \
         saved (Skald stopped, or could not write the result)",
        call.label, call.tool_call_id
    );
    match (call.choice, rerun) {
        (Some(ReconcileChoice::Ran), _) => format!(
            "{what}. The user checked: it did run, so its effects are in place. Do not run it \
             again."
        ),
        (Some(ReconcileChoice::DidNotRun), _) => format!(
            "{what}. The user checked: it did not run and had no effect. Run it again only if it \
             is still needed."
        ),
        (_, Some((ToolStatus::Done, result))) => {
            format!("{what}. The user had it run again; it completed. Its result:\n{result}")
        }
        (_, Some((ToolStatus::Rejected, reason))) => {
            format!("{what}. The user asked to run it again, but it was refused: {reason}")
        }
        (_, Some((_, error))) => {
            format!("{what}. The user had it run again; it failed: {error}")
        }
        (_, None) => format!("{what}. The user has not said yet whether it ran."),
    }
}

/// Appends the note to the call's frame as a synthetic user row: the model reads it at its next
/// round (the chat hides it; the debug tree shows it marked synthetic).
pub async fn append_note(
    store: &Store,
    stack_id: i64,
    tool_call_id: i64,
    text: &str,
) -> Result<i64, EngineError> {
    let message_id = store
        .append_message(&NewMessage {
            stack_id,
            role: Some(Role::User),
            content: text.to_string(),
            is_synthetic: true,
            ..Default::default()
        })
        .await?;
    store.set_reconcile_note(tool_call_id, message_id).await?;
    Ok(message_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(choice: Option<ReconcileChoice>) -> InterruptedCall {
        InterruptedCall {
            tool_call_id: 7,
            session_id: 1,
            tool_name: "execute_cmd".into(),
            label: "execute_cmd make install".into(),
            flagged_at: String::new(),
            choice,
            decided_by: None,
            decided_at: None,
            rerun_status: None,
            rerun_result: None,
        }
    }

    /// A call cut off by a full disk was not cut off by a restart: the note claims neither cause
    /// alone.
    #[test]
    fn the_note_is_true_for_a_restart_and_for_a_failed_write() {
        let note = note_text(&call(Some(ReconcileChoice::Ran)), None);
        assert_eq!(
            note,
            "[Note from the system] The call `execute_cmd make install` (id call_7) was cut off \
             before its result was saved (Skald stopped, or could not write the result). The \
             user checked: it did run, so its effects are in place. Do not run it again."
        );
        assert!(!note_text(&call(None), None).contains("restart"));
    }
}
