//! Runs a tool's filesystem work off the async threads, answering a stop at once.

use tokio_util::sync::CancellationToken;

use super::{ToolError, ToolOutput};

/// `job` on the blocking pool; `Err(Cancelled)` as soon as `cancel` fires (a job that checks the
/// same token stops soon after; one that does not finishes unobserved). `what` names the work
/// in the error if the thread itself fails.
pub(crate) async fn run_blocking(
    cancel: &CancellationToken,
    what: &str,
    job: impl FnOnce() -> Result<String, ToolError> + Send + 'static,
) -> Result<ToolOutput, ToolError> {
    let job = tokio::task::spawn_blocking(job);
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ToolError::Cancelled),
        done = job => done
            .map_err(|e| ToolError::Failed(format!("the {what} task failed: {e}")))?
            .map(ToolOutput::text),
    }
}
