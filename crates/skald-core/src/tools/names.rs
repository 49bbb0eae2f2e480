//! Every tool name the engine knows, defined once (no string literals scattered in code).

pub const READ_FILE: &str = "read_file";
pub const LIST_DIR: &str = "list_dir";
pub const SEARCH_FILES: &str = "search_files";
pub const FIND_FILES: &str = "find_files";
pub const WRITE_FILE: &str = "write_file";
pub const EDIT_FILE: &str = "edit_file";
pub const INSERT_AT_LINE: &str = "insert_at_line";
pub const REPLACE_LINES: &str = "replace_lines";
pub const EXECUTE_CMD: &str = "execute_cmd";
/// Synthetic, intercepted by the turn loop.
pub const UPDATE_SCRATCHPAD: &str = "update_scratchpad";
/// Synthetic, intercepted by the turn loop.
pub const WRITE_TODOS: &str = "write_todos";
pub const ASK_USER_CLARIFICATION: &str = "ask_user_clarification";
/// Synthetic: the root agent delegates to a task agent (a sync sub-agent).
pub const EXECUTE_TASK: &str = "execute_task";
/// Synthetic: a sub-agent below the depth limit delegates further.
pub const EXECUTE_SUBTASK: &str = "execute_subtask";
/// Interface tool: grants MCP servers (or the `config` group) to the calling frame.
pub const ACTIVATE_TOOLS: &str = "activate_tools";
/// The `config` group, offered once activated: they change `mcp.servers` in config.yml.
pub const REGISTER_MCP: &str = "register_mcp";
pub const DELETE_MCP: &str = "delete_mcp";
pub const TOGGLE_ITEM: &str = "toggle_item";
/// Agent memory (the data dir's `memory/`): search or read the files, and write one.
pub const MEMORY_SEARCH: &str = "memory_search";
pub const MEMORY_WRITE: &str = "memory_write";

/// The tools that start a sync sub-agent in a child frame.
pub fn is_subagent_tool(name: &str) -> bool {
    matches!(name, EXECUTE_TASK | EXECUTE_SUBTASK)
}

/// `execute_task` mode `cron`: an agent asks to schedule a job, which runs later unattended.
/// A person approves every such call (a floor no rule, bypass or pre-authorisation lowers).
pub fn schedules_job(name: &str, args: &serde_json::Value) -> bool {
    name == EXECUTE_TASK
        && args.get("mode").and_then(serde_json::Value::as_str).map(str::trim) == Some("cron")
}

/// Tools that change files (approval class "write"; `file_changed` on success).
pub fn is_write_tool(name: &str) -> bool {
    matches!(name, WRITE_FILE | EDIT_FILE | INSERT_AT_LINE | REPLACE_LINES | MEMORY_WRITE)
}

/// Tools that change which programs Skald starts (the `config` group): no bypass covers them.
pub fn changes_mcp_servers(name: &str) -> bool {
    matches!(name, REGISTER_MCP | DELETE_MCP | TOGGLE_ITEM)
}

/// Tools that only read files (approval class "read").
pub fn is_read_tool(name: &str) -> bool {
    matches!(name, READ_FILE | LIST_DIR | SEARCH_FILES | FIND_FILES)
}

/// The server of an MCP tool (`mcp__<server>__<tool>`); `None` for every other tool.
pub fn mcp_server(name: &str) -> Option<&str> {
    mcp_tool(name).map(|(server, _)| server)
}

/// The name an MCP tool is offered under.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// The server and the tool's own name of an MCP tool (`mcp__<server>__<tool>`).
pub fn mcp_tool(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__"))
}
