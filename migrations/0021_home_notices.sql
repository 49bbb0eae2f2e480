-- What the home conversation shows about background work: today, each scheduled job's run that
-- ended (done, failed, expired, killed), with the first lines of its answer or the reason it did
-- not finish. Written in the transaction that ends the run, so a run's end and its notice are
-- stored together. The ambient work turns these into briefings; until then the chat lists them.
CREATE TABLE home_notices (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- One notice per run; it goes with the run when a job is deleted with its history.
    job_run_id INTEGER NOT NULL UNIQUE REFERENCES job_runs(id) ON DELETE CASCADE,
    job_id INTEGER NOT NULL,
    -- The job's title when the run ended (the job may be renamed or deleted later).
    job_title TEXT NOT NULL,
    state TEXT NOT NULL,
    -- The first lines of the run's answer, or why it did not finish.
    summary TEXT NOT NULL,
    session_id INTEGER NULL,
    created_at TEXT NOT NULL,
    -- Set when the person dismissed it from the chat.
    dismissed_at TEXT NULL
);
CREATE INDEX idx_home_notices_open ON home_notices(id) WHERE dismissed_at IS NULL;
