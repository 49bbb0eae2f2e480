-- The media files and resource links an MCP call returned, recorded by the engine when the call
-- finished: a JSON `ToolResultMedia` (each file's kind, declared MIME type, the generated name
-- inside mcp-results/ of the data dir and its size; each link's name, URI and type). Never parsed
-- from the result text, which a server or a model can write anything into. NULL for calls that
-- returned none.
ALTER TABLE chat_llm_tools ADD COLUMN media TEXT;
