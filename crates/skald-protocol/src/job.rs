//! Scheduled jobs and their runs as the API shows them (`skald jobs`, the Jobs page).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::RunContext;

/// When a job fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobSchedule {
    /// Seven fields `sec min hour day-of-month month day-of-week year` (Sunday = 0), evaluated
    /// in the job's time zone.
    Cron { expr: String },
    /// Once, at a local time in the job's zone (`2026-12-24T09:00`) or an instant with an
    /// offset (`2026-12-24T09:00:00+01:00`).
    Once { at: String },
    /// Every `seconds` seconds, counted from when the job was created.
    Every {
        #[ts(type = "number")]
        seconds: u64,
    },
}

/// What a run does when a call needs a person.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OnApproval {
    /// Park in the Inbox and wait (the run shows `waiting`; the job's timeout may end it).
    #[default]
    Wait,
    /// Refuse the call at once; the model goes on without it.
    Deny,
}

/// What an occurrence does while the job's previous run has not ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OnOverlap {
    /// Recorded `skipped`.
    #[default]
    Skip,
    /// Queued to start when the previous run ends; one at most (later ones are skipped).
    QueueOne,
}

/// What occurrences missed while no Skald ran do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OnDowntime {
    /// Each is recorded `missed`, then one catch-up run starts.
    #[default]
    CatchUpOnce,
    /// Each is recorded `missed`; the job waits for its next occurrence.
    Skip,
}

/// A job's policies; every field may be left out (its default).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct JobPolicies {
    pub on_approval: OnApproval,
    /// With `wait`: a run still waiting for a person this many seconds after it parked ends
    /// `expired` and its pending approvals and questions are cleared. `None`: it waits.
    #[ts(type = "number | null")]
    pub approval_timeout_secs: Option<u64>,
    pub on_overlap: OnOverlap,
    pub on_downtime: OnDowntime,
}

/// What adding or editing a job takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct JobInput {
    pub title: String,
    pub schedule: JobSchedule,
    /// IANA zone (`Europe/Berlin`); left out: the machine's.
    #[serde(default)]
    #[ts(optional)]
    pub timezone: Option<String>,
    /// A task agent.
    pub agent_id: String,
    /// Each run's first message.
    pub prompt: String,
    /// The runs' working directory and the rest, as for a session.
    #[serde(default)]
    #[ts(optional)]
    pub run_context: Option<RunContext>,
    /// The LLM client the runs use; left out: the agent's.
    #[serde(default)]
    #[ts(optional)]
    pub client: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub policies: Option<JobPolicies>,
    /// Left out: enabled.
    #[serde(default)]
    #[ts(optional)]
    pub enabled: Option<bool>,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum JobRunState {
    /// Claimed; its session waits for the worker (or, queued behind a run, for that run's end).
    Queued,
    Running,
    /// Parked on a person's decision or answer; holds no lease and no slot.
    Waiting,
    Done,
    Failed,
    Killed,
    /// Waited for a person longer than the job's timeout.
    Expired,
    /// Due while the previous run had not ended (overlap policy `skip`).
    Skipped,
    /// Due while no Skald ran.
    Missed,
}

impl JobRunState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Waiting => "waiting",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Killed => "killed",
            Self::Expired => "expired",
            Self::Skipped => "skipped",
            Self::Missed => "missed",
        }
    }

    /// `None` for a name this build does not know.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "queued" => Self::Queued,
            "running" => Self::Running,
            "waiting" => Self::Waiting,
            "done" => Self::Done,
            "failed" => Self::Failed,
            "killed" => Self::Killed,
            "expired" => Self::Expired,
            "skipped" => Self::Skipped,
            "missed" => Self::Missed,
            _ => return None,
        })
    }

    /// Whether the run has not ended.
    pub fn active(self) -> bool {
        matches!(self, Self::Queued | Self::Running | Self::Waiting)
    }
}

/// One run (or recorded occurrence) of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JobRunInfo {
    #[ts(type = "number")]
    pub id: i64,
    #[ts(type = "number")]
    pub job_id: i64,
    /// The occurrence it stands for (RFC 3339 UTC); a catch-up run's is when it was started.
    pub scheduled_for: String,
    pub state: JobRunState,
    /// Started after downtime, for the occurrences recorded `missed`.
    pub catch_up: bool,
    /// Started by `run now`, not by the schedule.
    pub manual: bool,
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    #[ts(type = "number")]
    pub input_tokens: i64,
    #[ts(type = "number")]
    pub output_tokens: i64,
    pub cost_usd: Option<f64>,
    /// Why it did not finish (or was not run).
    pub reason: Option<String>,
}

/// A job as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JobInfo {
    #[ts(type = "number")]
    pub id: i64,
    pub title: String,
    pub schedule: JobSchedule,
    pub timezone: String,
    pub agent_id: String,
    pub prompt: String,
    pub run_context: Option<RunContext>,
    pub client: Option<String>,
    pub policies: JobPolicies,
    pub enabled: bool,
    /// The schedule in words, with the zone.
    pub description: String,
    /// The next occurrence (RFC 3339 UTC); `None` when disabled or nothing is left.
    pub next_run_at: Option<String>,
    pub last_run: Option<JobRunInfo>,
    pub created_at: String,
}

/// A schedule checked and explained before it is saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SchedulePreview {
    /// In words, with the zone: "every weekday at 09:00, Europe/Berlin".
    pub description: String,
    pub timezone: String,
    /// The next fire times (up to five), RFC 3339 with the zone's offset.
    pub next: Vec<String>,
}

/// What deleting a job did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct JobDeleted {
    /// Runs removed with it (0 when its history was kept).
    #[ts(type = "number")]
    pub runs_removed: u64,
}

/// A notice for the home conversation: a job's run ended (done, failed, expired, killed). The
/// chat shows it as "Job: <title> — <state>: <summary>", linking the run's session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HomeNotice {
    #[ts(type = "number")]
    pub id: i64,
    #[ts(type = "number")]
    pub job_id: i64,
    #[ts(type = "number")]
    pub job_run_id: i64,
    /// The job's title when the run ended.
    pub job_title: String,
    /// How the run ended.
    pub state: JobRunState,
    /// The first lines of the run's answer, or why it did not finish.
    pub summary: String,
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    pub created_at: String,
}
