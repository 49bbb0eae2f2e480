-- The process group of each `execute_cmd` command while it runs, so an engine that opens after a
-- crash can kill what the dead engine left running (grandchildren included). A row is removed when
-- its command ends; a row whose owner is dead is reaped at the next engine open. Start times are
-- the kernel's (clock ticks since boot, /proc/<pid>/stat field 22): a pid reused by an unrelated
-- process never matches, so it is never killed. NULL where the platform does not tell.
CREATE TABLE tool_processes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The call that runs the command (NULL for a command run outside a recorded call).
    tool_call_id INTEGER NULL,
    pgid INTEGER NOT NULL,
    leader_pid INTEGER NOT NULL,
    leader_start_ticks INTEGER NULL,
    -- The engine process that started the command.
    owner_pid INTEGER NOT NULL,
    owner_start_ticks INTEGER NULL,
    started_at TEXT NOT NULL
);

-- Calls that were `running` when their process ended and are not safe to run again (decision 3):
-- the model was told they were interrupted; the user says what really happened. `choice` is set
-- once (the first reconciliation wins); for `run_again` the re-run's outcome follows it.
CREATE TABLE interrupted_calls (
    tool_call_id INTEGER PRIMARY KEY REFERENCES chat_llm_tools(id) ON DELETE CASCADE,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    flagged_at TEXT NOT NULL,
    choice TEXT NULL CHECK (choice IN ('ran', 'did_not_run', 'run_again')),
    decided_by TEXT NULL,
    decided_at TEXT NULL,
    -- `run_again`: how the re-run ended and its result text (NULL while it runs).
    rerun_status TEXT NULL CHECK (rerun_status IN ('done', 'failed', 'rejected', 'cancelled')),
    rerun_result TEXT NULL,
    -- The history row that told the model what the user confirmed.
    note_message_id INTEGER NULL REFERENCES chat_history(id),
    CHECK ((choice IS NULL) = (decided_at IS NULL)),
    CHECK (rerun_status IS NULL OR choice = 'run_again')
);
CREATE INDEX idx_interrupted_session ON interrupted_calls(session_id, tool_call_id);
