-- What was written to the memory files in the data dir's `memory/`: each agent write (the
-- `memory_write` call that made it, with its session) and each save from the Memory page, with
-- the file's whole content before (NULL: the file did not exist) and after. The diff is computed
-- from the two when shown; an agent's edit is undone by writing `before` back, only while the
-- file still holds `after`.
CREATE TABLE memory_edits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Relative to `memory/`, with `/` separators.
    path TEXT NOT NULL,
    -- 'agent' (a tool call) or 'user' (the Memory page, the CLI).
    author TEXT NOT NULL CHECK (author IN ('agent', 'user')),
    session_id INTEGER NULL,
    tool_call_id INTEGER NULL,
    agent_id TEXT NULL,
    before_content TEXT NULL,
    after_content TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- Set when the edit was undone from the Memory page.
    undone_at TEXT NULL
);
CREATE INDEX idx_memory_edits_path ON memory_edits(path, id);
