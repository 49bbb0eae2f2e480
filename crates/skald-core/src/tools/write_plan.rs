//! The shared shape of the write tools: plan the new content, then write it atomically.

use std::path::{Path, PathBuf};

use super::{FileChange, ToolContext, ToolError, ToolOutput, atomic};

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
    let job = tokio::task::spawn_blocking(move || {
        let plan = plan(&args, &workdir)?;
        atomic::write_atomic(&plan.path, plan.new.as_bytes())?;
        let change = FileChange { path: plan.path, old: plan.old, new: plan.new };
        Ok(ToolOutput { text: plan.summary, change: Some(change) })
    });
    job.await.map_err(|e| ToolError::Failed(format!("the write task failed: {e}")))?
}
