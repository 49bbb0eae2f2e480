//! The shared shape of the write tools: plan the new content, then write it atomically.

use std::path::{Path, PathBuf};

use skald_protocol::FileDiff;

use super::{FileChange, ToolContext, ToolError, ToolOutput, atomic};
use crate::approval::diff;

/// What a write tool will do, computed without touching the file. `predict_write` returns it
/// for the approval diff; `run` recomputes it (the file may have changed meanwhile) and writes.
pub(crate) struct WritePlan {
    pub path: PathBuf,
    pub old: Option<String>,
    pub new: String,
    /// The result sentence for the model.
    pub summary: String,
}

pub(crate) type PlanFn = fn(&serde_json::Value, &Path) -> Result<WritePlan, ToolError>;

pub(crate) fn predict(
    plan: PlanFn,
    args: &serde_json::Value,
    ctx: &ToolContext,
) -> Option<Result<(Option<String>, String), ToolError>> {
    Some(plan(args, &ctx.workdir).map(|p| (p.old, p.new)))
}

/// Plans and writes on the blocking pool. Cancellation is honoured only before the write
/// starts: a write is short, and reporting "cancelled" for a file that did change would lie.
/// A write a human approved is re-planned against the file as it is now and goes ahead only if
/// its diff is still the one they approved.
pub(crate) async fn run(
    plan: PlanFn,
    args: &serde_json::Value,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let args = args.clone();
    let workdir = ctx.workdir.clone();
    let approved = ctx.approved_diff.clone();
    let expected = ctx.expected_target.clone();
    let job = tokio::task::spawn_blocking(move || {
        let plan = plan(&args, &workdir)?;
        // Checked again here, next to the write: the path may have moved since the loop did.
        if let Some(e) = super::paths::moved_since_cleared(expected.as_deref(), Some(&plan.path)) {
            return Err(e);
        }
        if let Some(approved) = &approved {
            still_as_approved(&plan, approved)?;
        }
        atomic::write_atomic(&plan.path, plan.new.as_bytes())?;
        let change = FileChange { path: plan.path, old: plan.old, new: plan.new };
        Ok(ToolOutput { change: Some(change), ..ToolOutput::text(plan.summary) })
    });
    job.await.map_err(|e| ToolError::Failed(format!("the write task failed: {e}")))?
}

/// Refuses a write whose file changed (or vanished) after a human approved its diff: the
/// approval was for a change to the content they saw, and writing now would either undo what
/// changed since or make a change nobody reviewed. (For binary and very large files the diff
/// records only their sizes, so only a change of size is caught there.)
fn still_as_approved(plan: &WritePlan, approved: &FileDiff) -> Result<(), ToolError> {
    let now = diff::file_diff(
        &approved.path,
        plan.old.as_deref().map(str::as_bytes),
        Some(plan.new.as_bytes()),
    );
    if now == *approved {
        return Ok(());
    }
    let what = if plan.old.is_none() { "was deleted" } else { "changed" };
    Err(ToolError::Failed(format!(
        "{} {what} after this write was approved, so the approved diff no longer describes it \
         and nothing was written. Read the file again and propose the change anew.",
        plan.path.display()
    )))
}
