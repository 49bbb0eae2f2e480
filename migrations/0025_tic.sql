-- TIC: what MCP servers kept connected push on their own (notifications that are neither log
-- messages, list changes nor progress), and the periodic ticks that read them in batches.
-- A server's params come from a program we do not control: they are cut before they are
-- stored, and the engine keeps at most a fixed number of unprocessed rows (the oldest go).
CREATE TABLE mcp_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    server TEXT NOT NULL,
    -- The JSON-RPC method, e.g. `notifications/resources/updated` or a server's `event/...`.
    method TEXT NOT NULL,
    -- The params as JSON, or a JSON string holding the cut text when they were too large.
    params TEXT NULL,
    received_at TEXT NOT NULL,
    -- Set with `tick_id` by the tick that took the event, in the tick's claim transaction.
    processed_at TEXT NULL,
    tick_id INTEGER NULL REFERENCES tic_ticks(id)
);
CREATE INDEX idx_mcp_events_pending ON mcp_events(id) WHERE tick_id IS NULL;
CREATE INDEX idx_mcp_events_tick ON mcp_events(tick_id) WHERE tick_id IS NOT NULL;

-- One row per tick that took events (and per manual run). A tick is claimed by inserting its
-- row: `slot` (the start of the interval it belongs to, or the time of a manual run) is UNIQUE,
-- so of several engines on one data dir only one takes a slot; the partial unique index on
-- running ticks keeps two ticks from running at once.
CREATE TABLE tic_ticks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slot TEXT NOT NULL UNIQUE,
    manual INTEGER NOT NULL DEFAULT 0 CHECK (manual IN (0, 1)),
    -- `empty`: the slot had nothing new; no session was made and no model was asked.
    state TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'cancelled', 'empty')),
    events INTEGER NOT NULL DEFAULT 0,
    -- The servers whose events the tick read (JSON array of names).
    servers TEXT NOT NULL DEFAULT '[]',
    session_id INTEGER NULL REFERENCES chat_sessions(id),
    started_at TEXT NOT NULL,
    ended_at TEXT NULL,
    reason TEXT NULL
);
CREATE UNIQUE INDEX idx_tic_ticks_running ON tic_ticks(state) WHERE state = 'running';
CREATE UNIQUE INDEX idx_tic_ticks_session ON tic_ticks(session_id) WHERE session_id IS NOT NULL;
