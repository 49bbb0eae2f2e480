-- Bypasses a human granted: while a row is active (not revoked, not expired), calls of its session
-- that its scope covers run without asking; deny rules still apply. Rows, not memory, so a bypass
-- granted by any process (app, `skald serve`, `skald approve`) counts in every process at once.
CREATE TABLE approval_bypasses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    scope_kind TEXT NOT NULL CHECK (scope_kind IN ('all', 'category', 'mcp_server')),
    -- The category (`filesystem`, `shell`, `session`) or the MCP server; NULL exactly for `all`.
    scope_value TEXT NULL,
    duration TEXT NOT NULL CHECK (duration IN ('fifteen_minutes', 'one_hour', 'session')),
    granted_by TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    -- Every bypass ends: "this session" ones after 24 h at the latest.
    expires_at TEXT NOT NULL,
    revoked_at TEXT NULL,
    revoked_by TEXT NULL,
    -- The call it was approved with (NULL for `skald chat --approve-all`).
    tool_call_id INTEGER NULL REFERENCES chat_llm_tools(id),
    CHECK ((scope_kind = 'all') = (scope_value IS NULL)),
    CHECK (expires_at > granted_at)
);
CREATE INDEX idx_approval_bypasses_session ON approval_bypasses(session_id, expires_at);

-- A decision no longer carries a bypass request: the grant is a row above, written in the same
-- transaction as the decision.
ALTER TABLE approval_decisions DROP COLUMN bypass_secs;
ALTER TABLE approval_decisions DROP COLUMN bypass_scope;
