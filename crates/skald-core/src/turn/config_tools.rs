//! The `config` tool group: once an agent activates it (`activate_tools(["config"])`), it can
//! register, remove, enable and disable MCP servers. Every call asks the user first (seeded
//! rules), and the engine writes the change into config.yml in place, so a server registered in
//! one round can be activated in the next.

use serde_json::{Value, json};

use super::TurnCtx;
use super::synthetic::function;
use super::tool_set::OfferedTool;
use crate::config::{McpEdit, McpServerEntry};
use crate::tools::names::{self, ConfigTool, ToolName};
use crate::tools::{ToolError, ToolOutput};

/// The group's name in `activate_tools`.
pub const GROUP: &str = "config";

/// One line for `activate_tools`' description.
pub const SUMMARY: &str =
    "tools to register, remove, enable or disable MCP servers (each change asks the user first)";

/// Whether the frame may activate the group: only the root of a chat a person attends (every
/// change asks them). A sub-agent, an async task, a job's run or an unattended session is not
/// offered it, so a small model is not tempted by tools it cannot use there.
pub fn allowed(ctx: &TurnCtx) -> bool {
    ctx.is_root() && !ctx.policy.auto_deny && !ctx.policy.background
}

/// The group's tools, once the frame activated it.
pub fn tools(ctx: &TurnCtx) -> Vec<OfferedTool> {
    if !ctx.frame.grants.contains(GROUP) {
        return Vec::new();
    }
    let name =
        json!({ "type": "string", "description": "The server's name: letters, digits, _ and -." });
    vec![
        function(
            ToolName::Config(ConfigTool::RegisterMcp),
            "Register an MCP server in Skald's configuration: `command` (with `args`, `env`) for \
             a local server, or `url` (with `api_key_env`, the environment variable holding its \
             key) for a remote one. The user approves it first. Activate it with activate_tools \
             afterwards to use its tools.",
            json!({
                "type": "object",
                "properties": {
                    "name": name,
                    "description": { "type": "string", "description": "What it is for, for agents deciding to activate it." },
                    "command": { "type": "string" },
                    "args": { "type": "array", "items": { "type": "string" } },
                    "env": { "type": "object", "additionalProperties": { "type": "string" } },
                    "url": { "type": "string" },
                    "api_key_env": { "type": "string" }
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        function(
            ToolName::Config(ConfigTool::DeleteMcp),
            "Remove an MCP server from Skald's configuration. The user approves it first.",
            json!({
                "type": "object",
                "properties": { "name": name },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        function(
            ToolName::Config(ConfigTool::ToggleItem),
            "Enable or disable an MCP server (a disabled one is never started nor offered). The \
             user approves it first.",
            json!({
                "type": "object",
                "properties": {
                    "kind": { "type": "string", "enum": ["mcp"] },
                    "id": name,
                    "enabled": { "type": "boolean" }
                },
                "required": ["kind", "id", "enabled"],
                "additionalProperties": false
            }),
        ),
    ]
}

fn text(args: &Value, key: &str) -> Option<String> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn required(args: &Value, key: &str) -> Result<String, ToolError> {
    text(args, key).ok_or_else(|| ToolError::InvalidArguments(format!("`{key}` is required")))
}

/// Runs one of the group's tools (after the user approved it).
pub async fn run(ctx: &TurnCtx, tool: ConfigTool, args: &Value) -> Result<ToolOutput, ToolError> {
    let (edit, done) = match tool {
        ConfigTool::RegisterMcp => {
            let server = required(args, "name")?;
            let strings = |key: &str| -> Vec<String> {
                args.get(key)
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default()
            };
            let env = args
                .get("env")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default();
            let entry = McpServerEntry {
                name: server.clone(),
                description: text(args, "description"),
                command: text(args, "command"),
                args: strings("args"),
                env,
                cwd: None,
                url: text(args, "url"),
                api_key_env: text(args, "api_key_env"),
                oauth: None,
                enabled: true,
                timeout_secs: None,
                trusted: false,
                keep_connected: false,
            };
            let done = format!(
                "Registered the MCP server `{server}`. Activate it with {}([\"{server}\"]) to \
                 use its tools.",
                names::ACTIVATE_TOOLS
            );
            (McpEdit::Add(entry), done)
        }
        ConfigTool::DeleteMcp => {
            let server = required(args, "name")?;
            (McpEdit::Remove(server.clone()), format!("Removed the MCP server `{server}`."))
        }
        ConfigTool::ToggleItem => {
            let server = required(args, "id")?;
            if text(args, "kind").as_deref() != Some("mcp") {
                return Err(ToolError::InvalidArguments("`kind` must be \"mcp\"".into()));
            }
            let enabled = args.get("enabled").and_then(Value::as_bool).ok_or_else(|| {
                ToolError::InvalidArguments("`enabled` is required (true or false)".into())
            })?;
            let word = if enabled { "Enabled" } else { "Disabled" };
            let done = format!("{word} the MCP server `{server}`.");
            (McpEdit::SetEnabled { name: server, enabled }, done)
        }
    };
    (ctx.deps.edit_mcp)(edit).map_err(|e| ToolError::Failed(e.to_string()))?;
    Ok(ToolOutput::text(done))
}
