-- Questions an MCP server asks the user during a call (elicitation/create, form mode), shown in the
-- Agent Inbox. One answer each, from any process. `form` is the form as Skald shows it (a secret
-- field's default is never in it); `answer` keeps the accepted values with each secret replaced by
-- `true` (a value was given): secrets are handed to the server from memory, never stored.
CREATE TABLE mcp_elicitations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_call_id INTEGER NOT NULL REFERENCES chat_llm_tools(id),
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    server TEXT NOT NULL,
    form TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- NULL while open; then accept | decline | cancel.
    action TEXT,
    answer TEXT,
    decided_by TEXT,
    decided_at TEXT
);
CREATE INDEX idx_mcp_elicitations_open ON mcp_elicitations(action, created_at);
