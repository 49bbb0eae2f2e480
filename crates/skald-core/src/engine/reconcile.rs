//! The user's word on calls a crash cut off while they ran (decision 3): "it ran", "it did not
//! run" or "run it again". The call keeps its one interrupted result (the provider history stays
//! valid); what the user confirmed reaches the model as a note row at its next round.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use skald_protocol::{
    Event, EventEnvelope, FileDiff, InterruptedCall, ReconcileChoice, ToolStatus,
};
use skald_store::repo::interrupted::InterruptedCallRow;
use skald_store::repo::sessions::SessionRow;
use tokio_util::sync::CancellationToken;

use super::Engine;
use crate::approval::Verdict;
use crate::approval::gate::{GateInput, load_rules, verdict};
use crate::context::call_results::CANCELLED_RUNNING;
use crate::error::EngineError;
use crate::session::interrupted::{append_note, note_text, to_wire};
use crate::tools::{Tool, ToolContext, ToolError, parse_args};

/// A re-run the gate let through, ready to start.
struct Rerun {
    tool: Arc<dyn Tool>,
    args: Value,
    ctx: ToolContext,
}

impl Engine {
    /// The session's calls that were cut off while they ran and not re-run by themselves, with
    /// what the user said about each so far, oldest first.
    pub async fn interrupted_calls(
        &self,
        session_id: i64,
    ) -> Result<Vec<InterruptedCall>, EngineError> {
        self.store().session(session_id).await?;
        let rows = self.store().interrupted_calls(session_id).await?;
        rows.into_iter().map(|r| to_wire(r, &self.inner.tools)).collect()
    }

    /// Interrupted calls of every session still waiting for the user's word, oldest first (what
    /// the Agent Inbox lists beside approvals and questions).
    pub async fn open_interrupted_calls(&self) -> Result<Vec<InterruptedCall>, EngineError> {
        let rows = self.store().unreconciled_interrupted_calls().await?;
        rows.into_iter().map(|r| to_wire(r, &self.inner.tools)).collect()
    }

    /// Records what the user says about an interrupted call, once (a repeat of the same choice
    /// is a no-op, another choice is refused). `run_again` runs the call now through the approval
    /// rules: a rule that denies it refuses the re-run and records nothing; otherwise the user's
    /// choice is the human decision. The model is told at its next round.
    pub async fn reconcile_call(
        &self,
        tool_call_id: i64,
        choice: ReconcileChoice,
        decided_by: &str,
    ) -> Result<InterruptedCall, EngineError> {
        let store = self.store();
        let row = self.flagged(tool_call_id).await?;
        if let Some(done) = self.already_reconciled(&row, choice)? {
            return Ok(done);
        }
        let session = store.session(row.session_id).await?;
        let rerun = match choice {
            ReconcileChoice::RunAgain => Some(self.gate_rerun(&row, &session).await?),
            ReconcileChoice::Ran | ReconcileChoice::DidNotRun => None,
        };
        if !store.reconcile_interrupted_call(tool_call_id, choice.as_str(), decided_by).await? {
            // Another surface answered first.
            let row = self.flagged(tool_call_id).await?;
            return self.already_reconciled(&row, choice)?.ok_or_else(|| {
                EngineError::Internal(format!("call {tool_call_id} lost its reconciliation"))
            });
        }
        let outcome = match rerun {
            Some(r) => {
                let outcome = run(r).await;
                store.record_rerun(tool_call_id, outcome.0.as_str(), &outcome.1).await?;
                Some(outcome)
            }
            None => None,
        };
        let call = to_wire(self.flagged(tool_call_id).await?, &self.inner.tools)?;
        let note = note_text(&call, outcome.as_ref().map(|(s, t)| (*s, t.as_str())));
        append_note(store, row.stack_id, tool_call_id, &note).await?;
        let frame = crate::session::origin::of_frame(store, row.stack_id).await?;
        let event = Event::InterruptedCall { call: call.clone() };
        self.emit(EventEnvelope::framed(row.session_id, &session.source, frame, event));
        Ok(call)
    }

    async fn flagged(&self, tool_call_id: i64) -> Result<InterruptedCallRow, EngineError> {
        self.store().interrupted_call(tool_call_id).await?.ok_or_else(|| {
            EngineError::NotFound(format!(
                "tool call {tool_call_id} is not an interrupted call waiting to be reconciled"
            ))
        })
    }

    /// `Some` when the call was reconciled before with the same choice (the repeat is a no-op);
    /// an error when with another.
    fn already_reconciled(
        &self,
        row: &InterruptedCallRow,
        choice: ReconcileChoice,
    ) -> Result<Option<InterruptedCall>, EngineError> {
        match row.choice.as_deref() {
            None => Ok(None),
            Some(c) if c == choice.as_str() => Ok(Some(to_wire(row.clone(), &self.inner.tools)?)),
            Some(c) => Err(EngineError::Conflict(format!(
                "tool call {} was already reconciled ({})",
                row.tool_call_id,
                c.replace('_', " ")
            ))),
        }
    }

    /// Checks the call against the session's approval rules now, as the gate would: a Deny is
    /// final; a Require is answered by the user's own "run it again".
    async fn gate_rerun(
        &self,
        row: &InterruptedCallRow,
        session: &SessionRow,
    ) -> Result<Rerun, EngineError> {
        let name = row.tool_name.as_str();
        let tool = self.inner.tools.get(name).ok_or_else(|| {
            EngineError::InvalidInput(format!(
                "`{name}` cannot be run again from here; say whether it ran instead"
            ))
        })?;
        let args = parse_args(row.arguments.as_deref().unwrap_or_default()).map_err(|e| {
            EngineError::InvalidInput(format!("the call's arguments cannot be used again: {e}"))
        })?;
        let run_context = self.run_context(session.id).await?;
        let cwd = crate::launch_env::launch_dir().unwrap_or_else(|| self.data_dir().to_path_buf());
        let workdir = run_context.effective_workdir(&cwd);
        let rules = load_rules(self.store(), run_context.security_group.as_deref()).await;
        let target = tool.target_path(&args, &workdir);
        let input = GateInput {
            session_id: session.id,
            tool: name,
            category: self.inner.tools.category_of(name),
            read_only: tool.def().read_only,
            target: target.as_deref(),
            args: &args,
            agent_id: &session.agent_id,
            source: &session.source,
            workdir: &workdir,
            data_dir: self.data_dir(),
            home: self.home_dir(),
            run_context: &run_context,
        };
        if let Verdict::Deny(reason) = verdict(self.store(), &rules, &input).await {
            return Err(EngineError::InvalidInput(format!(
                "the approval rules deny running `{name}` again: {reason}"
            )));
        }
        // A write goes ahead only while it still makes the change a human approved, so a write
        // that did land before the crash is not applied twice.
        // And only at the path it was approved for: a link planted since would move it.
        let request = self.store().approval_request(row.tool_call_id).await?;
        let approved_target = request.as_ref().and_then(|r| r.path.as_deref()).map(PathBuf::from);
        let approved_diff =
            request.and_then(|r| r.diff).and_then(|d| serde_json::from_str::<FileDiff>(&d).ok());
        let ctx = ToolContext::new(workdir, CancellationToken::new())
            .with_approved_diff(approved_diff)
            .with_expected_target(approved_target)
            .for_call(row.tool_call_id);
        Ok(Rerun { tool, args, ctx })
    }
}

/// Runs the call; how it ended and the text the model is told.
async fn run(r: Rerun) -> (ToolStatus, String) {
    match r.tool.run(&r.args, &r.ctx).await {
        Ok(out) => (ToolStatus::Done, out.text),
        Err(ToolError::Cancelled) => (ToolStatus::Cancelled, CANCELLED_RUNNING.to_string()),
        Err(e) => (ToolStatus::Failed, e.to_string()),
    }
}
