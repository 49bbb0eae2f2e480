//! Scheduled jobs: adding and controlling them, the scheduler service that claims due
//! occurrences (it only enqueues: a run is a work item like an async task's), and what a run's
//! start, park and end write on its row.

use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use skald_protocol::{
    Event, EventEnvelope, HomeNotice, JobDeleted, JobInfo, JobInput, JobPolicies, JobRunInfo,
    JobRunState, JobSchedule, OnApproval, OnDowntime, OnOverlap, SchedulePreview,
};
use skald_store::clock::format_ts;
use skald_store::repo::jobs::{Claim, JobFields, JobRow, JobRunRow, RunEnded, RunPlan};
use skald_store::repo::notices::NoticeRow;

use super::run_context::encode_run_context;
use super::runner::RunMark;
use super::work::Adopted;
use super::{Engine, Inner};
use crate::agents;
use crate::error::EngineError;
use crate::jobs::Schedule;
use crate::turn::{JobDesk, JobFuture, RunEnd, TurnOutcome};

/// How often the scheduler looks for due jobs: one indexed read when none is due, so a job's
/// second-exact schedule is kept without a timer per job.
const TICK: Duration = Duration::from_secs(1);

/// An occurrence claimed later than this after its time was not missed by a slow tick but by
/// downtime (no Skald ran, the machine slept): it is recorded `missed`.
const LATE: chrono::Duration = chrono::Duration::seconds(90);

/// At most this many missed occurrences are recorded per claim (a job every minute over a
/// month away would otherwise write forty thousand rows in one go).
const MAX_MISSED: usize = 1000;

const MAX_TITLE_CHARS: usize = 200;
/// The longest approval timeout: a year (a value past it would overflow the time arithmetic).
const MAX_APPROVAL_TIMEOUT_SECS: u64 = 366 * 24 * 3600;
const MAX_PROMPT_CHARS: usize = 100_000;
const DEFAULT_RUNS: u32 = 50;
const DEFAULT_NOTICES: u32 = 20;

impl Engine {
    /// Starts the scheduler service (with the background: the app, `skald serve`).
    pub(super) fn start_scheduler(&self) {
        self.spawn_service("scheduler", TICK, |engine| async move { engine.schedule_tick().await });
    }

    /// One pass of the scheduler: claims every due job's occurrences and ends runs that waited
    /// for a person past their job's timeout. Public for tests and diagnostics.
    pub async fn schedule_tick(&self) -> Result<(), String> {
        if self.inner.lifecycle.stopping() {
            return Ok(());
        }
        let now = self.store().clock().now();
        let due = self
            .store()
            .due_jobs(&format_ts(now))
            .await
            .map_err(|e| format!("cannot look for due jobs: {e}"))?;
        for job in due {
            if let Err(e) = self.claim_due(&job, now).await {
                tracing::warn!(job_id = job.id, "cannot claim the job's occurrence: {e}");
            }
        }
        self.expire_waiting(now).await.map_err(|e| format!("cannot expire waiting runs: {e}"))?;
        self.start_stranded_queued().await;
        Ok(())
    }

    async fn claim_due(&self, job: &JobRow, now: DateTime<Utc>) -> Result<(), EngineError> {
        let Some(expected) = job.next_run_at.as_deref() else { return Ok(()) };
        let first = parse_ts(expected)?;
        let schedule = match job_schedule(job) {
            Ok(s) => s,
            Err(e) => {
                // A schedule that no longer parses (a zone gone from the database) would be due
                // forever: the job is disabled and says why in the log.
                tracing::warn!(job_id = job.id, "disabling a job whose schedule is invalid: {e}");
                let (id, write) = (job.id, self.store().set_job_enabled(job.id, false, None));
                // Open Jobs pages in every process show it disabled at once.
                self.commit_events(write, move |_| vec![job_changed(id, false)]).await?;
                return Ok(());
            }
        };
        let mut due = vec![first];
        due.extend(schedule.between(first, now, MAX_MISSED));
        let new_next = schedule.next_after(now).map(format_ts);
        let on_time = due.len() == 1 && now - first <= LATE;
        let (missed, run): (Vec<String>, Option<(String, bool)>) = if on_time {
            (Vec::new(), Some((expected.to_string(), false)))
        } else {
            let missed = due.into_iter().map(format_ts).collect();
            let catch_up = (job.on_downtime == "catch_up_once").then(|| (format_ts(now), true));
            (missed, catch_up)
        };
        let claim = Claim {
            job_id: job.id,
            expected_next: Some(expected),
            new_next: new_next.as_deref(),
            missed: &missed,
            run: run.as_ref().map(|(at, catch_up)| RunPlan {
                scheduled_for: at,
                catch_up: *catch_up,
                manual: false,
            }),
        };
        if let Some(claimed) = self.store().claim_occurrences(&claim).await? {
            if claimed.started_session.is_some() {
                self.wake_worker();
            }
            if let Some(run) = &claimed.run {
                self.emit_run(run);
            }
        }
        Ok(())
    }

    /// Runs waiting for a person longer than their job allows end `expired`; their waiting
    /// calls are cancelled (the Inbox no longer shows them).
    async fn expire_waiting(&self, now: DateTime<Utc>) -> Result<(), EngineError> {
        for (run, timeout) in self.store().waiting_runs_with_timeout().await? {
            let Some(since) = run.waiting_since.as_deref() else { continue };
            // Checked on input; a hand-edited row out of range waits instead of panicking.
            let Some(limit) = chrono::Duration::try_seconds(timeout) else { continue };
            if parse_ts(since)?.checked_add_signed(limit).is_none_or(|end| end > now) {
                continue;
            }
            let reason = format!("waited for a person longer than {timeout} s");
            self.end_run_and_stop(&run, JobRunState::Expired, &reason).await?;
        }
        Ok(())
    }

    /// Ends a run (if it had not ended) and stops its session's turn: a parked turn's waiting
    /// calls are cancelled, a running one's model call and commands abort, here or elsewhere.
    async fn end_run_and_stop(
        &self,
        run: &JobRunRow,
        state: JobRunState,
        reason: &str,
    ) -> Result<Option<JobRunRow>, EngineError> {
        let Some(ended) = self.store().end_run(run.id, state, Some(reason)).await? else {
            return Ok(None);
        };
        self.emit_ended(&ended);
        let ended = ended.run;
        // The run queued behind starts whether or not the stop below works: it has ended.
        self.start_queued_behind(ended.job_id).await;
        if let Some(session_id) = ended.session_id {
            self.stop(session_id).await?;
        }
        Ok(Some(ended))
    }

    /// Runs queued behind a run that has ended, whose start nobody made (the process that ended
    /// it died first, or its start failed), start now: a queued occurrence never waits forever.
    async fn start_stranded_queued(&self) {
        match self.store().jobs_with_stranded_queued_run().await {
            Ok(jobs) => {
                for job_id in jobs {
                    self.start_queued_behind(job_id).await;
                }
            }
            Err(e) => tracing::warn!("cannot look for runs queued behind an ended run: {e}"),
        }
    }

    /// A job's run that was queued behind the one that just ended starts now.
    async fn start_queued_behind(&self, job_id: i64) {
        match self.store().start_queued_run(job_id).await {
            Ok(Some(session_id)) => {
                self.wake_worker();
                if let Ok(Some(run)) = self.store().run_of_session(session_id).await {
                    self.emit_run(&run);
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(job_id, "cannot start the run queued behind: {e}"),
        }
    }

    /// Tells every process (and a Jobs page) that a run was recorded or changed state.
    fn emit_run(&self, run: &JobRunRow) {
        self.emit(EventEnvelope::global(Event::JobRunUpdate { run: run.info() }));
    }

    /// A run ended: its new state, then the notice the home conversation shows.
    fn emit_ended(&self, ended: &RunEnded) {
        self.emit_run(&ended.run);
        self.emit(EventEnvelope::global(Event::HomeNotice { notice: ended.notice.info() }));
        // Its end was reported with it: delivered home with whatever else arrives meanwhile.
        self.briefing_soon();
    }

    /// The worker claimed a session's work: a job's run is `running` from now. `false` when
    /// the session is a run that has ended (killed or expired while queued): nothing runs.
    pub(super) async fn job_run_started(&self, session_id: i64) -> bool {
        match self.store().run_of_session(session_id).await {
            Ok(Some(run)) if !run.run_state().active() => false,
            Ok(Some(_)) => {
                match self.store().mark_run_running(session_id).await {
                    Ok(Some(run)) => self.emit_run(&run),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(session_id, "cannot mark the job's run running: {e}"),
                }
                true
            }
            Ok(None) => true,
            Err(e) => {
                tracing::warn!(session_id, "cannot read whether the session is a job's run: {e}");
                true
            }
        }
    }

    /// Every turn end of a session: a job's run parked on a person is `waiting`; one that
    /// ended is `done` or `failed` (with the reason), or `killed` when stopped. A run cut off by
    /// shutdown is no end: the next engine continues it.
    pub(super) async fn job_run_ended(&self, session_id: i64, outcome: &TurnOutcome) {
        if self.inner.lifecycle.stopping() {
            return;
        }
        let store = self.store();
        let Ok(Some(run)) = store.run_of_session(session_id).await else { return };
        if !run.run_state().active() {
            return;
        }
        let Some(end) = outcome.run_end() else {
            match store.mark_run_waiting(session_id).await {
                Ok(Some(run)) => {
                    self.emit_run(&run);
                    // Told at home too, with whatever else arrives meanwhile.
                    self.briefing_soon();
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(session_id, "cannot mark the job's run waiting: {e}"),
            }
            return;
        };
        let state = match end {
            RunEnd::Done => JobRunState::Done,
            RunEnd::Stopped => JobRunState::Killed,
            RunEnd::Failed { .. } => JobRunState::Failed,
        };
        match store.end_run(run.id, state, end.reason()).await {
            Ok(Some(ended)) => {
                self.emit_ended(&ended);
                self.start_queued_behind(run.job_id).await;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(session_id, "cannot record the end of the job's run: {e}"),
        }
    }

    /// Runs left queued or running by a stopped or dead engine get their work queued again
    /// (`start_background`): never lost; the session's lease keeps them from running twice.
    pub(super) async fn continue_job_runs(&self) {
        let store = self.store();
        match store.unfinished_run_sessions().await {
            Ok(ids) => {
                for id in ids {
                    if let Err(e) = store.requeue_task_run(id).await {
                        tracing::warn!(session_id = id, "cannot queue the job's run: {e}");
                    }
                }
            }
            Err(e) => tracing::warn!("cannot look for unfinished job runs: {e}"),
        }
        self.start_stranded_queued().await;
    }

    /// Checks a schedule and says it in words with its next fire times.
    pub fn preview_schedule(
        &self,
        schedule: &JobSchedule,
        timezone: Option<&str>,
    ) -> Result<SchedulePreview, EngineError> {
        let now = self.store().clock().now();
        let parsed = Schedule::parse(schedule, timezone, now).map_err(schedule_error)?;
        Ok(parsed.preview(now))
    }

    /// What a turn's `execute_task` mode `cron` checks and adds jobs with.
    pub(super) fn job_desk(&self) -> Arc<dyn JobDesk> {
        Arc::new(EngineJobs(Arc::downgrade(&self.inner)))
    }

    /// Checks a job as `add_job` would and previews its schedule from now.
    fn check_job(&self, input: &JobInput) -> Result<SchedulePreview, EngineError> {
        let now = self.store().clock().now();
        self.validate_job(input, now, now)?;
        self.preview_schedule(&input.schedule, input.timezone.as_deref())
    }

    /// Every job with its next run and its last run, oldest first.
    pub async fn list_jobs(&self) -> Result<Vec<JobInfo>, EngineError> {
        let store = self.store();
        let last = store.last_runs().await?;
        let jobs = store.jobs().await?;
        Ok(jobs
            .iter()
            .map(|j| job_info(j, last.iter().find(|r| r.job_id == j.id).map(JobRunRow::info)))
            .collect())
    }

    pub async fn job(&self, id: i64) -> Result<JobInfo, EngineError> {
        let row = self.store().job(id).await?;
        let last = self.store().job_runs(id, 1).await?.first().map(JobRunRow::info);
        Ok(job_info(&row, last))
    }

    /// Adds a job; every process hears of it (`job_changed`, in the insert's transaction).
    pub async fn add_job(&self, input: JobInput) -> Result<JobInfo, EngineError> {
        let now = self.store().clock().now();
        let valid = self.validate_job(&input, now, now)?;
        let fields = valid.fields(&input);
        let row = self
            .commit_events(self.store().insert_job(&fields), |id| {
                id.map(|job_id| job_changed(job_id, false)).into_iter().collect()
            })
            .await?;
        Ok(job_info(&row, None))
    }

    /// Replaces a job's definition; its history stays. An interval counts again from now only
    /// when its schedule or zone changed; with both unchanged the next run stays where it was.
    pub async fn edit_job(&self, id: i64, input: JobInput) -> Result<JobInfo, EngineError> {
        let old = self.store().job(id).await?;
        let now = self.store().clock().now();
        let same_schedule = serde_json::from_str::<JobSchedule>(&old.schedule)
            .is_ok_and(|s| s == input.schedule)
            && Schedule::parse(&input.schedule, input.timezone.as_deref(), now)
                .is_ok_and(|s| s.timezone() == old.timezone);
        let anchor = if same_schedule { parse_ts(&old.anchor_at)? } else { now };
        let mut valid = self.validate_job(&input, now, anchor)?;
        if same_schedule && valid.enabled && old.enabled && old.next_run_at.is_some() {
            // Not claimed yet: an occurrence due right now still runs.
            valid.next = old.next_run_at;
        }
        let fields = valid.fields(&input);
        let row = self
            .commit_events(self.store().update_job(id, &fields), move |_| {
                vec![job_changed(id, false)]
            })
            .await?;
        self.job(row.id).await
    }

    /// Deletes a job; its runs go too with `remove_history`. A run not ended is a conflict.
    pub async fn delete_job(
        &self,
        id: i64,
        remove_history: bool,
    ) -> Result<JobDeleted, EngineError> {
        let delete = self.store().delete_job(id, remove_history);
        let runs_removed = self.commit_events(delete, move |_| vec![job_changed(id, true)]).await?;
        Ok(JobDeleted { runs_removed })
    }

    /// The notices the home conversation shows (runs that ended), newest first, not dismissed
    /// (`limit`, default 20, at most 200).
    pub async fn home_notices(&self, limit: Option<u32>) -> Result<Vec<HomeNotice>, EngineError> {
        let limit = limit.unwrap_or(DEFAULT_NOTICES).clamp(1, 200);
        Ok(self.store().open_notices(limit).await?.iter().map(NoticeRow::info).collect())
    }

    /// Dismisses a notice (again is fine); every window showing it drops it.
    pub async fn dismiss_home_notice(&self, notice_id: i64) -> Result<(), EngineError> {
        let dismissed = Event::HomeNoticeDismissed { notice_id };
        self.commit_events(self.store().dismiss_notice(notice_id), move |_| {
            vec![EventEnvelope::global(dismissed)]
        })
        .await?;
        Ok(())
    }

    /// Enables a job (its next occurrence counted from now: what passed while it was disabled
    /// is not missed; a job with none left is `invalid_input`) or disables it.
    pub async fn set_job_enabled(&self, id: i64, enabled: bool) -> Result<JobInfo, EngineError> {
        let row = self.store().job(id).await?;
        let next = if enabled {
            let schedule = job_schedule(&row).map_err(EngineError::Internal)?;
            let next = schedule.next_after(self.store().clock().now()).map(format_ts);
            if next.is_none() {
                return Err(EngineError::InvalidInput(format!(
                    "job {id} has no fire time left ({}): edit its schedule",
                    schedule.describe()
                )));
            }
            next
        } else {
            None
        };
        let write = self.store().set_job_enabled(id, enabled, next.as_deref());
        self.commit_events(write, move |_| vec![job_changed(id, false)]).await?;
        self.job(id).await
    }

    /// Starts a run now, outside the schedule (the overlap policy applies as to any run). An
    /// engine without the background runs it itself: `wait_turn` on its session follows it.
    pub async fn run_job_now(&self, id: i64) -> Result<JobRunInfo, EngineError> {
        self.store().job(id).await?;
        if self.inner.lifecycle.stopping() {
            return Err(EngineError::ShuttingDown);
        }
        let at = format_ts(self.store().clock().now());
        let plan = RunPlan { scheduled_for: &at, catch_up: false, manual: true };
        let claim =
            Claim { job_id: id, expected_next: None, new_next: None, missed: &[], run: Some(plan) };
        let Some(claimed) = self.store().claim_occurrences(&claim).await? else {
            return Err(EngineError::Conflict(format!("job {id} was started at {at} already")));
        };
        let run =
            claimed.run.ok_or_else(|| EngineError::Internal("a run claimed no row".into()))?;
        self.emit_run(&run);
        if let Some(session_id) = claimed.started_session {
            if self.inner.lifecycle.background() {
                self.wake_worker();
            } else {
                let handle = self.inner.sessions.handle(session_id);
                let adopted = Adopted { mark: Some(RunMark::start(handle)), counted: None };
                self.adopt(session_id, adopted).await;
            }
        }
        Ok(self.store().job_run(run.id).await?.info())
    }

    /// A job's runs, newest first (`limit`, default 50).
    pub async fn list_job_runs(
        &self,
        job_id: i64,
        limit: Option<u32>,
    ) -> Result<Vec<JobRunInfo>, EngineError> {
        // A job deleted with its history kept still has its runs to read.
        self.store().job_even_deleted(job_id).await?;
        let limit = limit.unwrap_or(DEFAULT_RUNS).clamp(1, 1000);
        Ok(self.store().job_runs(job_id, limit).await?.iter().map(JobRunRow::info).collect())
    }

    /// Kills a run not ended, from any process: it ends `killed`, its waiting approvals and
    /// questions are cancelled, its model call and commands abort.
    pub async fn kill_job_run(&self, run_id: i64) -> Result<JobRunInfo, EngineError> {
        let run = self.store().job_run(run_id).await?;
        let ended = self.end_run_and_stop(&run, JobRunState::Killed, "killed").await?;
        let Some(ended) = ended else {
            return Err(EngineError::Conflict(format!(
                "run {run_id} has ended already ({})",
                run.state
            )));
        };
        Ok(ended.info())
    }

    /// Checks a job's input; every refusal names the field it is about (`title: …`). `anchor` is
    /// where an interval counts from.
    fn validate_job(
        &self,
        input: &JobInput,
        now: DateTime<Utc>,
        anchor: DateTime<Utc>,
    ) -> Result<Valid, EngineError> {
        let bad = |m: String| Err(EngineError::InvalidInput(m));
        let title = input.title.trim();
        if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
            return bad(format!("title: a job's title is 1 to {MAX_TITLE_CHARS} characters"));
        }
        if input.prompt.trim().is_empty() || input.prompt.chars().count() > MAX_PROMPT_CHARS {
            return bad(format!("prompt: a job's prompt is 1 to {MAX_PROMPT_CHARS} characters"));
        }
        let dispatchable = agents::dispatchable(self.data_dir());
        if !dispatchable.iter().any(|a| a.id == input.agent_id) {
            let ids: Vec<&str> = dispatchable.iter().map(|a| a.id.as_str()).collect();
            return bad(format!(
                "agent_id: no task agent `{}` (a job runs a task agent). Available: {}",
                input.agent_id,
                if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
            ));
        }
        if let Some(name) = input.client.as_deref()
            && !self.configured_models(false).iter().any(|m| m.name == name)
        {
            return bad(format!("client: no LLM client `{name}` is configured"));
        }
        let policies = input.policies.clone().unwrap_or_default();
        if policies.approval_timeout_secs.is_some_and(|t| t == 0 || t > MAX_APPROVAL_TIMEOUT_SECS) {
            return bad(format!(
                "policies.approval_timeout_secs: an approval timeout is 1 to \
                 {MAX_APPROVAL_TIMEOUT_SECS} seconds (a year)"
            ));
        }
        let schedule = Schedule::parse(&input.schedule, input.timezone.as_deref(), anchor)
            .map_err(schedule_error)?;
        let enabled = input.enabled.unwrap_or(true);
        let next = if enabled { schedule.next_after(now).map(format_ts) } else { None };
        if enabled && next.is_none() {
            return bad(
                "schedule: the schedule has no fire time left (a time that has passed?)".into()
            );
        }
        let schedule_json = serde_json::to_string(&input.schedule)
            .map_err(|e| EngineError::Internal(format!("cannot encode a schedule: {e}")))?;
        let run_context = input.run_context.as_ref().map(encode_run_context).transpose()?;
        Ok(Valid {
            timezone: schedule.timezone().to_string(),
            schedule_json,
            run_context,
            policies,
            next,
            enabled,
            anchor: format_ts(anchor),
        })
    }
}

/// The engine's jobs as a turn sees them (weakly held: a turn never keeps its engine alive).
struct EngineJobs(Weak<Inner>);

impl EngineJobs {
    fn engine(&self) -> Result<Engine, EngineError> {
        self.0.upgrade().map(|inner| Engine { inner }).ok_or(EngineError::ShuttingDown)
    }
}

impl JobDesk for EngineJobs {
    fn check(&self, input: &JobInput) -> Result<SchedulePreview, EngineError> {
        self.engine()?.check_job(input)
    }

    fn add(&self, input: JobInput) -> JobFuture {
        let engine = self.engine();
        Box::pin(async move { engine?.add_job(input).await })
    }
}

/// A job input checked, with what is stored for it.
struct Valid {
    timezone: String,
    schedule_json: String,
    run_context: Option<String>,
    policies: JobPolicies,
    next: Option<String>,
    enabled: bool,
    /// Where an interval counts from: now, or (an edit that kept the schedule) as it was.
    anchor: String,
}

impl Valid {
    fn fields<'a>(&'a self, input: &'a JobInput) -> JobFields<'a> {
        let p = &self.policies;
        JobFields {
            title: input.title.trim(),
            schedule: &self.schedule_json,
            timezone: &self.timezone,
            agent_id: &input.agent_id,
            prompt: &input.prompt,
            run_context: self.run_context.as_deref(),
            client: input.client.as_deref(),
            enabled: self.enabled,
            on_approval: match p.on_approval {
                OnApproval::Wait => "wait",
                OnApproval::Deny => "deny",
            },
            approval_timeout_secs: p
                .approval_timeout_secs
                .map(|s| i64::try_from(s).unwrap_or(i64::MAX)),
            on_overlap: match p.on_overlap {
                OnOverlap::Skip => "skip",
                OnOverlap::QueueOne => "queue_one",
            },
            on_downtime: match p.on_downtime {
                OnDowntime::CatchUpOnce => "catch_up_once",
                OnDowntime::Skip => "skip",
            },
            next_run_at: self.next.as_deref(),
            anchor_at: &self.anchor,
        }
    }
}

/// A refused schedule, naming the input field it is about (`schedule: …`, `timezone: …`).
fn schedule_error(e: crate::jobs::ScheduleError) -> EngineError {
    EngineError::InvalidInput(format!("{}: {e}", e.field()))
}

fn job_changed(job_id: i64, deleted: bool) -> EventEnvelope {
    EventEnvelope::global(Event::JobChanged { job_id, deleted })
}

fn parse_ts(ts: &str) -> Result<DateTime<Utc>, EngineError> {
    DateTime::parse_from_rfc3339(ts)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| EngineError::Internal(format!("a stored time {ts:?} is invalid: {e}")))
}

fn job_schedule(job: &JobRow) -> Result<Schedule, String> {
    let spec: JobSchedule = serde_json::from_str(&job.schedule)
        .map_err(|e| format!("the stored schedule of job {} is invalid: {e}", job.id))?;
    let anchor = DateTime::parse_from_rfc3339(&job.anchor_at)
        .map_err(|e| format!("the stored anchor of job {} is invalid: {e}", job.id))?
        .with_timezone(&Utc);
    Schedule::parse(&spec, Some(&job.timezone), anchor).map_err(|e| e.to_string())
}

fn job_info(job: &JobRow, last_run: Option<JobRunInfo>) -> JobInfo {
    let schedule = serde_json::from_str(&job.schedule)
        .unwrap_or(JobSchedule::Cron { expr: job.schedule.clone() });
    let description = job_schedule(job).map_or_else(|e| e, |s| s.describe());
    JobInfo {
        id: job.id,
        title: job.title.clone(),
        schedule,
        timezone: job.timezone.clone(),
        agent_id: job.agent_id.clone(),
        prompt: job.prompt.clone(),
        run_context: skald_protocol::RunContext::parse(job.run_context.as_deref()).ok(),
        client: job.client.clone(),
        policies: JobPolicies {
            on_approval: if job.on_approval == "deny" {
                OnApproval::Deny
            } else {
                OnApproval::Wait
            },
            approval_timeout_secs: job.approval_timeout_secs.and_then(|s| u64::try_from(s).ok()),
            on_overlap: if job.on_overlap == "queue_one" {
                OnOverlap::QueueOne
            } else {
                OnOverlap::Skip
            },
            on_downtime: if job.on_downtime == "skip" {
                OnDowntime::Skip
            } else {
                OnDowntime::CatchUpOnce
            },
        },
        enabled: job.enabled,
        description,
        next_run_at: job.next_run_at.clone(),
        last_run,
        created_at: job.created_at.clone(),
    }
}
