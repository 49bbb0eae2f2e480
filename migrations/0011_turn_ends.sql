-- How each turn ended, one row per run of a turn (a turn that parked and was continued later has
-- one row per run). Written before `turn_ended` is sent, so a reloaded client shows why a turn
-- ended from this row, never from message text.
CREATE TABLE turn_ends (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    stack_id INTEGER NOT NULL REFERENCES chat_sessions_stack(id),
    outcome TEXT NOT NULL
        CHECK (outcome IN ('final', 'cancelled', 'exhausted', 'parked', 'failed')),
    -- `final`: the answer row.
    message_id INTEGER NULL REFERENCES chat_history(id),
    -- `exhausted`: the round limit that was used up.
    rounds INTEGER NULL,
    -- `parked`: the waiting call ids, a JSON array.
    tool_call_ids TEXT NULL,
    -- `failed`: what went wrong.
    reason TEXT NULL,
    -- The newest history row of the session when the turn ended: where the end goes in the
    -- transcript.
    after_message_id INTEGER NULL,
    ended_at TEXT NOT NULL,
    CHECK ((outcome = 'final') = (message_id IS NOT NULL)),
    CHECK ((outcome = 'exhausted') = (rounds IS NOT NULL)),
    CHECK ((outcome = 'parked') = (tool_call_ids IS NOT NULL)),
    CHECK ((outcome = 'failed') = (reason IS NOT NULL))
);
CREATE INDEX idx_turn_ends_session ON turn_ends(session_id, id);
