-- Full-text search (issue 14): two FTS5 indexes kept in sync by triggers, filled here for the
-- rows that already exist.
--
-- message_fts: the words of every message (user, assistant, sub-agent prompts) and the model's
-- reasoning. unicode61 with diacritics folded, so `cafe` finds `café`; prefix indexes of 2 and 3
-- characters keep "the last word as you type" queries (`sessi*`) fast. External content: the text
-- stays only in chat_history, the index holds tokens. Messages are prose, ranked by bm25; a hit in
-- the reasoning counts less than one in the text the user saw.
CREATE VIRTUAL TABLE message_fts USING fts5(
    content,
    reasoning_content,
    content = 'chat_history',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
);
INSERT INTO message_fts (message_fts, rank) VALUES ('rank', 'bm25(1.0, 0.4)');

-- An external-content index must be told the exact old text on delete and update; the triggers
-- pass the row's old values, which are what was indexed.
CREATE TRIGGER message_fts_insert AFTER INSERT ON chat_history BEGIN
    INSERT INTO message_fts (rowid, content, reasoning_content)
    VALUES (new.id, new.content, new.reasoning_content);
END;

CREATE TRIGGER message_fts_delete AFTER DELETE ON chat_history BEGIN
    INSERT INTO message_fts (message_fts, rowid, content, reasoning_content)
    VALUES ('delete', old.id, old.content, old.reasoning_content);
END;

-- Only a change of the indexed text re-indexes: a status flip (`failed`) costs nothing.
CREATE TRIGGER message_fts_update AFTER UPDATE OF content, reasoning_content ON chat_history BEGIN
    INSERT INTO message_fts (message_fts, rowid, content, reasoning_content)
    VALUES ('delete', old.id, old.content, old.reasoning_content);
    INSERT INTO message_fts (rowid, content, reasoning_content)
    VALUES (new.id, new.content, new.reasoning_content);
END;

INSERT INTO message_fts (message_fts) VALUES ('rebuild');

-- What a tool call is found by: its name, the files, directories and URLs it names, and its
-- command line, taken from the arguments the model wrote. One definition, read by the trigger for
-- new calls and by the rebuild below, so old and new rows are indexed alike. The keys are those of
-- the built-in tools (`path`, `command`) and the usual MCP spellings; a value may be a string or
-- an array of strings. Arguments that are not valid JSON (the model's text is stored as written)
-- contribute nothing instead of failing the insert. Results are not indexed: they are mostly
-- copies of files and command output (a `read_file` of a module would make every identifier in it
-- a hit), they can be megabytes, and the result is written on the hot path of every call.
CREATE VIEW tool_search_doc AS
SELECT
    id,
    name,
    (SELECT group_concat(v.value, char(10))
       FROM json_each(args) k, json_each(args, k.fullkey) v
      WHERE k.key IN ('path', 'paths', 'file', 'files', 'file_path', 'filename', 'directory',
                      'dir', 'cwd', 'workdir', 'source', 'destination', 'url', 'uri')
        AND v.type = 'text') AS path,
    (SELECT group_concat(v.value, ' ')
       FROM json_each(args) k, json_each(args, k.fullkey) v
      WHERE k.key IN ('command', 'cmd') AND v.type = 'text') AS command
FROM (SELECT id, name, CASE WHEN json_valid(arguments) THEN arguments END AS args
        FROM chat_llm_tools);

-- tool_fts: trigram, because names, paths and commands are identifiers, not words: `ssions.rs`,
-- `nextest` or `src/repo` must match in the middle of `crates/skald-store/src/repo/sessions.rs`.
-- Trigram indexes are large per character, which is affordable for these short strings and not
-- for message text. It stores its own copy of the (short) extracted strings, so a delete needs
-- only the rowid.
CREATE VIRTUAL TABLE tool_fts USING fts5(
    name,
    path,
    command,
    tokenize = 'trigram remove_diacritics 1'
);
INSERT INTO tool_fts (tool_fts, rank) VALUES ('rank', 'bm25(1.0, 1.0, 1.0)');

CREATE TRIGGER tool_fts_insert AFTER INSERT ON chat_llm_tools BEGIN
    INSERT INTO tool_fts (rowid, name, path, command)
    SELECT id, name, path, command FROM tool_search_doc WHERE id = new.id;
END;

CREATE TRIGGER tool_fts_delete AFTER DELETE ON chat_llm_tools BEGIN
    DELETE FROM tool_fts WHERE rowid = old.id;
END;

-- Status and result changes (twice per call) leave the index alone.
CREATE TRIGGER tool_fts_update AFTER UPDATE OF name, arguments ON chat_llm_tools BEGIN
    DELETE FROM tool_fts WHERE rowid = old.id;
    INSERT INTO tool_fts (rowid, name, path, command)
    SELECT id, name, path, command FROM tool_search_doc WHERE id = new.id;
END;

INSERT INTO tool_fts (rowid, name, path, command)
SELECT id, name, path, command FROM tool_search_doc;
