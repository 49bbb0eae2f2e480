-- Scheduled jobs and their runs. An occurrence is claimed by advancing the job's `next_run_at`
-- from the value the claimant read (a compare-and-set) and inserting its run, in one write
-- transaction; UNIQUE (job_id, scheduled_for) keeps an occurrence to one row whatever races.
-- A run's session is an ordinary work-queue item: claimed once, parked runs hold no lease.
CREATE TABLE scheduled_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    -- The schedule as JSON (`{"kind":"cron","expr":...}`, `once`, `every`), validated on write.
    schedule TEXT NOT NULL,
    timezone TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    prompt TEXT NOT NULL,
    run_context TEXT NULL,
    client TEXT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    on_approval TEXT NOT NULL DEFAULT 'wait' CHECK (on_approval IN ('wait', 'deny')),
    approval_timeout_secs INTEGER NULL,
    on_overlap TEXT NOT NULL DEFAULT 'skip' CHECK (on_overlap IN ('skip', 'queue_one')),
    on_downtime TEXT NOT NULL DEFAULT 'catch_up_once'
        CHECK (on_downtime IN ('catch_up_once', 'skip')),
    -- The next occurrence (RFC 3339 UTC); NULL when disabled or none is left.
    next_run_at TEXT NULL,
    -- Where a plain interval counts from (creation, or the last edit of the schedule).
    anchor_at TEXT NOT NULL,
    -- Deleted with its history kept: hidden from the list, its runs stay.
    deleted_at TEXT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_scheduled_jobs_due ON scheduled_jobs(next_run_at)
    WHERE enabled = 1 AND next_run_at IS NOT NULL;

CREATE TABLE job_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL REFERENCES scheduled_jobs(id),
    scheduled_for TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'waiting', 'done', 'failed',
        'killed', 'expired', 'skipped', 'missed')),
    catch_up INTEGER NOT NULL DEFAULT 0,
    manual INTEGER NOT NULL DEFAULT 0,
    -- NULL for a recorded-only occurrence, and for a run queued behind the job's previous run.
    session_id INTEGER NULL REFERENCES chat_sessions(id),
    -- Since when the run waits for a person (the job's approval timeout counts from here).
    waiting_since TEXT NULL,
    started_at TEXT NULL,
    ended_at TEXT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NULL,
    reason TEXT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (job_id, scheduled_for)
);
CREATE UNIQUE INDEX idx_job_runs_session ON job_runs(session_id) WHERE session_id IS NOT NULL;
CREATE INDEX idx_job_runs_active ON job_runs(job_id)
    WHERE state IN ('queued', 'running', 'waiting');
CREATE INDEX idx_job_runs_waiting ON job_runs(waiting_since) WHERE state = 'waiting';
