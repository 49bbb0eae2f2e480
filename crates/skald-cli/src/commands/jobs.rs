//! `skald jobs list|add|edit|rm|enable|disable|run|runs|kill|preview`, through the table.

use std::path::Path;
use std::time::Duration;

use skald_api::{
    AddJobParams, Caller, DeleteJobParams, EditJobParams, GetJobParams, KillJobRunParams,
    ListJobRunsParams, ListJobsParams, PreviewScheduleParams, RunJobNowParams, SetJobEnabledParams,
    ops,
};
use skald_core::Engine;
use skald_protocol::{
    ApiError, ErrorCode, JobInfo, JobInput, JobRunInfo, JobRunState, JobSchedule, OnApproval,
    OnDowntime, OnOverlap,
};

use crate::cli::{JobOptions, JobsCommand, ScheduleArgs};
use crate::exit;
use crate::output::{Output, one_line};

/// How long a one-shot process lets its work record a stop before it exits.
const GRACE: Duration = Duration::from_secs(5);

pub async fn run(engine: &Engine, cmd: JobsCommand, out: &Output) -> Result<u8, ApiError> {
    let c = &Caller::Cli;
    match cmd {
        JobsCommand::List => {
            let jobs = ops::list_jobs(engine, c, ListJobsParams {}).await?;
            if out.is_json() {
                out.json(&jobs)?;
                return Ok(exit::OK);
            }
            out.line(&format!(
                "{:<5} {:<8} {:<25} {:<9} {:<24} SCHEDULE",
                "ID", "ENABLED", "NEXT RUN (UTC)", "LAST", "TITLE"
            ));
            for j in &jobs {
                out.line(&job_row(j));
            }
            Ok(exit::OK)
        }
        JobsCommand::Add { title, schedule, agent, prompt, options } => {
            let Some(spec) = schedule_of(&schedule)? else {
                return Err(invalid("give the schedule: --cron, --at or --every"));
            };
            let mut job = JobInput {
                title,
                schedule: spec,
                timezone: schedule.tz,
                agent_id: agent,
                prompt,
                run_context: None,
                client: None,
                policies: None,
                enabled: None,
            };
            let here = std::env::current_dir().ok();
            apply(&mut job, options, here.as_deref())?;
            let job = ops::add_job(engine, c, AddJobParams { job }).await?;
            show_job(&job, out)
        }
        JobsCommand::Edit { id, title, schedule, agent, prompt, options } => {
            let current = ops::get_job(engine, c, GetJobParams { job_id: id }).await?;
            let mut job = JobInput {
                title: title.unwrap_or(current.title),
                schedule: schedule_of(&schedule)?.unwrap_or(current.schedule),
                timezone: schedule.tz.or(Some(current.timezone)),
                agent_id: agent.unwrap_or(current.agent_id),
                prompt: prompt.unwrap_or(current.prompt),
                run_context: current.run_context,
                client: current.client,
                policies: Some(current.policies),
                enabled: Some(current.enabled),
            };
            apply(&mut job, options, None)?;
            let job = ops::edit_job(engine, c, EditJobParams { job_id: id, job }).await?;
            show_job(&job, out)
        }
        JobsCommand::Rm { id, remove_history } => {
            let params = DeleteJobParams { job_id: id, remove_history };
            let deleted = ops::delete_job(engine, c, params).await?;
            if out.is_json() {
                out.json(&deleted)?;
            } else if remove_history {
                out.line(&format!("deleted job {id} and {} run(s)", deleted.runs_removed));
            } else {
                out.line(&format!(
                    "deleted job {id}; its runs are kept: skald jobs runs {id} lists them \
                     (--remove-history deletes them)"
                ));
            }
            Ok(exit::OK)
        }
        JobsCommand::Enable { id } | JobsCommand::Disable { id } => {
            let enabled = matches!(cmd, JobsCommand::Enable { .. });
            let params = SetJobEnabledParams { job_id: id, enabled };
            let job = ops::set_job_enabled(engine, c, params).await?;
            show_job(&job, out)
        }
        JobsCommand::Run { id, no_wait } => run_now(engine, id, no_wait, out).await,
        JobsCommand::Runs { id, limit } => {
            let params = ListJobRunsParams { job_id: id, limit: Some(limit) };
            let runs = ops::list_job_runs(engine, c, params).await?;
            if out.is_json() {
                out.json(&runs)?;
                return Ok(exit::OK);
            }
            out.line(&format!(
                "{:<6} {:<8} {:<25} {:<8} {:<8} {:<8} REASON",
                "RUN", "STATE", "SCHEDULED FOR (UTC)", "SESSION", "TOKENS", "FLAGS"
            ));
            for r in &runs {
                out.line(&run_row(r));
            }
            Ok(exit::OK)
        }
        JobsCommand::Kill { run } => {
            let killed = ops::kill_job_run(engine, c, KillJobRunParams { run_id: run }).await?;
            // A run parked here is settled by this process: let it record its end.
            if let Some(session_id) = killed.session_id {
                engine.wait_turn(session_id).await;
            }
            engine.shutdown(GRACE).await;
            show_run(&killed, out)
        }
        JobsCommand::Preview { schedule } => {
            let Some(spec) = schedule_of(&schedule)? else {
                return Err(invalid("give the schedule: --cron, --at or --every"));
            };
            let params = PreviewScheduleParams { schedule: spec, timezone: schedule.tz };
            let preview = ops::preview_schedule(engine, c, params).await?;
            if out.is_json() {
                out.json(&preview)?;
            } else {
                out.line(&preview.description);
                for t in &preview.next {
                    out.line(&format!("  {t}"));
                }
            }
            Ok(exit::OK)
        }
    }
}

/// Starts a run; without `no_wait` follows it here to its end.
async fn run_now(engine: &Engine, id: i64, no_wait: bool, out: &Output) -> Result<u8, ApiError> {
    let started = ops::run_job_now(engine, &Caller::Cli, RunJobNowParams { job_id: id }).await?;
    let Some(session_id) = started.session_id.filter(|_| !no_wait) else {
        engine.shutdown(GRACE).await;
        return show_run(&started, out);
    };
    if !out.is_json() {
        out.line(&format!("run {} started in session {session_id}", started.id));
    }
    tokio::select! {
        _ = engine.wait_turn(session_id) => {}
        _ = tokio::signal::ctrl_c() => {
            let _ = engine.kill_job_run(started.id).await;
            engine.wait_turn(session_id).await;
        }
    }
    engine.shutdown(GRACE).await;
    let params = ListJobRunsParams { job_id: id, limit: Some(1000) };
    let runs = ops::list_job_runs(engine, &Caller::Cli, params).await?;
    let ended = runs.into_iter().find(|r| r.id == started.id).unwrap_or(started);
    show_run(&ended, out)?;
    Ok(if ended.state == JobRunState::Done { exit::OK } else { exit::ERROR })
}

fn invalid(message: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message.to_string())
}

fn schedule_of(args: &ScheduleArgs) -> Result<Option<JobSchedule>, ApiError> {
    Ok(match (&args.cron, &args.at, args.every) {
        (Some(expr), None, None) => Some(JobSchedule::Cron { expr: expr.clone() }),
        (None, Some(at), None) => Some(JobSchedule::Once { at: at.clone() }),
        (None, None, Some(seconds)) => Some(JobSchedule::Every { seconds }),
        (None, None, None) => None,
        _ => return Err(invalid("give one of --cron, --at and --every")),
    })
}

/// Applies the options given; `here` is the working directory a new job defaults to.
fn apply(job: &mut JobInput, o: JobOptions, here: Option<&Path>) -> Result<(), ApiError> {
    let workdir = match o.workdir.as_deref().or(here) {
        Some(dir) => Some(std::fs::canonicalize(dir).map_err(|e| {
            ApiError::new(ErrorCode::InvalidInput, format!("--workdir {}: {e}", dir.display()))
        })?),
        None => None,
    };
    if let Some(dir) = workdir {
        let mut rc = job.run_context.take().unwrap_or_default();
        rc.working_directory = Some(dir.display().to_string());
        job.run_context = Some(rc);
    }
    if o.client.is_some() {
        job.client = o.client;
    }
    let mut p = job.policies.take().unwrap_or_default();
    match o.on_approval.as_deref() {
        Some("deny") => p.on_approval = OnApproval::Deny,
        Some(_) => p.on_approval = OnApproval::Wait,
        None => {}
    }
    if o.approval_timeout.is_some() {
        p.approval_timeout_secs = o.approval_timeout;
    }
    match o.on_overlap.as_deref() {
        Some("queue-one") => p.on_overlap = OnOverlap::QueueOne,
        Some(_) => p.on_overlap = OnOverlap::Skip,
        None => {}
    }
    match o.on_downtime.as_deref() {
        Some("skip") => p.on_downtime = OnDowntime::Skip,
        Some(_) => p.on_downtime = OnDowntime::CatchUpOnce,
        None => {}
    }
    job.policies = Some(p);
    if o.disabled {
        job.enabled = Some(false);
    }
    Ok(())
}

fn show_job(job: &JobInfo, out: &Output) -> Result<u8, ApiError> {
    if out.is_json() {
        out.json(job)?;
    } else {
        out.line(&job_row(job));
    }
    Ok(exit::OK)
}

fn show_run(run: &JobRunInfo, out: &Output) -> Result<u8, ApiError> {
    if out.is_json() {
        out.json(run)?;
    } else {
        out.line(&run_row(run));
    }
    Ok(exit::OK)
}

/// `3     yes      2026-12-07T08:00:00.000Z  done      Standup notes            every weekday …`
fn job_row(j: &JobInfo) -> String {
    let last = j.last_run.as_ref().map_or("-", |r| r.state.as_str());
    let next = j.next_run_at.as_deref().unwrap_or("-");
    format!(
        "{:<5} {:<8} {:<25} {:<9} {:<24} {}",
        j.id,
        if j.enabled { "yes" } else { "no" },
        next,
        last,
        one_line(&j.title),
        one_line(&j.description)
    )
}

/// `12     done     2026-12-07T08:00:00.000Z  41       1520     catch-up  `
fn run_row(r: &JobRunInfo) -> String {
    let session = r.session_id.map_or("-".to_string(), |s| s.to_string());
    let tokens = r.input_tokens + r.output_tokens;
    let flags = match (r.catch_up, r.manual) {
        (true, _) => "catch-up",
        (_, true) => "manual",
        _ => "",
    };
    let reason = r.reason.as_deref().unwrap_or("");
    format!(
        "{:<6} {:<8} {:<25} {:<8} {:<8} {:<8} {}",
        r.id,
        r.state.as_str(),
        r.scheduled_for,
        session,
        tokens,
        flags,
        one_line(reason)
    )
}
