-- The change a write tool made, recorded when the call finished: a JSON `FileDiff` (path, hunks,
-- counts, unified text), shown under the call in the chat and the session tree. NULL for calls
-- that changed no file.
ALTER TABLE chat_llm_tools ADD COLUMN file_diff TEXT;
