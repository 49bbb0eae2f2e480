-- Async tasks (`execute_task` mode=async): a child session the engine's background runner drives,
-- linked to the parent session and the spawning call. Its report is recorded here when the child
-- ends and folded into the parent exactly once (`delivered_message_id` set in the same write).

CREATE TABLE async_tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    parent_tool_call_id INTEGER NOT NULL UNIQUE,
    child_session_id INTEGER NOT NULL UNIQUE REFERENCES chat_sessions(id),
    agent_id TEXT NOT NULL,
    label TEXT NOT NULL,
    -- queued: waiting for a slot; running: the runner drives it; the rest are ends.
    status TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    report TEXT NULL,
    reported_at TEXT NULL,
    -- The parent's history row the report became; NULL until delivered (reset by a continue).
    delivered_message_id INTEGER NULL,
    delivered_at TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_async_tasks_parent ON async_tasks(parent_session_id, id);
CREATE INDEX idx_async_tasks_open ON async_tasks(status) WHERE status IN ('queued', 'running');
