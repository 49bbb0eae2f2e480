-- The LLM client pinned for a session's root agent: set when a delegation named one (an async
-- task started with `client`), so every run of the task's session, after a restart too, uses
-- it. NULL: the agent's own client, scope and strength decide.
ALTER TABLE chat_sessions ADD COLUMN client TEXT NULL;
