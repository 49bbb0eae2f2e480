-- Approval policy (groups, rules, which seeds were ever inserted), parked calls with what the
-- human reviews, and the human decisions (single assignment: one decision per call).

CREATE TABLE tool_permission_groups (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO tool_permission_groups (id, name, description, created_at)
VALUES ('default', 'Default', 'Rules every session is checked against', '1970-01-01T00:00:00.000Z');

CREATE TABLE approval_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id TEXT NOT NULL DEFAULT 'default' REFERENCES tool_permission_groups(id),
    agent_id TEXT NULL,
    source TEXT NULL,
    tool_pattern TEXT NOT NULL,
    path_pattern TEXT NULL,
    action TEXT NOT NULL CHECK (action IN ('allow', 'require', 'deny')),
    note TEXT NULL,
    priority INTEGER NOT NULL DEFAULT 100,
    seed_key TEXT NULL UNIQUE,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_approval_rules_group ON approval_rules(group_id, priority, id);

-- A seed is inserted once, ever: a rule the user edited or deleted is never brought back.
CREATE TABLE approval_seeds (
    seed_key TEXT PRIMARY KEY,
    seeded_at TEXT NOT NULL
);

CREATE TABLE approval_requests (
    tool_call_id INTEGER PRIMARY KEY REFERENCES chat_llm_tools(id),
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    kind TEXT NOT NULL CHECK (kind IN ('write', 'command', 'tool')),
    tool_name TEXT NOT NULL,
    -- The exact arguments the human reviews; what runs after approval.
    arguments TEXT NOT NULL,
    path TEXT NULL,
    command TEXT NULL,
    workdir TEXT NULL,
    diff TEXT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_approval_requests_session ON approval_requests(session_id);

CREATE TABLE approval_decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_call_id INTEGER NOT NULL UNIQUE REFERENCES chat_llm_tools(id),
    approved INTEGER NOT NULL CHECK (approved IN (0, 1)),
    note TEXT NULL,
    decided_by TEXT NOT NULL,
    bypass_secs INTEGER NULL,
    bypass_scope TEXT NULL,
    created_at TEXT NOT NULL
);
