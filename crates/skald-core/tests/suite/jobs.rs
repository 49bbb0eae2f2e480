//! Scheduled jobs end to end: a real SQLite file, the strict fake provider over HTTP and a
//! controllable clock. Each occurrence runs once (also across daylight-saving changes and with
//! two engines on one data dir), downtime is recorded `missed` with one catch-up run, overlap
//! is skipped, a run waiting for a person expires or is killed with nothing left in the Inbox,
//! and a run cut off by a stop continues in the next engine without running twice.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::json;
use skald_core::Engine;
use skald_protocol::{
    ErrorCode, JobInput, JobPolicies, JobRunInfo, JobRunState, JobSchedule, OnApproval, OnOverlap,
};
use skald_store::ManualClock;
use skald_testkit::{FakeLlm, Reply};

use super::auto_resume::open_at;
use super::subagents::task_agent_in;
use super::work_queue::asked;

pub(super) struct Rig {
    _dir: tempfile::TempDir,
    pub(super) data: std::path::PathBuf,
    work: std::path::PathBuf,
    pub(super) fake: FakeLlm,
    clock: Arc<ManualClock>,
}

impl Rig {
    pub(super) async fn new(start: &str) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let work = std::fs::canonicalize(dir.path()).unwrap().join("work");
        std::fs::create_dir_all(&work).unwrap();
        task_agent_in(&data, "scout");
        // A run's end is reported home, where a briefing turn would ask the model: these tests
        // script the runs only (suite::briefings turns briefings on).
        std::fs::write(data.join("config.yml"), "notifications:\n  briefings: false\n").unwrap();
        let fake = FakeLlm::start().await.unwrap();
        let clock = Arc::new(ManualClock::new(utc(start)));
        Rig { _dir: dir, data, work, fake, clock }
    }

    /// An engine on the rig's data dir and clock, running the background (the scheduler too).
    pub(super) async fn engine(&self) -> Engine {
        open_at(&self.data, &self.fake, Some(self.clock.clone()), true).await
    }

    /// The data dir's store, opened on its own.
    pub(super) async fn store(&self) -> skald_store::Store {
        skald_store::Store::open_in_dir(&self.data).await.unwrap()
    }

    pub(super) fn now(&self) -> DateTime<Utc> {
        use skald_store::Clock;
        self.clock.now()
    }

    /// Moves the clock to `to` (never back).
    pub(super) fn set(&self, to: DateTime<Utc>) {
        let by = to - self.now();
        assert!(by >= chrono::Duration::zero(), "the clock never goes back");
        self.clock.advance(by);
    }

    pub(super) fn job(
        &self,
        key: &str,
        schedule: JobSchedule,
        tz: &str,
        policies: JobPolicies,
    ) -> JobInput {
        JobInput {
            title: format!("job {key}"),
            schedule,
            timezone: Some(tz.into()),
            agent_id: "scout".into(),
            prompt: format!("{key}: look around"),
            run_context: Some(skald_protocol::RunContext {
                working_directory: Some(self.work.display().to_string()),
                ..Default::default()
            }),
            client: None,
            policies: Some(policies),
            enabled: None,
        }
    }
}

pub(super) fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

pub(super) fn cron(expr: &str) -> JobSchedule {
    JobSchedule::Cron { expr: expr.into() }
}

/// Waits (bounded) until the job's runs satisfy `done`; returns them, oldest first.
pub(super) async fn runs_until(
    engine: &Engine,
    job_id: i64,
    what: &str,
    done: impl Fn(&[JobRunInfo]) -> bool,
) -> Vec<JobRunInfo> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut runs = engine.list_job_runs(job_id, Some(1000)).await.unwrap();
        runs.reverse();
        if done(&runs) {
            return runs;
        }
        assert!(Instant::now() < deadline, "timed out waiting until {what}: {runs:#?}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

pub(super) fn states(runs: &[JobRunInfo]) -> Vec<JobRunState> {
    runs.iter().map(|r| r.state).collect()
}

pub(super) fn all_ended(runs: &[JobRunInfo]) -> bool {
    runs.iter().all(|r| !r.state.active())
}

/// A run that asks to run a command (which needs a person), then, if it goes on, answers.
pub(super) fn script_parking_run(fake: &FakeLlm, key: &str, goes_on: bool) {
    let cmd = json!({ "command": "echo hi" }).to_string();
    fake.push_for_prompt(key, Reply::tool_call("execute_cmd", &cmd));
    if goes_on {
        fake.push_for_prompt(key, Reply::text(&format!("{key} done")));
    }
}

/// Adds a job firing each minute with `policies`, whose first run asks for a command (and goes
/// on when `goes_on`), and lets its 10:01 occurrence start. Returns the job's id.
async fn start_minutely(
    rig: &Rig,
    engine: &Engine,
    key: &str,
    policies: JobPolicies,
    goes_on: bool,
) -> i64 {
    let job = engine.add_job(rig.job(key, cron("0 * * * * * *"), "UTC", policies)).await;
    let job = job.unwrap();
    script_parking_run(&rig.fake, key, goes_on);
    rig.set(utc("2026-05-04T10:01:00Z"));
    engine.schedule_tick().await.unwrap();
    job.id
}

/// Follows the job's `next_run_at` through both daylight-saving changes in Berlin: each next
/// time is the one `croner` documents (the skipped 02:30 runs at 03:00, the repeated 02:30
/// runs on its first pass), and each runs once.
async fn follow_dst(rig: &Rig, engine: &Engine, start: &str, expected: &[&str]) {
    rig.set(utc(start));
    let key = format!("DST-{}", &start[..10]);
    let job = rig.job(&key, cron("0 30 2 * * * *"), "Europe/Berlin", JobPolicies::default());
    let job = engine.add_job(job).await.unwrap();
    for (i, want) in expected.iter().enumerate() {
        let next = engine.job(job.id).await.unwrap().next_run_at.unwrap();
        assert_eq!(utc(&next), utc(want), "occurrence {i}");
        rig.fake.push_for_prompt(&key, Reply::text("ok"));
        rig.set(utc(want) + chrono::Duration::seconds(1));
        engine.schedule_tick().await.unwrap();
        runs_until(engine, job.id, "the run ends", |r| r.len() == i + 1 && all_ended(r)).await;
    }
    let runs = engine.list_job_runs(job.id, None).await.unwrap();
    assert!(runs.iter().all(|r| r.state == JobRunState::Done && !r.catch_up), "{runs:#?}");
    let mut times: Vec<DateTime<Utc>> = runs.iter().map(|r| utc(&r.scheduled_for)).collect();
    times.sort();
    assert_eq!(times, expected.iter().map(|t| utc(t)).collect::<Vec<_>>());
    assert_eq!(asked(&rig.fake, &key), expected.len(), "one request per occurrence");
    engine.delete_job(job.id, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_berlin_job_runs_once_per_day_across_both_daylight_saving_changes() {
    let rig = Rig::new("2026-03-27T12:00:00Z").await;
    let engine = rig.engine().await;
    // Spring forward on 2026-03-29: 02:30 does not exist; the run is at 03:00 CEST.
    let spring = ["2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"];
    follow_dst(&rig, &engine, "2026-03-27T12:00:00Z", &spring).await;
    // Fall back on 2026-10-25: 02:30 happens twice; the run is on the first pass only.
    let fall = ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"];
    follow_dst(&rig, &engine, "2026-10-23T12:00:00Z", &fall).await;
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn downtime_across_three_occurrences_records_three_missed_and_runs_one_catch_up() {
    let rig = Rig::new("2026-05-04T10:30:00Z").await;
    let engine = rig.engine().await;
    let job = rig.job("DOWN", cron("0 0 * * * * *"), "UTC", JobPolicies::default());
    let job = engine.add_job(job).await.unwrap();
    engine.shutdown(Duration::from_secs(5)).await;
    // Skald is closed from 10:30 to 13:40: 11:00, 12:00 and 13:00 pass.
    rig.set(utc("2026-05-04T13:40:00Z"));
    rig.fake.push_for_prompt("DOWN", Reply::text("caught up"));
    let engine = rig.engine().await;
    let mut events = engine.subscribe();
    engine.schedule_tick().await.unwrap();
    let runs =
        runs_until(&engine, job.id, "the catch-up ends", |r| r.len() == 4 && all_ended(r)).await;
    // Each state the catch-up went through was announced to every viewer.
    let mut seen = Vec::new();
    while seen.last() != Some(&JobRunState::Done) {
        let env = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
        if let skald_protocol::Event::JobRunUpdate { run } = env.unwrap().unwrap().event {
            seen.push(run.state);
        }
    }
    assert_eq!(seen, [JobRunState::Queued, JobRunState::Running, JobRunState::Done]);
    use JobRunState::{Done, Missed};
    assert_eq!(states(&runs), [Missed, Missed, Missed, Done]);
    let missed: Vec<&str> = runs[..3].iter().map(|r| r.scheduled_for.as_str()).collect();
    assert_eq!(
        missed,
        ["2026-05-04T11:00:00.000Z", "2026-05-04T12:00:00.000Z", "2026-05-04T13:00:00.000Z"]
    );
    assert!(runs[3].catch_up && runs[3].session_id.is_some());
    assert_eq!(asked(&rig.fake, "DOWN"), 1, "one catch-up run");
    let info = engine.job(job.id).await.unwrap();
    assert_eq!(info.next_run_at.as_deref(), Some("2026-05-04T14:00:00.000Z"));
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_engines_on_one_data_dir_run_every_occurrence_exactly_once() {
    const N: usize = 6;
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let (a, b) = (rig.engine().await, rig.engine().await);
    let job = rig.job("TWO", cron("0 * * * * * *"), "UTC", JobPolicies::default());
    let job = a.add_job(job).await.unwrap();
    for i in 0..N {
        rig.fake.push_for_prompt("TWO", Reply::text("ok"));
        rig.set(utc("2026-05-04T10:01:00Z") + chrono::Duration::minutes(i as i64));
        // Both tick at once, besides their own scheduler services.
        let (x, y) = tokio::join!(a.schedule_tick(), b.schedule_tick());
        x.unwrap();
        y.unwrap();
        runs_until(&a, job.id, "the run ends", |r| r.len() == i + 1 && all_ended(r)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let runs = a.list_job_runs(job.id, None).await.unwrap();
    assert_eq!(runs.len(), N, "{runs:#?}");
    assert!(runs.iter().all(|r| r.state == JobRunState::Done), "{runs:#?}");
    assert_eq!(asked(&rig.fake, "TWO"), N, "each occurrence asked the model once");
    a.shutdown(Duration::from_secs(5)).await;
    b.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_occurrence_due_while_the_previous_run_waits_for_a_person_is_skipped() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let job = rig.job("OVER", cron("0 * * * * * *"), "UTC", JobPolicies::default());
    let job = engine.add_job(job).await.unwrap();
    script_parking_run(&rig.fake, "OVER", true);
    rig.set(utc("2026-05-04T10:01:00Z"));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, job.id, "the run waits", |r| {
        r.first().is_some_and(|r| r.state == JobRunState::Waiting)
    })
    .await;
    let waiting = runs[0].clone();
    // The waiting run holds no lease: the next occurrence is claimed, and skipped.
    rig.set(utc("2026-05-04T10:02:00Z"));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, job.id, "the second is skipped", |r| r.len() == 2).await;
    assert_eq!(states(&runs), [JobRunState::Waiting, JobRunState::Skipped]);
    assert!(runs[1].reason.as_deref().unwrap().contains(&format!("run {}", waiting.id)));
    assert_eq!(asked(&rig.fake, "OVER"), 1);
    // The person approves: the run goes on and ends done.
    let item = engine.inbox().await.unwrap().items.remove(0);
    let approve = skald_protocol::DecisionInput { approved: true, note: None, bypass: None };
    engine.decide(item.tool_call_id, approve, "test").await.unwrap();
    let runs = runs_until(&engine, job.id, "the run ends", all_ended).await;
    assert_eq!(states(&runs), [JobRunState::Done, JobRunState::Skipped]);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A one-shot job's run parked on an approval; returns the engine, the job and the run.
async fn parked_run(rig: &Rig, key: &str, policies: JobPolicies) -> (Engine, i64, JobRunInfo) {
    let engine = rig.engine().await;
    let once = JobSchedule::Once { at: "2026-05-04T10:01:00Z".into() };
    let job = engine.add_job(rig.job(key, once, "UTC", policies)).await.unwrap();
    script_parking_run(&rig.fake, key, false);
    rig.set(utc("2026-05-04T10:01:00Z"));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, job.id, "the run waits", |r| {
        r.first().is_some_and(|r| r.state == JobRunState::Waiting)
    })
    .await;
    let inbox = engine.inbox().await.unwrap();
    assert_eq!(inbox.items.len(), 1, "the run's approval is in the Inbox");
    // Its only occurrence claimed, the one-shot job is disabled and cannot be enabled again.
    let info = engine.job(job.id).await.unwrap();
    assert!(!info.enabled && info.next_run_at.is_none(), "{info:?}");
    let again = engine.set_job_enabled(job.id, true).await;
    assert!(matches!(again, Err(skald_core::EngineError::InvalidInput(_))), "{again:?}");
    (engine, job.id, runs[0].clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_waiting_past_its_timeout_expires_and_its_approval_is_cleared() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let policies = JobPolicies { approval_timeout_secs: Some(600), ..Default::default() };
    let (engine, job_id, run) = parked_run(&rig, "EXPIRE", policies).await;
    // Not yet: 10:01:00 + 599 s.
    rig.set(utc("2026-05-04T10:10:59Z"));
    engine.schedule_tick().await.unwrap();
    assert_eq!(engine.list_job_runs(job_id, None).await.unwrap()[0].state, JobRunState::Waiting);
    rig.set(utc("2026-05-04T10:11:01Z"));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, job_id, "the run expires", all_ended).await;
    assert_eq!(states(&runs), [JobRunState::Expired]);
    assert!(runs[0].reason.as_deref().unwrap().contains("600 s"));
    let session = run.session_id.unwrap();
    engine.wait_turn(session).await;
    assert!(engine.inbox().await.unwrap().items.is_empty(), "nothing left in the Inbox");
    assert_eq!(asked(&rig.fake, "EXPIRE"), 1, "the expired run never asked again");
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killing_a_run_waiting_for_approval_ends_it_killed_with_nothing_left_in_the_inbox() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let (engine, job_id, run) = parked_run(&rig, "KILL", JobPolicies::default()).await;
    // Killed from another process (a `skald jobs kill`): an engine without the background.
    let cli = open_at(&rig.data, &rig.fake, Some(rig.clock.clone()), false).await;
    let killed = cli.kill_job_run(run.id).await.unwrap();
    assert_eq!(killed.state, JobRunState::Killed);
    cli.wait_turn(run.session_id.unwrap()).await;
    cli.shutdown(Duration::from_secs(5)).await;
    assert!(engine.inbox().await.unwrap().items.is_empty(), "nothing left in the Inbox");
    let runs = engine.list_job_runs(job_id, None).await.unwrap();
    assert_eq!(states(&runs), [JobRunState::Killed]);
    assert!(cli_killed_twice_is_a_conflict(&engine, run.id).await);
    assert_eq!(asked(&rig.fake, "KILL"), 1);
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn cli_killed_twice_is_a_conflict(engine: &Engine, run_id: i64) -> bool {
    matches!(engine.kill_job_run(run_id).await, Err(skald_core::EngineError::Conflict(_)))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_cut_off_by_a_stop_continues_in_the_next_engine_and_runs_once() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let job = rig.job("RESTART", cron("0 * * * * * *"), "UTC", JobPolicies::default());
    let job = engine.add_job(job).await.unwrap();
    // The first request hangs: the run is mid-turn when its engine stops.
    rig.fake.push_for_prompt("RESTART", Reply::Stall { ms: 1, then_hang: true });
    rig.set(utc("2026-05-04T10:01:00Z"));
    engine.schedule_tick().await.unwrap();
    runs_until(&engine, job.id, "the run is running", |r| {
        r.first().is_some_and(|r| r.state == JobRunState::Running)
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while asked(&rig.fake, "RESTART") == 0 {
        assert!(Instant::now() < deadline, "the run never asked the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    engine.shutdown(Duration::from_millis(200)).await;
    let runs = engine.list_job_runs(job.id, None).await.unwrap();
    assert_eq!(states(&runs), [JobRunState::Running], "a stop is no end of the run");
    // The next engine continues it: same run, same session, done.
    rig.fake.push_for_prompt("RESTART", Reply::text("finished"));
    let next = rig.engine().await;
    let runs = runs_until(&next, job.id, "the run ends", all_ended).await;
    assert_eq!(states(&runs), [JobRunState::Done]);
    assert_eq!(asked(&rig.fake, "RESTART"), 2, "the cut-off request, then one continuation");
    next.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn under_deny_a_call_that_needs_a_person_is_refused_at_once_and_the_run_goes_on() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let policies = JobPolicies { on_approval: OnApproval::Deny, ..Default::default() };
    let job = start_minutely(&rig, &engine, "DENY", policies, true).await;
    let runs = runs_until(&engine, job, "the run ends", |r| r.len() == 1 && all_ended(r)).await;
    assert_eq!(states(&runs), [JobRunState::Done]);
    assert!(engine.inbox().await.unwrap().items.is_empty(), "nobody was asked");
    let store = skald_store::Store::open_in_dir(&rig.data).await.unwrap();
    let calls = store.tool_calls_for_session(runs[0].session_id.unwrap()).await.unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status().unwrap(), skald_protocol::ToolStatus::Rejected);
    assert_eq!(asked(&rig.fake, "DENY"), 2, "the model read the refusal and answered");
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn under_queue_one_an_occurrence_waits_for_the_previous_run_and_then_runs() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let policies = JobPolicies { on_overlap: OnOverlap::QueueOne, ..Default::default() };
    let job = start_minutely(&rig, &engine, "QUEUE", policies, true).await;
    runs_until(&engine, job, "the run waits", |r| {
        r.first().is_some_and(|r| r.state == JobRunState::Waiting)
    })
    .await;
    // Two more occurrences while it waits: the first is queued behind it, the second skipped.
    for minute in ["10:02", "10:03"] {
        rig.set(utc(&format!("2026-05-04T{minute}:00Z")));
        engine.schedule_tick().await.unwrap();
    }
    let runs = runs_until(&engine, job, "two more recorded", |r| r.len() == 3).await;
    use JobRunState::{Done, Queued, Skipped, Waiting};
    assert_eq!(states(&runs), [Waiting, Queued, Skipped]);
    assert!(runs[1].session_id.is_none(), "a queued run has no session until it starts");
    rig.fake.push_for_prompt("QUEUE", Reply::text("second done"));
    let item = engine.inbox().await.unwrap().items.remove(0);
    let approve = skald_protocol::DecisionInput { approved: true, note: None, bypass: None };
    engine.decide(item.tool_call_id, approve, "test").await.unwrap();
    let runs = runs_until(&engine, job, "both ran", all_ended).await;
    assert_eq!(states(&runs), [Done, Done, Skipped]);
    assert_eq!(asked(&rig.fake, "QUEUE"), 3, "two requests for the first run, one for the second");
    // A run is unattended: it may delegate (`execute_subtask`) but never start a job or task.
    for r in rig.fake.requests() {
        let names = super::subagents::tool_names(&r.body);
        assert!(!names.iter().any(|n| n == "execute_task"), "{names:?}");
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_is_checked_before_it_is_stored() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let ok = || rig.job("CHECK", cron("0 0 9 * * 1-5 *"), "Europe/Berlin", JobPolicies::default());
    let refused = |input: JobInput| {
        let engine = engine.clone();
        async move {
            match engine.add_job(input).await {
                Err(skald_core::EngineError::InvalidInput(m)) => m,
                other => panic!("not refused: {other:?}"),
            }
        }
    };
    // Each refusal starts with the input field it is about.
    let starts = |m: String, field: &str, what: &str| {
        assert!(m.starts_with(&format!("{field}: ")) && m.contains(what), "{m}");
    };
    let mut chat_agent = ok();
    chat_agent.agent_id = "main".into();
    starts(refused(chat_agent).await, "agent_id", "no task agent `main`");
    let mut no_title = ok();
    no_title.title = "  ".into();
    starts(refused(no_title).await, "title", "1 to 200 characters");
    let mut no_prompt = ok();
    no_prompt.prompt = "\n".into();
    starts(refused(no_prompt).await, "prompt", "1 to 100000 characters");
    let mut huge_timeout = ok();
    huge_timeout.policies =
        Some(JobPolicies { approval_timeout_secs: Some(u64::MAX), ..Default::default() });
    starts(refused(huge_timeout).await, "policies.approval_timeout_secs", "approval timeout");
    let mut feb_31 = ok();
    feb_31.schedule = cron("0 0 0 31 2 * *");
    starts(refused(feb_31).await, "schedule", "no fire time");
    let mut past = ok();
    past.schedule = JobSchedule::Once { at: "2026-05-04T09:00:00Z".into() };
    starts(refused(past).await, "schedule", "no fire time");
    let mut five_fields = ok();
    five_fields.schedule = cron("0 9 * * 1");
    starts(refused(five_fields).await, "schedule", "");
    let mut typo_zone = ok();
    typo_zone.timezone = Some("Europe/Berln".into());
    starts(refused(typo_zone).await, "timezone", "unknown time zone \"Europe/Berln\"");
    let mut client = ok();
    client.client = Some("nope".into());
    starts(refused(client).await, "client", "no LLM client `nope`");
    // The preview names the field the same way.
    let preview = engine.preview_schedule(&cron("0 0 9 * * * *"), Some("Mars/Base"));
    assert!(
        matches!(&preview, Err(skald_core::EngineError::InvalidInput(m)) if m.starts_with("timezone: ")),
        "{preview:?}"
    );
    assert!(engine.list_jobs().await.unwrap().is_empty(), "nothing was stored");
    let job = engine.add_job(ok()).await.unwrap();
    assert_eq!(job.description, "every weekday at 09:00, Europe/Berlin");
    assert_eq!(job.next_run_at.as_deref(), Some("2026-05-05T07:00:00.000Z"));
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_queued_behind_one_whose_ender_died_before_starting_it_still_runs() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let policies = JobPolicies { on_overlap: OnOverlap::QueueOne, ..Default::default() };
    let job = start_minutely(&rig, &engine, "STRAND", policies, false).await;
    let first = runs_until(&engine, job, "the run waits", |r| {
        r.first().is_some_and(|r| r.state == JobRunState::Waiting)
    })
    .await
    .remove(0);
    rig.set(utc("2026-05-04T10:02:00Z"));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, job, "one queued behind", |r| r.len() == 2).await;
    assert_eq!(states(&runs), [JobRunState::Waiting, JobRunState::Queued]);
    // Another process ended the waiting run and died before it started the one queued behind
    // (the end is its own transaction): only the end is stored.
    let store = skald_store::Store::open_in_dir(&rig.data).await.unwrap();
    store.end_run(first.id, JobRunState::Expired, Some("waited too long")).await.unwrap();
    assert_eq!(store.jobs_with_stranded_queued_run().await.unwrap(), [job]);
    rig.fake.push_for_prompt("STRAND", Reply::text("second done"));
    // The scheduler's next pass finds it and starts it.
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, job, "the queued run ran", |r| {
        r.get(1).is_some_and(|r| r.state == JobRunState::Done)
    })
    .await;
    assert_eq!(states(&runs), [JobRunState::Expired, JobRunState::Done]);
    assert_eq!(asked(&rig.fake, "STRAND"), 2, "one request each");
    assert!(store.jobs_with_stranded_queued_run().await.unwrap().is_empty());
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn editing_an_interval_job_restarts_its_interval_only_when_the_schedule_changed() {
    let rig = Rig::new("2026-05-04T10:00:00Z").await;
    let engine = rig.engine().await;
    let hourly = JobSchedule::Every { seconds: 3600 };
    let input = rig.job("EVERY", hourly, "UTC", JobPolicies::default());
    let job = engine.add_job(input.clone()).await.unwrap();
    assert_eq!(job.next_run_at.as_deref(), Some("2026-05-04T11:00:00.000Z"));
    rig.set(utc("2026-05-04T10:20:00Z"));
    // A new title, prompt and policies: the hour still counts from 10:00.
    let mut renamed = input.clone();
    renamed.title = "hourly look".into();
    renamed.prompt = "EVERY: look again".into();
    renamed.policies = Some(JobPolicies { on_overlap: OnOverlap::QueueOne, ..Default::default() });
    let edited = engine.edit_job(job.id, renamed.clone()).await.unwrap();
    assert_eq!(edited.next_run_at.as_deref(), Some("2026-05-04T11:00:00.000Z"));
    rig.set(utc("2026-05-04T10:40:00Z"));
    let edited = engine.edit_job(job.id, renamed.clone()).await.unwrap();
    assert_eq!(edited.next_run_at.as_deref(), Some("2026-05-04T11:00:00.000Z"), "kept again");
    // Its interval changed: it counts from now.
    let mut half = renamed.clone();
    half.schedule = JobSchedule::Every { seconds: 1800 };
    let edited = engine.edit_job(job.id, half.clone()).await.unwrap();
    assert_eq!(edited.next_run_at.as_deref(), Some("2026-05-04T11:10:00.000Z"));
    // Its zone changed (an interval's times do not depend on it, but the edit says it is new).
    rig.set(utc("2026-05-04T10:45:00Z"));
    let mut zoned = half.clone();
    zoned.timezone = Some("Europe/Berlin".into());
    let edited = engine.edit_job(job.id, zoned).await.unwrap();
    assert_eq!(edited.next_run_at.as_deref(), Some("2026-05-04T11:15:00.000Z"));
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_deleted_with_its_history_kept_still_lists_its_runs() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let job = rig.job("KEPT", cron("0 * * * * * *"), "UTC", JobPolicies::default());
    let job = engine.add_job(job).await.unwrap();
    rig.fake.push_for_prompt("KEPT", Reply::text("kept answer"));
    rig.set(utc("2026-05-04T10:01:00Z"));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, job.id, "the run ends", |r| r.len() == 1 && all_ended(r)).await;
    engine.delete_job(job.id, false).await.unwrap();
    assert!(engine.list_jobs().await.unwrap().is_empty(), "gone from the list");
    assert_eq!(engine.job(job.id).await.unwrap_err().code(), ErrorCode::NotFound);
    let kept = engine.list_job_runs(job.id, None).await.unwrap();
    assert_eq!(kept, runs, "its runs are still there to read");
    // Removed with its history: nothing is left to list.
    let other = rig.job("GONE", cron("0 * * * * * *"), "UTC", JobPolicies::default());
    let other = engine.add_job(other).await.unwrap();
    engine.delete_job(other.id, true).await.unwrap();
    let gone = engine.list_job_runs(other.id, None).await;
    assert_eq!(gone.unwrap_err().code(), ErrorCode::NotFound);
    engine.shutdown(Duration::from_secs(5)).await;
}
