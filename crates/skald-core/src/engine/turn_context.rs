//! What a turn's source gives its request's dynamic tail (a job's run says which job and which
//! occurrence), and the prompt a memory store recalls for when a turn has no new message.

use super::Engine;

/// The source of a scheduled job's runs.
const CRON_SOURCE: &str = "cron";

impl Engine {
    /// The source's per-turn text for session `session_id`'s root frame, if it has any: for a
    /// job's run, the job and the occurrence it runs for. Read each turn; a failed read leaves
    /// it out (logged), never the turn.
    pub(super) async fn source_turn_context(
        &self,
        session_id: i64,
        source: &str,
    ) -> Option<String> {
        if source != CRON_SOURCE {
            return None;
        }
        let store = self.store();
        let run = match store.run_of_session(session_id).await {
            Ok(Some(run)) => run,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(session_id, "cannot read the job's run for its context: {e}");
                return None;
            }
        };
        let job = match store.job_even_deleted(run.job_id).await {
            Ok(job) => job,
            Err(e) => {
                tracing::warn!(session_id, "cannot read the job for its run's context: {e}");
                return None;
            }
        };
        let how = if run.manual {
            "started by hand (Run now)"
        } else if run.catch_up {
            "a catch-up: that time passed while Skald was not running"
        } else {
            "on schedule"
        };
        Some(format!(
            "<job_run>\nThis session is a run of the scheduled job \"{}\" (job {}, run {}), for \
             {} — {how}. Nobody reads it live: your final answer is the run's result, \
             reported to the person.\n</job_run>",
            one_line(&job.title),
            job.id,
            run.id,
            run.scheduled_for
        ))
    }

    /// The newest prompt of frame `stack_id` (empty when it has none): what a turn on steers
    /// or a resume answers.
    pub(super) async fn latest_prompt(&self, stack_id: i64) -> String {
        match self.store().last_prompt(stack_id).await {
            Ok(prompt) => prompt.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(stack_id, "cannot read the latest prompt for memory context: {e}");
                String::new()
            }
        }
    }
}

/// A title on one line, its quotes softened: it sits inside a quoted phrase.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('"', "'")
}
