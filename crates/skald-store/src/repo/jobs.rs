//! `scheduled_jobs` and `job_runs`: jobs, the claim of an occurrence (one write transaction two
//! processes cannot both win), and each run's state from queued to its end.

use skald_protocol::{JobRunInfo, JobRunState};
use sqlx::sqlite::SqliteArguments;
use sqlx::{FromRow, SqliteConnection};

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::notices::{NoticeRow, insert_run_notice};
use crate::repo::notifications::{NewNotification, insert_notification_in};
use crate::repo::sessions::{NewSession, insert_run_session};

/// A job's row.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct JobRow {
    pub id: i64,
    pub title: String,
    /// `JobSchedule` as JSON.
    pub schedule: String,
    pub timezone: String,
    pub agent_id: String,
    pub prompt: String,
    pub run_context: Option<String>,
    pub client: Option<String>,
    pub enabled: bool,
    pub on_approval: String,
    pub approval_timeout_secs: Option<i64>,
    pub on_overlap: String,
    pub on_downtime: String,
    pub next_run_at: Option<String>,
    pub anchor_at: String,
    pub created_at: String,
    pub updated_at: String,
}

/// What a job is made of (validated by the engine before it is written).
#[derive(Debug, Clone)]
pub struct JobFields<'a> {
    pub title: &'a str,
    pub schedule: &'a str,
    pub timezone: &'a str,
    pub agent_id: &'a str,
    pub prompt: &'a str,
    pub run_context: Option<&'a str>,
    pub client: Option<&'a str>,
    pub enabled: bool,
    pub on_approval: &'a str,
    pub approval_timeout_secs: Option<i64>,
    pub on_overlap: &'a str,
    pub on_downtime: &'a str,
    pub next_run_at: Option<&'a str>,
    pub anchor_at: &'a str,
}

/// A run's row.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct JobRunRow {
    pub id: i64,
    pub job_id: i64,
    pub scheduled_for: String,
    pub state: String,
    pub catch_up: bool,
    pub manual: bool,
    pub session_id: Option<i64>,
    pub waiting_since: Option<String>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_usd: Option<f64>,
    pub reason: Option<String>,
}

impl JobRunRow {
    /// The state; a name this build does not know reads as `failed` (an end, never active).
    pub fn run_state(&self) -> JobRunState {
        JobRunState::from_name(&self.state).unwrap_or(JobRunState::Failed)
    }

    pub fn info(&self) -> JobRunInfo {
        JobRunInfo {
            id: self.id,
            job_id: self.job_id,
            scheduled_for: self.scheduled_for.clone(),
            state: self.run_state(),
            catch_up: self.catch_up,
            manual: self.manual,
            session_id: self.session_id,
            started_at: self.started_at.clone(),
            ended_at: self.ended_at.clone(),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cost_usd: self.cost_usd,
            reason: self.reason.clone(),
        }
    }
}

/// A run that `end_run` ended, and the notice it wrote for the home conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnded {
    pub run: JobRunRow,
    pub notice: NoticeRow,
}

/// One claim of a job's due occurrences.
#[derive(Debug, Clone)]
pub struct Claim<'a> {
    pub job_id: i64,
    /// The `next_run_at` the claimant read: the claim is lost when it changed meanwhile.
    /// `None` for `run now`, which claims no scheduled occurrence.
    pub expected_next: Option<&'a str>,
    /// The job's next occurrence after the claim (`None`: none is left).
    pub new_next: Option<&'a str>,
    /// Occurrences recorded `missed`.
    pub missed: &'a [String],
    /// The run to start, if any.
    pub run: Option<RunPlan<'a>>,
}

/// A run a claim starts.
#[derive(Debug, Clone, Copy)]
pub struct RunPlan<'a> {
    pub scheduled_for: &'a str,
    pub catch_up: bool,
    pub manual: bool,
}

/// What a won claim did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claimed {
    /// The run the claim recorded (started, queued behind the previous run, or skipped).
    pub run: Option<JobRunRow>,
    /// Its session, when the run was started (its work item is queued).
    pub started_session: Option<i64>,
}

const JOB_COLUMNS: &str = "id, title, schedule, timezone, agent_id, prompt, run_context, client, \
     enabled, on_approval, approval_timeout_secs, on_overlap, on_downtime, next_run_at, \
     anchor_at, created_at, updated_at";

const RUN_COLUMNS: &str = "id, job_id, scheduled_for, state, catch_up, manual, session_id, \
     waiting_since, started_at, ended_at, input_tokens, output_tokens, cost_usd, reason";

/// A run not ended yet.
const ACTIVE: &str = "state IN ('queued', 'running', 'waiting')";

impl Store {
    pub async fn insert_job(&self, f: &JobFields<'_>) -> Result<JobRow, StoreError> {
        let now = self.now();
        let sql = format!(
            "INSERT INTO scheduled_jobs (title, schedule, timezone, agent_id, prompt, \
             run_context, client, enabled, on_approval, approval_timeout_secs, on_overlap, \
             on_downtime, next_run_at, anchor_at, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {JOB_COLUMNS}"
        );
        let mut tx = self.begin_write().await?;
        let row = bind_fields(sqlx::query_as::<_, JobRow>(&sql), f)
            .bind(&now)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await?;
        // Staged events learn the new job's id.
        self.commit_created(tx, Some(row.id)).await?;
        Ok(row)
    }

    /// Replaces a job's fields (its runs are untouched).
    pub async fn update_job(&self, id: i64, f: &JobFields<'_>) -> Result<JobRow, StoreError> {
        let sql = format!(
            "UPDATE scheduled_jobs SET title = ?, schedule = ?, timezone = ?, agent_id = ?, \
             prompt = ?, run_context = ?, client = ?, enabled = ?, on_approval = ?, \
             approval_timeout_secs = ?, on_overlap = ?, on_downtime = ?, next_run_at = ?, \
             anchor_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL \
             RETURNING {JOB_COLUMNS}"
        );
        let q = bind_fields(sqlx::query_as::<_, JobRow>(&sql), f).bind(self.now()).bind(id);
        self.write_job(id, q).await
    }

    /// Enables (with its next occurrence) or disables a job.
    pub async fn set_job_enabled(
        &self,
        id: i64,
        enabled: bool,
        next_run_at: Option<&str>,
    ) -> Result<JobRow, StoreError> {
        let sql = format!(
            "UPDATE scheduled_jobs SET enabled = ?, next_run_at = ?, updated_at = ? \
             WHERE id = ? AND deleted_at IS NULL RETURNING {JOB_COLUMNS}"
        );
        let q = sqlx::query_as::<_, JobRow>(&sql)
            .bind(enabled)
            .bind(next_run_at)
            .bind(self.now())
            .bind(id);
        self.write_job(id, q).await
    }

    /// Runs an `UPDATE … RETURNING` of job `id` in a write transaction; no row is `NotFound`.
    async fn write_job<'q>(&self, id: i64, q: JobQuery<'q>) -> Result<JobRow, StoreError> {
        let mut tx = self.begin_write().await?;
        let row =
            q.fetch_optional(&mut *tx).await?.ok_or(StoreError::NotFound { what: "job", id })?;
        self.commit(tx).await?;
        Ok(row)
    }

    /// Deletes a job. With `remove_history` its runs go too (returns how many); without, the job
    /// is hidden and disabled and its runs stay. Runs not ended are refused: kill them first.
    pub async fn delete_job(&self, id: i64, remove_history: bool) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        let active: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM job_runs WHERE job_id = ? AND {ACTIVE}"
        ))
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        let hidden = sqlx::query(
            "UPDATE scheduled_jobs SET enabled = 0, next_run_at = NULL, deleted_at = ?, \
             updated_at = ? WHERE id = ? AND deleted_at IS NULL",
        )
        .bind(self.now())
        .bind(self.now())
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if hidden.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "job", id });
        }
        if active > 0 {
            return Err(StoreError::Conflict(format!(
                "job {id} has {active} run(s) not ended: kill them first"
            )));
        }
        let mut removed = 0;
        if remove_history {
            removed = sqlx::query("DELETE FROM job_runs WHERE job_id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            sqlx::query("DELETE FROM scheduled_jobs WHERE id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        self.commit(tx).await?;
        Ok(removed)
    }

    /// A job not deleted.
    pub async fn job(&self, id: i64) -> Result<JobRow, StoreError> {
        let sql =
            format!("SELECT {JOB_COLUMNS} FROM scheduled_jobs WHERE id = ? AND deleted_at IS NULL");
        sqlx::query_as::<_, JobRow>(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "job", id })
    }

    /// A job, also one deleted with its history kept (its runs stay readable).
    pub async fn job_even_deleted(&self, id: i64) -> Result<JobRow, StoreError> {
        job_in(&mut *self.read().await?, id).await
    }

    /// Jobs with a run queued behind another (no session yet) while none of their runs with a
    /// session is active: the run it waited for has ended and nobody started it.
    pub async fn jobs_with_stranded_queued_run(&self) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(&format!(
            // `q.{ACTIVE}` spelled out lets the partial index of active runs answer it.
            "SELECT DISTINCT q.job_id FROM job_runs q WHERE q.{ACTIVE} AND q.state = 'queued' \
             AND q.session_id IS NULL AND NOT EXISTS (SELECT 1 FROM job_runs b \
             WHERE b.job_id = q.job_id AND b.session_id IS NOT NULL AND b.{ACTIVE}) \
             ORDER BY q.job_id"
        ))
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Every job not deleted, oldest first.
    pub async fn jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM scheduled_jobs WHERE deleted_at IS NULL ORDER BY id"
        );
        Ok(sqlx::query_as::<_, JobRow>(&sql).fetch_all(&mut *self.read().await?).await?)
    }

    /// Enabled jobs whose next occurrence is at or before `now` (the partial index answers it).
    pub async fn due_jobs(&self, now: &str) -> Result<Vec<JobRow>, StoreError> {
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM scheduled_jobs WHERE enabled = 1 \
             AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at"
        );
        Ok(sqlx::query_as::<_, JobRow>(&sql).bind(now).fetch_all(&mut *self.read().await?).await?)
    }

    /// Claims a job's due occurrences in one write transaction: the job's `next_run_at` moves
    /// on only from the value the claimant read, so of two processes one wins and the other
    /// changes nothing (`None`). Missed occurrences are recorded, and the run, if any, is
    /// started (its session created, its work item queued), queued behind the previous run or
    /// recorded `skipped`, as the job's overlap policy says.
    pub async fn claim_occurrences(&self, c: &Claim<'_>) -> Result<Option<Claimed>, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        if let Some(expected) = c.expected_next {
            // A job with no occurrence left (a one-shot) is disabled as its last one is claimed.
            let moved = sqlx::query(
                "UPDATE scheduled_jobs SET next_run_at = ?1, enabled = ?1 IS NOT NULL, \
                 updated_at = ?2 WHERE id = ?3 AND enabled = 1 AND next_run_at = ?4",
            )
            .bind(c.new_next)
            .bind(&now)
            .bind(c.job_id)
            .bind(expected)
            .execute(&mut *tx)
            .await?;
            if moved.rows_affected() == 0 {
                return Ok(None);
            }
        }
        let job = job_in(&mut tx, c.job_id).await?;
        for at in c.missed {
            sqlx::query(
                "INSERT INTO job_runs (job_id, scheduled_for, state, reason, created_at) \
                 VALUES (?, ?, 'missed', 'no Skald was running', ?) \
                 ON CONFLICT(job_id, scheduled_for) DO NOTHING",
            )
            .bind(c.job_id)
            .bind(at)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        let mut claimed = Claimed::default();
        if let Some(plan) = c.run {
            let active: Vec<(i64, Option<i64>)> = sqlx::query_as(&format!(
                "SELECT id, session_id FROM job_runs WHERE job_id = ? AND {ACTIVE} ORDER BY id"
            ))
            .bind(c.job_id)
            .fetch_all(&mut *tx)
            .await?;
            let (state, reason) = match active.iter().find(|(_, s)| s.is_some()) {
                None => ("queued", None),
                Some((prev, _)) if job.on_overlap == "queue_one" && active.len() == 1 => {
                    ("queued", Some(format!("queued behind run {prev}")))
                }
                Some((prev, _)) => ("skipped", Some(format!("run {prev} had not ended"))),
            };
            let sql = format!(
                "INSERT INTO job_runs (job_id, scheduled_for, state, catch_up, manual, reason, \
                 created_at) VALUES (?, ?, ?, ?, ?, ?, ?) \
                 ON CONFLICT(job_id, scheduled_for) DO NOTHING RETURNING {RUN_COLUMNS}"
            );
            let run: Option<JobRunRow> = sqlx::query_as(&sql)
                .bind(c.job_id)
                .bind(plan.scheduled_for)
                .bind(state)
                .bind(plan.catch_up)
                .bind(plan.manual)
                .bind(&reason)
                .bind(&now)
                .fetch_optional(&mut *tx)
                .await?;
            // The occurrence has its row already: someone claimed it (a manual run in the same
            // millisecond, a clock set back): nothing more to do.
            let Some(run) = run else { return Ok(None) };
            if state == "queued" && reason.is_none() {
                claimed.started_session = Some(start_run_in(&mut tx, &job, run.id, &now).await?);
            }
            claimed.run = Some(run_in(&mut tx, run.id).await?);
        }
        self.commit(tx).await?;
        Ok(Some(claimed))
    }

    /// Starts the run queued behind job `job_id`'s previous one, once none is active with a
    /// session. Returns its session when it started one.
    pub async fn start_queued_run(&self, job_id: i64) -> Result<Option<i64>, StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let busy: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM job_runs WHERE job_id = ? AND session_id IS NOT NULL AND {ACTIVE}"
        ))
        .bind(job_id)
        .fetch_one(&mut *tx)
        .await?;
        let next: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM job_runs WHERE job_id = ? AND state = 'queued' \
             AND session_id IS NULL ORDER BY id LIMIT 1",
        )
        .bind(job_id)
        .fetch_optional(&mut *tx)
        .await?;
        let (0, Some(run_id)) = (busy, next) else { return Ok(None) };
        let job = job_in(&mut tx, job_id).await?;
        let session = start_run_in(&mut tx, &job, run_id, &now).await?;
        self.commit(tx).await?;
        Ok(Some(session))
    }

    /// The run whose session is `session_id`, if the session is a job's run.
    pub async fn run_of_session(&self, session_id: i64) -> Result<Option<JobRunRow>, StoreError> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM job_runs WHERE session_id = ?");
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_optional(&mut *self.read().await?).await?)
    }

    pub async fn job_run(&self, id: i64) -> Result<JobRunRow, StoreError> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM job_runs WHERE id = ?");
        sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&mut *self.read().await?)
            .await?
            .ok_or(StoreError::NotFound { what: "job run", id })
    }

    /// A job's runs, newest first, at most `limit`.
    pub async fn job_runs(&self, job_id: i64, limit: u32) -> Result<Vec<JobRunRow>, StoreError> {
        let sql =
            format!("SELECT {RUN_COLUMNS} FROM job_runs WHERE job_id = ? ORDER BY id DESC LIMIT ?");
        Ok(sqlx::query_as(&sql)
            .bind(job_id)
            .bind(limit)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// A run's session was claimed by the worker: `running` (from queued, or from waiting when
    /// a decision continues it). `None` when the run has ended (killed, expired) or is no run.
    pub async fn mark_run_running(&self, session_id: i64) -> Result<Option<JobRunRow>, StoreError> {
        self.move_run(
            session_id,
            "state = 'running', started_at = COALESCE(started_at, ?1), waiting_since = NULL",
            "state IN ('queued', 'running', 'waiting')",
        )
        .await
    }

    /// A run parked on a person: `waiting`, from now. Each time it starts waiting, the home
    /// conversation is told (a notification in the same transaction): a person who is away
    /// learns in their next briefing that a job waits for them.
    pub async fn mark_run_waiting(&self, session_id: i64) -> Result<Option<JobRunRow>, StoreError> {
        let sql = format!(
            "UPDATE job_runs SET state = 'waiting', waiting_since = COALESCE(waiting_since, ?1) \
             WHERE session_id = ?2 AND state IN ('queued', 'running') RETURNING {RUN_COLUMNS}"
        );
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let row: Option<JobRunRow> =
            sqlx::query_as(&sql).bind(&now).bind(session_id).fetch_optional(&mut *tx).await?;
        if let Some(run) = &row {
            let title: String = sqlx::query_scalar("SELECT title FROM scheduled_jobs WHERE id = ?")
                .bind(run.job_id)
                .fetch_one(&mut *tx)
                .await?;
            let fact = NewNotification {
                origin: "job".into(),
                event_type: "job_run_waiting".into(),
                summary: format!(
                    "The scheduled job {title:?} waits for a person's decision (an approval or \
                     an answer) in the Inbox."
                ),
                session_id: Some(session_id),
                job_run_id: Some(run.id),
            };
            insert_notification_in(&mut tx, &fact, &now).await?;
        }
        self.commit(tx).await?;
        Ok(row)
    }

    async fn move_run(
        &self,
        session_id: i64,
        set: &str,
        from: &str,
    ) -> Result<Option<JobRunRow>, StoreError> {
        let sql = format!(
            "UPDATE job_runs SET {set} WHERE session_id = ?2 AND {from} RETURNING {RUN_COLUMNS}"
        );
        let mut tx = self.begin_write().await?;
        let row =
            sqlx::query_as(&sql).bind(self.now()).bind(session_id).fetch_optional(&mut *tx).await?;
        self.commit(tx).await?;
        Ok(row)
    }

    /// Ends run `id` as `state` (an end) with `reason`, its tokens and cost summed from its
    /// session, and writes its notice for the home conversation in the same transaction. Only
    /// a run not ended yet changes: `None` when it had ended already.
    pub async fn end_run(
        &self,
        id: i64,
        state: JobRunState,
        reason: Option<&str>,
    ) -> Result<Option<RunEnded>, StoreError> {
        let usage = "FROM chat_history WHERE role = 'assistant' AND session_stack_id IN \
             (SELECT s.id FROM chat_sessions_stack s WHERE s.session_id = job_runs.session_id)";
        let sql = format!(
            "UPDATE job_runs SET state = ?, reason = ?, ended_at = ?, waiting_since = NULL, \
             input_tokens = (SELECT COALESCE(SUM(input_tokens), 0) {usage}), \
             output_tokens = (SELECT COALESCE(SUM(output_tokens), 0) {usage}), \
             cost_usd = (SELECT SUM(cost) {usage}) \
             WHERE id = ? AND {ACTIVE} RETURNING {RUN_COLUMNS}"
        );
        let now = self.now();
        let mut tx = self.begin_write().await?;
        let row: Option<JobRunRow> = sqlx::query_as(&sql)
            .bind(state.as_str())
            .bind(reason)
            .bind(&now)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(run) = row else { return Ok(None) };
        let notice =
            insert_run_notice(&mut tx, run.id, run.job_id, run.session_id, state, reason, &now)
                .await?;
        self.commit(tx).await?;
        Ok(Some(RunEnded { run, notice }))
    }

    /// Runs waiting for a person whose job has an approval timeout, with that timeout in
    /// seconds.
    pub async fn waiting_runs_with_timeout(&self) -> Result<Vec<(JobRunRow, i64)>, StoreError> {
        let sql = format!(
            "SELECT {}, j.approval_timeout_secs AS timeout FROM job_runs r \
             JOIN scheduled_jobs j ON j.id = r.job_id WHERE r.state = 'waiting' \
             AND j.approval_timeout_secs IS NOT NULL",
            RUN_COLUMNS.split(", ").map(|c| format!("r.{c}")).collect::<Vec<_>>().join(", ")
        );
        #[derive(FromRow)]
        struct Row {
            #[sqlx(flatten)]
            run: JobRunRow,
            timeout: i64,
        }
        let rows: Vec<Row> = sqlx::query_as(&sql).fetch_all(&mut *self.read().await?).await?;
        Ok(rows.into_iter().map(|r| (r.run, r.timeout)).collect())
    }

    /// Sessions of runs that are queued or running (not waiting for a person: a decision
    /// continues those): what a stopped or dead engine left to continue.
    pub async fn unfinished_run_sessions(&self) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT session_id FROM job_runs WHERE state IN ('queued', 'running') \
             AND session_id IS NOT NULL ORDER BY id",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Each job's newest run, by job id.
    pub async fn last_runs(&self) -> Result<Vec<JobRunRow>, StoreError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM job_runs WHERE id IN \
             (SELECT MAX(id) FROM job_runs GROUP BY job_id)"
        );
        Ok(sqlx::query_as(&sql).fetch_all(&mut *self.read().await?).await?)
    }
}

type JobQuery<'q> = sqlx::query::QueryAs<'q, sqlx::Sqlite, JobRow, SqliteArguments<'q>>;

fn bind_fields<'q>(q: JobQuery<'q>, f: &JobFields<'q>) -> JobQuery<'q> {
    q.bind(f.title)
        .bind(f.schedule)
        .bind(f.timezone)
        .bind(f.agent_id)
        .bind(f.prompt)
        .bind(f.run_context)
        .bind(f.client)
        .bind(f.enabled)
        .bind(f.on_approval)
        .bind(f.approval_timeout_secs)
        .bind(f.on_overlap)
        .bind(f.on_downtime)
        .bind(f.next_run_at)
        .bind(f.anchor_at)
}

async fn job_in(conn: &mut SqliteConnection, id: i64) -> Result<JobRow, StoreError> {
    let sql = format!("SELECT {JOB_COLUMNS} FROM scheduled_jobs WHERE id = ?");
    sqlx::query_as::<_, JobRow>(&sql)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .ok_or(StoreError::NotFound { what: "job", id })
}

async fn run_in(conn: &mut SqliteConnection, id: i64) -> Result<JobRunRow, StoreError> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM job_runs WHERE id = ?");
    Ok(sqlx::query_as(&sql).bind(id).fetch_one(conn).await?)
}

/// A run's session: source `cron`, not interactive, the job's agent, RunContext and client,
/// labelled with the job; the prompt is its first message and its run is a queued work item.
async fn start_run_in(
    conn: &mut SqliteConnection,
    job: &JobRow,
    run_id: i64,
    now: &str,
) -> Result<i64, StoreError> {
    let new = NewSession {
        source: "cron".to_string(),
        agent_id: job.agent_id.clone(),
        title: Some(job.title.clone()),
        is_interactive: false,
        is_ephemeral: true,
        run_context: job.run_context.clone(),
        auto_deny_approvals: job.on_approval == "deny",
        context_label: Some(format!("Job: {}", job.title)),
    };
    let created = insert_run_session(&mut *conn, &new, &job.prompt, false, now).await?;
    sqlx::query("UPDATE chat_sessions SET client = ? WHERE id = ?")
        .bind(&job.client)
        .bind(created.session_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE job_runs SET session_id = ?, reason = NULL WHERE id = ?")
        .bind(created.session_id)
        .bind(run_id)
        .execute(&mut *conn)
        .await?;
    Ok(created.session_id)
}
