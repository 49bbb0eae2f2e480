-- Notifications: facts background work reports to the person (a job's run ended, a TIC tick's
-- `notify`), written in the transaction of the work that reports them. The briefing service
-- delivers what is not delivered yet to the home source's session as one `briefing` input of the
-- root inbox, marking the batch delivered in that input's transaction, so a batch is delivered
-- exactly once whichever process (or crash) comes first.
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Who reports: `job` (a scheduled job's run), `tic` (a tick's agent), `task` (an agent's own).
    origin TEXT NOT NULL,
    -- What happened, e.g. `job_run_failed`, `notify`.
    event_type TEXT NOT NULL,
    -- A neutral, third-person fact (the home agent writes the user-facing wording); capped.
    summary TEXT NOT NULL,
    -- The session the fact is about (its run, its tick), for "open it".
    session_id INTEGER NULL,
    job_run_id INTEGER NULL,
    created_at TEXT NOT NULL,
    -- The root-inbox input that delivered it, the session it went to, and when.
    briefing_input_id INTEGER NULL,
    delivered_session_id INTEGER NULL,
    delivered_at TEXT NULL
);
CREATE INDEX idx_notifications_undelivered ON notifications(id) WHERE delivered_at IS NULL;
CREATE INDEX idx_notifications_session ON notifications(session_id);

-- Settings a person changes from any surface and every process reads: `source_home`, the source
-- whose session receives briefings (`/sethome`; `web` when unset).
CREATE TABLE app_settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
