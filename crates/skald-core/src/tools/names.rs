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
/// Interface tool of unattended sessions (job runs, TIC ticks, tasks): tell the person
/// something, delivered home in the next briefing.
pub const NOTIFY: &str = "notify";
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

/// A tool's name, typed: what provides the tool is read from the name once, here, and code
/// that runs tools matches on the variant instead of comparing strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// A tool of the registry (files, shell, search), by its registered name.
    Registered(String),
    /// A tool the turn loop runs on the session's own state.
    Session(SessionTool),
    /// Delegation to a sub-agent.
    Delegation(Delegation),
    /// `activate_tools`: grants MCP servers or a group of Skald's own tools to the frame.
    Activate,
    /// A tool of the `config` group.
    Config(ConfigTool),
    /// A tool of an MCP server (`mcp__<server>__<tool>`).
    Mcp { server: String, tool: String },
}

/// The tools the turn loop runs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionTool {
    Scratchpad,
    Todos,
    /// A question to the person; the call waits for the answer.
    Question,
    /// A fact for the person, delivered home in the next briefing.
    Notify,
}

/// The two delegation tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Delegation {
    /// `execute_task`, at the root of an attended chat: modes `sync`, `async`, `cron`.
    Task,
    /// `execute_subtask`, below the root: sync only.
    Subtask,
}

/// The tools of the `config` group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigTool {
    RegisterMcp,
    DeleteMcp,
    ToggleItem,
}

impl SessionTool {
    pub fn name(self) -> &'static str {
        match self {
            Self::Scratchpad => UPDATE_SCRATCHPAD,
            Self::Todos => WRITE_TODOS,
            Self::Question => ASK_USER_CLARIFICATION,
            Self::Notify => NOTIFY,
        }
    }
}

impl Delegation {
    pub fn name(self) -> &'static str {
        match self {
            Self::Task => EXECUTE_TASK,
            Self::Subtask => EXECUTE_SUBTASK,
        }
    }
}

impl ConfigTool {
    pub const ALL: [Self; 3] = [Self::RegisterMcp, Self::DeleteMcp, Self::ToggleItem];

    pub fn name(self) -> &'static str {
        match self {
            Self::RegisterMcp => REGISTER_MCP,
            Self::DeleteMcp => DELETE_MCP,
            Self::ToggleItem => TOGGLE_ITEM,
        }
    }
}

impl ToolName {
    /// The typed name of `name` as the model or a stored row spells it.
    pub fn parse(name: &str) -> Self {
        match name {
            UPDATE_SCRATCHPAD => Self::Session(SessionTool::Scratchpad),
            WRITE_TODOS => Self::Session(SessionTool::Todos),
            ASK_USER_CLARIFICATION => Self::Session(SessionTool::Question),
            NOTIFY => Self::Session(SessionTool::Notify),
            EXECUTE_TASK => Self::Delegation(Delegation::Task),
            EXECUTE_SUBTASK => Self::Delegation(Delegation::Subtask),
            ACTIVATE_TOOLS => Self::Activate,
            REGISTER_MCP => Self::Config(ConfigTool::RegisterMcp),
            DELETE_MCP => Self::Config(ConfigTool::DeleteMcp),
            TOGGLE_ITEM => Self::Config(ConfigTool::ToggleItem),
            _ => match mcp_tool(name) {
                Some((server, tool)) => {
                    Self::Mcp { server: server.to_string(), tool: tool.to_string() }
                }
                None => Self::Registered(name.to_string()),
            },
        }
    }

    /// The name the model is offered and calls.
    pub fn wire(&self) -> String {
        match self {
            Self::Registered(name) => name.clone(),
            Self::Session(t) => t.name().to_string(),
            Self::Delegation(d) => d.name().to_string(),
            Self::Activate => ACTIVATE_TOOLS.to_string(),
            Self::Config(c) => c.name().to_string(),
            Self::Mcp { server, tool } => mcp_tool_name(server, tool),
        }
    }

    /// `execute_task` mode `cron`: an agent asks to schedule a job, which runs later
    /// unattended. A person approves every such call (a floor no rule, bypass or
    /// pre-authorisation lowers).
    pub fn schedules_job(&self, args: &serde_json::Value) -> bool {
        *self == Self::Delegation(Delegation::Task)
            && args.get("mode").and_then(serde_json::Value::as_str).map(str::trim) == Some("cron")
    }
}

/// The tools that start a sync sub-agent in a child frame.
pub fn is_subagent_tool(name: &str) -> bool {
    matches!(ToolName::parse(name), ToolName::Delegation(_))
}

/// See [`ToolName::schedules_job`].
pub fn schedules_job(name: &str, args: &serde_json::Value) -> bool {
    ToolName::parse(name).schedules_job(args)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_to_its_provider_and_back() {
        let cases = [
            (READ_FILE, ToolName::Registered(READ_FILE.into())),
            (EXECUTE_CMD, ToolName::Registered(EXECUTE_CMD.into())),
            (UPDATE_SCRATCHPAD, ToolName::Session(SessionTool::Scratchpad)),
            (WRITE_TODOS, ToolName::Session(SessionTool::Todos)),
            (ASK_USER_CLARIFICATION, ToolName::Session(SessionTool::Question)),
            (NOTIFY, ToolName::Session(SessionTool::Notify)),
            (EXECUTE_TASK, ToolName::Delegation(Delegation::Task)),
            (EXECUTE_SUBTASK, ToolName::Delegation(Delegation::Subtask)),
            (ACTIVATE_TOOLS, ToolName::Activate),
            (REGISTER_MCP, ToolName::Config(ConfigTool::RegisterMcp)),
            (DELETE_MCP, ToolName::Config(ConfigTool::DeleteMcp)),
            (TOGGLE_ITEM, ToolName::Config(ConfigTool::ToggleItem)),
            (
                "mcp__everything__echo",
                ToolName::Mcp { server: "everything".into(), tool: "echo".into() },
            ),
        ];
        for (wire, typed) in cases {
            assert_eq!(ToolName::parse(wire), typed, "{wire}");
            assert_eq!(typed.wire(), wire);
        }
        // A server's tool named like one of Skald's stays the server's.
        let shadow = ToolName::parse("mcp__srv__execute_task");
        assert_eq!(shadow, ToolName::Mcp { server: "srv".into(), tool: EXECUTE_TASK.into() });
        assert!(!shadow.schedules_job(&serde_json::json!({ "mode": "cron" })));
    }

    #[test]
    fn only_execute_task_in_mode_cron_schedules_a_job() {
        let cron = serde_json::json!({ "mode": " cron " });
        assert!(ToolName::parse(EXECUTE_TASK).schedules_job(&cron));
        assert!(!ToolName::parse(EXECUTE_SUBTASK).schedules_job(&cron));
        assert!(
            !ToolName::parse(EXECUTE_TASK).schedules_job(&serde_json::json!({ "mode": "sync" }))
        );
    }
}
