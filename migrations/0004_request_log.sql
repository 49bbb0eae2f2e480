-- Opt-in log of the exact request the model received for each round (llm.request_log), so the
-- session debug view can show it. Purged after llm.request_log.retention_days.
CREATE TABLE llm_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    -- The assistant row the request produced.
    message_id INTEGER NULL REFERENCES chat_history(id),
    model TEXT NOT NULL,
    request_json TEXT NOT NULL,
    duration_ms INTEGER NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_llm_requests_message ON llm_requests(message_id);
CREATE INDEX idx_llm_requests_created ON llm_requests(created_at);
