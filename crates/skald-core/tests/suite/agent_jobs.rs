//! Agents schedule jobs (`execute_task` mode `cron`) against the strict fake provider on a real
//! data dir: the call is checked before anyone is asked (a bad schedule gets the parser's words
//! and no approval), it always waits for a person even under `--approve-all`, the Inbox shows
//! the job (schedule in words, next runs, whole prompt), an approval creates exactly that job and
//! the result names it, a denial creates nothing and gives the model the person's note.

use serde_json::{Value, json};
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{DebugMessage, DecisionInput, JobSchedule, ToolStatus};
use skald_testkit::{Reply, ScriptedToolCall};

use super::subagents::task_agent;
use super::turn::Rig;

const PROMPT: &str = "DIGEST: summarise the news\nand list three headlines";
const WORDS: &str = "every weekday at 09:00, Europe/Berlin";

async fn rig() -> Rig {
    let rig = Rig::new("").await;
    task_agent(&rig, "scout");
    rig
}

fn cron_call(schedule: Value) -> ScriptedToolCall {
    let args = json!({
        "mode": "cron",
        "agent_id": "scout",
        "title": "Morning digest",
        "prompt": PROMPT,
        "schedule": schedule,
        "timezone": "Europe/Berlin",
    });
    ScriptedToolCall::new("execute_task", &args.to_string())
}

fn weekdays() -> Value {
    json!({ "kind": "cron", "expr": "0 0 9 * * 1-5 *" })
}

/// A turn under `--approve-all` whose model makes `call` (then answers `after`, if the turn goes
/// on); it ends parked on a person or answered.
async fn turn(rig: &Rig, call: ScriptedToolCall, after: Option<&str>) -> (i64, TurnOutcome) {
    rig.fake.push(Reply::tool_calls(vec![call]));
    if let Some(text) = after {
        rig.fake.push(Reply::text(text));
    }
    let opts = ChatOptions { park_mode: ParkMode::Exit, ..rig.opts() };
    assert!(opts.approve_all);
    let receipt = rig.engine.send_message("test", "send me a digest", opts).await.unwrap();
    let outcome = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    (receipt.session_id, outcome)
}

/// The session's last call, its status and result as stored.
async fn call_result(rig: &Rig, sid: i64) -> (i64, ToolStatus, String) {
    let detail = rig.engine.session_detail(sid).await.unwrap();
    detail
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            DebugMessage::Tool { tool_call_id, status, result, .. } => {
                Some((*tool_call_id, *status, result.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .expect("no tool call")
}

/// The modes of `execute_task` in the first request.
fn offered_modes(rig: &Rig) -> Value {
    let first = rig.fake.requests().remove(0);
    let tools = first.body["tools"].as_array().unwrap().clone();
    let def = tools.into_iter().find(|t| t["function"]["name"] == "execute_task").unwrap();
    def["function"]["parameters"]["properties"]["mode"]["enum"].clone()
}

/// A cron call parks (the session's "all tools" bypass notwithstanding) with the job in the
/// Inbox; returns the session and the call.
async fn parked_cron_call(rig: &Rig) -> (i64, i64) {
    let (sid, outcome) = turn(rig, cron_call(weekdays()), None).await;
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("not parked: {outcome:?}") };
    let active = rig.engine.session_bypasses(sid).await.unwrap();
    assert_eq!(active.len(), 1, "--approve-all is in force: {active:?}");
    assert!(rig.engine.list_jobs().await.unwrap().is_empty(), "no job before the approval");
    (sid, tool_call_ids[0])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cron_call_waits_for_the_person_under_approve_all_and_the_inbox_shows_the_job() {
    let rig = rig().await;
    let (_, call) = parked_cron_call(&rig).await;
    // Offered with mode `cron` in a person's chat.
    assert_eq!(offered_modes(&rig), json!(["sync", "async", "cron"]));
    let inbox = rig.engine.inbox().await.unwrap();
    assert_eq!(inbox.items.len(), 1, "{inbox:?}");
    let item = &inbox.items[0];
    assert_eq!((item.tool_call_id, item.tool_name.as_str()), (call, "execute_task"));
    assert!(
        item.summary.contains("Morning digest") && item.summary.contains(WORDS),
        "{}",
        item.summary
    );
    let args = &item.arguments;
    assert_eq!(args["schedule_in_words"], WORDS);
    assert_eq!(args["prompt"], PROMPT, "the prompt whole");
    assert_eq!(args["agent_id"], "scout");
    assert_eq!(args["timezone"], "Europe/Berlin");
    assert_eq!(args["working_directory"], rig.work.display().to_string());
    assert_eq!(args["run_context"]["working_directory"], rig.work.display().to_string());
    let next = args["next_runs"].as_array().unwrap();
    assert_eq!(next.len(), 5, "{next:?}");
    assert!(
        next.iter().all(|t| t.as_str().unwrap().ends_with("T09:00:00+02:00")
            || t.as_str().unwrap().ends_with("T09:00:00+01:00")),
        "{next:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_cron_call_creates_that_job_and_the_result_names_it() {
    let rig = rig().await;
    let (sid, call) = parked_cron_call(&rig).await;
    let approve = DecisionInput { approved: true, note: None, bypass: None };
    rig.engine.decide(call, approve, "test").await.unwrap();
    rig.fake.push(Reply::text("Scheduled."));
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let jobs = rig.engine.list_jobs().await.unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let job = &jobs[0];
    assert_eq!(
        (job.title.as_str(), job.agent_id.as_str(), job.prompt.as_str(), job.timezone.as_str()),
        ("Morning digest", "scout", PROMPT, "Europe/Berlin")
    );
    assert_eq!(job.schedule, JobSchedule::Cron { expr: "0 0 9 * * 1-5 *".into() });
    assert!(job.enabled);
    assert_eq!(job.description, WORDS);
    assert_eq!(
        job.client.as_deref(),
        Some("env"),
        "the client the agent ran on (the env-defined one)"
    );
    let workdir = job.run_context.as_ref().and_then(|r| r.working_directory.clone());
    assert_eq!(workdir, Some(rig.work.display().to_string()), "the session's working directory");
    let (_, status, result) = call_result(&rig, sid).await;
    assert_eq!(status, ToolStatus::Done);
    assert!(
        result.starts_with(&format!("Scheduled job {} \"Morning digest\"", job.id)),
        "{result}"
    );
    assert!(result.contains(WORDS) && result.contains("next run 20"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_cron_call_creates_no_job_and_gives_the_model_the_note() {
    let rig = rig().await;
    let (sid, call) = parked_cron_call(&rig).await;
    let deny = DecisionInput { approved: false, note: Some("not every day".into()), bypass: None };
    rig.engine.decide(call, deny, "test").await.unwrap();
    rig.fake.push(Reply::text("Understood."));
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert!(rig.engine.list_jobs().await.unwrap().is_empty());
    let (_, status, result) = call_result(&rig, sid).await;
    assert_eq!(status, ToolStatus::Rejected);
    assert_eq!(result, "User rejected this tool call. Reason: not every day");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_schedule_is_refused_with_the_parsers_words_and_asks_nobody() {
    let rig = rig().await;
    for (schedule, words) in [
        (json!({ "kind": "cron", "expr": "0 9 * * 1-5" }), "a cron schedule has seven fields"),
        (json!({ "kind": "every", "seconds": 10 }), "an interval must be between 60 seconds"),
        (json!({ "kind": "once", "at": "2001-01-01T09:00" }), "no fire time left"),
    ] {
        let (sid, outcome) = turn(&rig, cron_call(schedule), Some("I will fix it.")).await;
        assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
        let (call, status, result) = call_result(&rig, sid).await;
        assert_eq!(status, ToolStatus::Failed);
        assert!(result.contains(words), "{result}");
        let store = rig.store().await;
        assert!(store.approval_request(call).await.unwrap().is_none(), "no approval row");
    }
    assert!(rig.engine.inbox().await.unwrap().items.is_empty());
    assert!(rig.engine.list_jobs().await.unwrap().is_empty());
}

/// A session nobody attends as a chat (`is_interactive` false: a bot's, a script's) is not
/// offered mode `cron`, and a cron call there is refused before anyone is asked.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_that_is_not_a_persons_chat_cannot_schedule() {
    let rig = rig().await;
    let store = rig.store().await;
    let new = skald_store::repo::sessions::NewSession {
        is_interactive: false,
        run_context: Some(json!({ "working_directory": rig.work }).to_string()),
        ..skald_store::repo::sessions::NewSession::interactive("test")
    };
    let created = store.create_session(&new).await.unwrap();
    store.set_active_session("test", created.session_id).await.unwrap();
    let (sid, outcome) = turn(&rig, cron_call(weekdays()), Some("Cannot.")).await;
    assert_eq!(sid, created.session_id, "the turn ran in the session that is not a chat");
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(offered_modes(&rig), json!(["sync", "async"]));
    let (_, status, result) = call_result(&rig, sid).await;
    assert_eq!(status, ToolStatus::Failed, "{result}");
    assert!(rig.engine.inbox().await.unwrap().items.is_empty());
    assert!(rig.engine.list_jobs().await.unwrap().is_empty());
}
