-- What a running session needs besides messages: summaries, scratchpad, todos, tool-group grants,
-- steers (messages sent during a turn) and the marker of the process running a turn.

CREATE TABLE chat_summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    content TEXT NOT NULL,
    -- Every chat_history.id <= this is represented by the summary.
    covers_up_to_message_id INTEGER NOT NULL,
    tokens_before INTEGER NULL,
    tokens_after INTEGER NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_chat_summaries_stack ON chat_summaries(stack_id, id);

CREATE TABLE session_scratchpad (
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);

CREATE TABLE stack_todos (
    stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    position INTEGER NOT NULL,
    content TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed')),
    PRIMARY KEY (stack_id, position)
);

CREATE TABLE session_mcp_grants (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    mcp_name TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    UNIQUE (session_id, mcp_name)
);

CREATE TABLE stack_mcp_grants (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    mcp_name TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    UNIQUE (stack_id, mcp_name)
);

-- A message sent while a turn runs. Folding it into chat_history sets consumed_message_id in the
-- same transaction; /stop sets discarded_at. Rows are never deleted (the debug view shows them).
CREATE TABLE pending_inputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    content TEXT NOT NULL,
    metadata TEXT NULL,
    is_synthetic INTEGER NOT NULL DEFAULT 0 CHECK (is_synthetic IN (0, 1)),
    created_at TEXT NOT NULL,
    consumed_message_id INTEGER NULL REFERENCES chat_history(id),
    discarded_at TEXT NULL
);
CREATE INDEX idx_pending_inputs_open ON pending_inputs(session_id, id)
    WHERE consumed_message_id IS NULL AND discarded_at IS NULL;

-- One active runner per session, visible to every process: `skald stop` from another process sets
-- cancel_requested_at and the runner notices it.
CREATE TABLE session_runners (
    session_id INTEGER PRIMARY KEY REFERENCES chat_sessions(id),
    runner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    cancel_requested_at TEXT NULL
);
