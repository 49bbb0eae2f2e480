-- Search indexing leaves the write path (issue 22): a new message or tool call is no longer
-- indexed by a trigger inside the transaction that writes it. The indexes are brought up to
-- date by a catch-up step (`Store::index_pending`) that indexes the rows above a watermark in
-- batches, in its own transaction, and that every search runs first, so a search still sees
-- every row committed before it starts.
--
-- The watermark: every message with an id at or below `messages_upto` is in message_fts, every
-- call at or below `calls_upto` in tool_fts, and nothing above them is. Ids only grow
-- (AUTOINCREMENT), so the rows above are exactly the ones still to index.
CREATE TABLE search_index_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    messages_upto INTEGER NOT NULL,
    calls_upto INTEGER NOT NULL
);

-- Until now the triggers indexed every row as it was written: the whole table is indexed.
INSERT INTO search_index_state (id, messages_upto, calls_upto)
VALUES (
    1,
    COALESCE((SELECT MAX(id) FROM chat_history), 0),
    COALESCE((SELECT MAX(id) FROM chat_llm_tools), 0)
);

-- The triggers now keep only indexed rows (at or below the watermark) in step: an edit or a
-- delete of such a row must reach its index at once, with the old values that were indexed.
-- A row above the watermark is read as it is when the catch-up indexes it, so changing or
-- deleting it needs nothing. An insert at or below the watermark (an id given explicitly) is
-- indexed at once, since the catch-up never looks there. On the path of every write, what is
-- left is one read of this one-row table per inserted row.
DROP TRIGGER message_fts_insert;
DROP TRIGGER message_fts_delete;
DROP TRIGGER message_fts_update;
DROP TRIGGER tool_fts_insert;
DROP TRIGGER tool_fts_delete;
DROP TRIGGER tool_fts_update;

CREATE TRIGGER message_fts_insert AFTER INSERT ON chat_history
WHEN new.id <= (SELECT messages_upto FROM search_index_state) BEGIN
    INSERT INTO message_fts (rowid, content, reasoning_content)
    VALUES (new.id, new.content, new.reasoning_content);
END;

CREATE TRIGGER message_fts_delete AFTER DELETE ON chat_history
WHEN old.id <= (SELECT messages_upto FROM search_index_state) BEGIN
    INSERT INTO message_fts (message_fts, rowid, content, reasoning_content)
    VALUES ('delete', old.id, old.content, old.reasoning_content);
END;

CREATE TRIGGER message_fts_update AFTER UPDATE OF content, reasoning_content ON chat_history
WHEN old.id <= (SELECT messages_upto FROM search_index_state) BEGIN
    INSERT INTO message_fts (message_fts, rowid, content, reasoning_content)
    VALUES ('delete', old.id, old.content, old.reasoning_content);
    INSERT INTO message_fts (rowid, content, reasoning_content)
    VALUES (new.id, new.content, new.reasoning_content);
END;

CREATE TRIGGER tool_fts_insert AFTER INSERT ON chat_llm_tools
WHEN new.id <= (SELECT calls_upto FROM search_index_state) BEGIN
    INSERT INTO tool_fts (rowid, name, path, command)
    SELECT id, name, path, command FROM tool_search_doc WHERE id = new.id;
END;

CREATE TRIGGER tool_fts_delete AFTER DELETE ON chat_llm_tools
WHEN old.id <= (SELECT calls_upto FROM search_index_state) BEGIN
    DELETE FROM tool_fts WHERE rowid = old.id;
END;

CREATE TRIGGER tool_fts_update AFTER UPDATE OF name, arguments ON chat_llm_tools
WHEN old.id <= (SELECT calls_upto FROM search_index_state) BEGIN
    DELETE FROM tool_fts WHERE rowid = old.id;
    INSERT INTO tool_fts (rowid, name, path, command)
    SELECT id, name, path, command FROM tool_search_doc WHERE id = new.id;
END;
