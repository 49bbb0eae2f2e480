//! A session's RunContext as stored: encoded for a new session, decoded for a run.

use std::path::Path;

use skald_protocol::RunContext;

use crate::error::EngineError;

/// The stored run context of a new session working in `workdir` (none: where Skald runs).
pub(super) fn workdir_run_context(workdir: Option<&Path>) -> Result<Option<String>, EngineError> {
    let run_context = workdir.map(|w| RunContext {
        working_directory: Some(w.display().to_string()),
        ..Default::default()
    });
    run_context.as_ref().map(encode_run_context).transpose()
}

pub(super) fn encode_run_context(rc: &RunContext) -> Result<String, EngineError> {
    serde_json::to_string(rc)
        .map_err(|e| EngineError::Internal(format!("cannot encode a run context: {e}")))
}

/// A stored run context that does not parse is the engine's fault (or a hand edit of the
/// database), never the caller's.
pub(super) fn stored_run_context(
    session_id: i64,
    json: Option<&str>,
) -> Result<RunContext, EngineError> {
    RunContext::parse(json).map_err(|e| {
        EngineError::Internal(format!(
            "the stored run context of session {session_id} is invalid: {e}"
        ))
    })
}
