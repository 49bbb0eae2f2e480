//! What the model is told about each tool call: its result by status, the texts the loop stores
//! when it settles a call itself, and the answers replay gives calls that never settled.
//!
//! Each text says one thing once: stored texts carry no `Error:` label (the `failed` status adds
//! it when the call is replayed), and a call that may have had effects says so.

use skald_protocol::ToolStatus;
use skald_store::repo::tools::{Awaits, ToolCallRow};

use crate::approval::rejection_message;

/// Stored as the result of a `failed` call that resume found still `running`: the process that ran
/// it ended before saving its result. Replayed (and shown) with the `Error:` label.
pub const INTERRUPTED_RUNNING: &str = "the run stopped before this call's result was saved. It \
     may have run partly or completely: check its effects before running it again.";
/// Stored as the result of a call the user's stop cancelled while it ran.
pub const CANCELLED_RUNNING: &str = "Cancelled: the user stopped the turn while this call was \
     running. It may have run partly: check its effects before running it again.";
/// Stored as the result of a call the user's stop cancelled while it waited for approval.
pub const CANCELLED_AWAITING_APPROVAL: &str =
    "Not run: the user stopped the turn while this call was waiting for their approval.";
/// Stored as the result of a question the user's stop cancelled before it was answered.
pub const CANCELLED_AWAITING_ANSWER: &str =
    "Not answered: the user stopped the turn while this question was waiting for their reply.";
/// Stored as the result of a sub-agent call whose child the user's stop ended.
pub const CANCELLED_SUBAGENT: &str = "Cancelled: the user stopped the turn while this sub-agent \
     was working. It may have done part of its task: check before delegating it again.";
/// Stored as the result of a call of the same reply that the user's stop reached first.
pub const CANCELLED_UNSTARTED: &str =
    "Not run: the user stopped the turn before this call started.";

/// Replay's answer for a call still waiting for a human decision (the turn that asked parked).
pub const AWAITING_APPROVAL: &str = "Not run yet: this call is waiting for the user's approval. \
     Its result will replace this note once they decide; do not call it again.";
/// Replay's answer for a question the user has not answered yet.
pub const AWAITING_ANSWER: &str = "No answer yet: the user has not replied to this question. \
     Their answer will replace this note; do not ask it again.";
/// Replay's answer for a call the run never started (it stopped first, e.g. a crash mid-reply).
pub const NEVER_STARTED: &str =
    "Not run: the run stopped before this call started. Call it again if you still need it.";

/// The label of a failed call's result, added once at replay.
const ERROR_LABEL: &str = "Error: ";

/// LLM-visible content of a call, by its status.
pub fn tool_content(call: ToolCallRow) -> String {
    let status = call.status();
    let result = call.result.unwrap_or_default();
    match status {
        Ok(ToolStatus::Done) => result,
        Ok(ToolStatus::Failed) => error_content(&result),
        Ok(ToolStatus::Rejected) if result.is_empty() => rejection_message(None),
        Ok(ToolStatus::Cancelled) if result.is_empty() => "Cancelled: the turn was stopped.".into(),
        Ok(ToolStatus::Rejected | ToolStatus::Cancelled) => result,
        Ok(ToolStatus::Pending) => match call.awaits {
            Some(Awaits::Approval) => AWAITING_APPROVAL.to_string(),
            Some(Awaits::Answer) => AWAITING_ANSWER.to_string(),
            None => NEVER_STARTED.to_string(),
        },
        // Left running by a process that ended: told exactly as resume will record it.
        Ok(ToolStatus::Running) | Err(_) => error_content(INTERRUPTED_RUNNING),
    }
}

/// `Error: <text>`, said once: results stored by earlier versions carry the label already.
fn error_content(text: &str) -> String {
    let text = text.strip_prefix(ERROR_LABEL).unwrap_or(text);
    format!("{ERROR_LABEL}{text}")
}

/// The placeholder an oversized earlier result is replaced by (the stored row never changes).
pub fn hidden_placeholder(tool_name: &str, len: usize, limit: usize) -> String {
    format!(
        "[Tool response for `{tool_name}` hidden: response was {len} chars, exceeding the \
         {limit}-char limit. Call the tool again if you need this information.]"
    )
}
