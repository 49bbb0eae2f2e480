-- Sessions, sources, agent call frames, messages and tool calls: the durable session log.
-- Timestamps are RFC 3339 UTC strings with millisecond precision, written by the engine's clock.

CREATE TABLE chat_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NULL,
    source TEXT NOT NULL DEFAULT 'web',
    agent_id TEXT NOT NULL DEFAULT 'main',
    is_interactive INTEGER NOT NULL DEFAULT 1 CHECK (is_interactive IN (0, 1)),
    is_ephemeral INTEGER NOT NULL DEFAULT 0 CHECK (is_ephemeral IN (0, 1)),
    run_context TEXT NULL,
    auto_deny_approvals INTEGER NOT NULL DEFAULT 0 CHECK (auto_deny_approvals IN (0, 1)),
    context_label TEXT NULL,
    scratchpad_session_id INTEGER NULL REFERENCES chat_sessions(id),
    created_at TEXT NOT NULL
);
CREATE INDEX idx_sessions_source ON chat_sessions(source, id);

CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    active_session_id INTEGER NULL REFERENCES chat_sessions(id),
    updated_at TEXT NOT NULL
);

CREATE TABLE chat_sessions_stack (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    agent_id TEXT NOT NULL DEFAULT 'main',
    agent_prompt TEXT NULL,
    depth INTEGER NOT NULL DEFAULT 0 CHECK (depth >= 0),
    -- The spawning tool call; NULL for the root frame. Not a declared FK because the tool table
    -- references messages of this very table family and SQLite cannot defer the cycle cleanly.
    parent_tool_call_id INTEGER NULL,
    terminated_at TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_stack_session ON chat_sessions_stack(session_id);

CREATE TABLE chat_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'agent')),
    content TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'failed')),
    input_tokens INTEGER NULL,
    output_tokens INTEGER NULL,
    cache_read_tokens INTEGER NULL,
    cache_write_tokens INTEGER NULL,
    duration_ms INTEGER NULL,
    model TEXT NULL,
    is_synthetic INTEGER NOT NULL DEFAULT 0 CHECK (is_synthetic IN (0, 1)),
    reasoning_content TEXT NULL,
    cost REAL NULL,
    metadata TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_history_stack ON chat_history(session_stack_id, id);

CREATE TABLE chat_llm_tools (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL REFERENCES chat_history(id),
    name TEXT NOT NULL,
    arguments TEXT NULL,
    result TEXT NULL,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'done', 'failed', 'cancelled', 'rejected')),
    result_type TEXT NOT NULL DEFAULT 'string' CHECK (result_type IN ('string', 'json')),
    preview_old TEXT NULL,
    preview_new TEXT NULL,
    provider_call_id TEXT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_tools_message ON chat_llm_tools(message_id);
CREATE INDEX idx_tools_open ON chat_llm_tools(status) WHERE status IN ('pending', 'running');
