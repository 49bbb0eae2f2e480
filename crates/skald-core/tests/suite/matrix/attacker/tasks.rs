//! Rows of "A model that tries" measured by the engine: tasks.

use skald_protocol::{Event, TaskState, ToolStatus};
use skald_testkit::matrix::{Row, excerpt};

use crate::suite::async_tasks::flood;

/// The default `llm.max_async_tasks_per_reply`.
const PER_REPLY: usize = 4;

/// One reply asks for 40 background tasks: the first four start, the other 36 calls fail with a
/// message that names the limit; only the started tasks ever ask the model.
#[tokio::test(flavor = "multi_thread")]
async fn one_reply_that_starts_forty_async_tasks() {
    let f = flood(40).await;
    let count = |status: ToolStatus| f.calls.iter().filter(move |c| c.status().unwrap() == status);
    let (done, failed) = (count(ToolStatus::Done).count(), count(ToolStatus::Failed).count());
    let refusal = count(ToolStatus::Failed).next().and_then(|c| c.result.clone());
    let refusal = refusal.unwrap_or_default();
    let cards = f
        .events
        .iter()
        .filter(|e| matches!(e, Event::TaskUpdate { state: TaskState::Queued, .. }))
        .count();
    let errors = f.events.iter().filter(|e| matches!(e, Event::ToolError { .. })).count();
    let answered = f.events.iter().any(|e| matches!(e, Event::Done { .. }));
    let started = f.told.iter().filter(|t| t.contains("started in the background")).count();
    let refused = f.told.iter().filter(|t| t.contains("Refused:")).count();
    let reported = f.tasks.iter().filter(|t| t.delivered_message_id.is_some()).count();
    let requests = f.rig.fake.requests().len();
    // The reply and its answer, one request per started task, at most one per report.
    let bound = 2 + 2 * PER_REPLY;
    let mut row = Row::new("attacker.task-flood");
    row.user_sees(format!(
        "{} calls announced, {cards} task cards, {errors} calls failing with {}; the turn \
         ends with an answer: {answered}",
        f.calls.len(),
        excerpt(&refusal, 110)
    ))
    .model_sees(format!(
        "{started} results \"Task … started in the background\" and {refused} tool errors \
         {}; at most {bound} model requests in all",
        excerpt(&refusal, 60)
    ))
    .stored(format!(
        "{} async tasks, {reported} of them reported once; {done} calls done, {failed} failed",
        f.tasks.len()
    ))
    .unapproved_if(f.tasks.len() > PER_REPLY, "tasks past llm.max_async_tasks_per_reply")
    .unapproved_if(requests > bound, "model requests past the limit's bound")
    .lost_if(reported != f.tasks.len(), "a started task's report")
    .clear_error(&refusal, &["llm.max_async_tasks_per_reply", "at most 4", "wait for the reports"])
    .finish();
}
