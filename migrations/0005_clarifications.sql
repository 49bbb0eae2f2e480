-- Questions an agent asks the user (ask_user_clarification) and their answers. Like approvals:
-- the call stays `pending` while the question is open; one answer per question, from any process.
CREATE TABLE clarification_questions (
    tool_call_id INTEGER PRIMARY KEY REFERENCES chat_llm_tools(id),
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    title TEXT NOT NULL,
    question TEXT NOT NULL,
    suggested_answers TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_clarification_questions_session ON clarification_questions(session_id);

CREATE TABLE clarification_answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_call_id INTEGER NOT NULL UNIQUE REFERENCES chat_llm_tools(id),
    answer TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    created_at TEXT NOT NULL
);
