-- Paged session history: the frames a tool call spawned are found through this index, so a
-- window of the session tree (messages of a frame, their calls, the calls' child frames, each
-- keyset-paged on row ids) reads only the rows of its page. Messages page through
-- idx_history_stack and calls through idx_tools_message.
CREATE INDEX idx_stack_parent_call ON chat_sessions_stack(parent_tool_call_id, id);
