//! MCP tools in a turn: `activate_tools` grants a server to the frame (the session's root, or
//! one sub-agent frame), and from the next round on the frame is offered that server's tools as
//! `mcp__<server>__<tool>`; calls go through the same gate and records as every tool.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use skald_mcp::{McpError, McpTool, Progress};
use skald_protocol::Event;

use super::tool_set::OfferedTool;
use super::{TurnCtx, config_tools, mcp_results};
use crate::tools::names::{self, ConfigTool, ToolName};
use crate::tools::{ToolError, ToolOutput};

/// The tool groups a frame may use. Clones share the set, so a grant made while one round's
/// calls run is offered by the next round.
#[derive(Debug, Clone, Default)]
pub struct Grants(Arc<Mutex<BTreeSet<String>>>);

impl Grants {
    pub fn new(groups: impl IntoIterator<Item = String>) -> Self {
        Self(Arc::new(Mutex::new(groups.into_iter().collect())))
    }

    fn set(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The groups, sorted.
    pub fn list(&self) -> Vec<String> {
        self.set().iter().cloned().collect()
    }

    pub fn contains(&self, group: &str) -> bool {
        self.set().contains(group)
    }

    fn insert(&self, group: &str) -> bool {
        self.set().insert(group.to_string())
    }
}

/// `<!-- MCP_LIST -->` in an agent's prompt: the servers it can activate and those it has.
pub const MCP_LIST_KEY: &str = "MCP_LIST";

/// The enabled servers the frame may activate: all of them, except for the `tic` system agent,
/// which has only the servers its tick granted (those whose events it reads).
pub fn activatable(ctx: &TurnCtx) -> Vec<(String, Option<String>)> {
    let enabled = ctx.deps.mcp.enabled();
    if tic_frame(ctx) {
        return enabled.into_iter().filter(|(name, _)| ctx.frame.grants.contains(name)).collect();
    }
    enabled
}

/// The frame runs the `tic` system agent (a TIC tick).
fn tic_frame(ctx: &TurnCtx) -> bool {
    ctx.frame.agent.id == crate::agents::TIC_AGENT
        && ctx.frame.agent.meta.kind == crate::agents::AgentKind::System
}

/// The `## MCP servers` block for the frame: empty without servers.
pub fn prompt_block(ctx: &TurnCtx) -> String {
    let enabled = activatable(ctx);
    if enabled.is_empty() {
        return String::new();
    }
    let (active, available): (Vec<_>, Vec<_>) =
        enabled.into_iter().partition(|(name, _)| ctx.frame.grants.contains(name));
    let mut out = String::from("## MCP servers\n");
    if !available.is_empty() {
        out.push_str(&format!(
            "\nAvailable: call `{}` with the names you need; their tools appear at your next \
             step.\n\n| server | what it does |\n| --- | --- |\n",
            names::ACTIVATE_TOOLS
        ));
        for (name, description) in &available {
            let d = description.as_deref().unwrap_or("").replace('|', "\\|").replace('\n', " ");
            out.push_str(&format!("| {name} | {d} |\n"));
        }
    }
    if !active.is_empty() {
        out.push_str("\nActive (call their tools as `mcp__<server>__<tool>`):\n");
        for (name, _) in &active {
            out.push_str(&format!("- {name}\n"));
        }
    }
    out
}

/// Starts the frame's granted servers that are not running yet (a restart, a resumed frame), so
/// this round offers their tools. A server that fails is left out; `activate_tools` says why.
pub async fn prepare_round(ctx: &TurnCtx) {
    for server in ctx.frame.grants.list() {
        if ctx.deps.mcp.is_enabled(&server) && ctx.deps.mcp.tools(&server).is_none() {
            let _ = ctx.deps.mcp.connect(&server, false).await;
        }
    }
}

/// `activate_tools` (when there is something to activate) and the tools of the frame's granted
/// servers.
pub fn tools(ctx: &TurnCtx) -> Vec<OfferedTool> {
    let mut defs = Vec::new();
    let enabled = activatable(ctx);
    let mut listing: Vec<String> = enabled
        .iter()
        .map(|(name, description)| match description {
            Some(d) => format!("- `{name}`: {d}"),
            None => format!("- `{name}`"),
        })
        .collect();
    let mut groups: Vec<String> = enabled.iter().map(|(n, _)| n.clone()).collect();
    if config_tools::allowed(ctx) {
        listing.push(format!("- `{}`: {}", config_tools::GROUP, config_tools::SUMMARY));
        groups.push(config_tools::GROUP.to_string());
    }
    if groups.is_empty() {
        // Nothing to activate: the tool is not offered (it cost every request its definition).
        return granted_tools(ctx);
    }
    let scope = if ctx.is_root() { "this session" } else { "you, until your task ends" };
    defs.push(OfferedTool::interface(
        ToolName::Activate,
        json!({
            "type": "function",
            "function": {
                "name": names::ACTIVATE_TOOLS,
                "description": format!(
                    "Make the tools of MCP servers (or a group of Skald's own tools) available to \
                     {scope}. Their tools appear from your next step on, a server's named \
                     mcp__<server>__<tool>. Groups:\n{}",
                    listing.join("\n")
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "groups": {
                            "type": "array",
                            "items": {
                                "type": "string",
                                "enum": groups,
                            },
                            "description": "Names of the servers (or groups) to activate."
                        }
                    },
                    "required": ["groups"],
                    "additionalProperties": false
                }
            }
        }),
    ));
    defs.extend(granted_tools(ctx));
    defs
}

/// The tools of the frame's granted servers, read-only as far as their server is trusted to
/// say so.
fn granted_tools(ctx: &TurnCtx) -> Vec<OfferedTool> {
    let mut defs = Vec::new();
    for server in ctx.frame.grants.list() {
        let (tools, _) = offerable(&server, ctx.deps.mcp.tools(&server).unwrap_or_default());
        for tool in tools {
            let def = json!({
                "type": "function",
                "function": {
                    "name": names::mcp_tool_name(&server, &tool.name),
                    "description": tool.description,
                    "parameters": tool.input_schema,
                }
            });
            defs.push(OfferedTool::mcp(&server, &tool.name, def, tool.read_only));
        }
    }
    defs
}

/// Longest tool name OpenAI-compatible providers accept (`^[a-zA-Z0-9_-]{1,64}$`).
const MAX_TOOL_NAME: usize = 64;

/// The tools of `server` that can be offered, and the names of those that cannot: a name a
/// provider would reject (too long, a character outside `[A-Za-z0-9_-]`) or a second tool of the
/// same name would make every request of the frame fail, so such a tool is left out instead.
fn offerable(server: &str, tools: Vec<McpTool>) -> (Vec<McpTool>, Vec<String>) {
    let mut seen = BTreeSet::new();
    let mut skipped = Vec::new();
    let mut kept = Vec::new();
    for tool in tools {
        let name = names::mcp_tool_name(server, &tool.name);
        let valid = name.len() <= MAX_TOOL_NAME
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if valid && seen.insert(name) {
            kept.push(tool);
        } else {
            skipped.push(tool.name);
        }
    }
    (kept, skipped)
}

/// What the model is told when it calls an MCP tool it may not call now: activate its server
/// first, or the server has no such tool (with the ones it has). `None` for other names.
pub fn unknown_call(name: &str, ctx: &TurnCtx) -> Option<String> {
    let (server, tool) = names::mcp_tool(name)?;
    if !ctx.deps.mcp.is_enabled(server) {
        return None;
    }
    if !ctx.frame.grants.contains(server) {
        return Some(format!(
            "unknown tool `{name}`: the MCP server `{server}` is not activated. Call `{}` with \
             [\"{server}\"] first; its tools are offered from your next step on.",
            names::ACTIVATE_TOOLS
        ));
    }
    let (tools, _) = offerable(server, ctx.deps.mcp.tools(server).unwrap_or_default());
    let offered: Vec<String> =
        tools.iter().map(|t| names::mcp_tool_name(server, &t.name)).collect();
    Some(format!(
        "unknown tool `{name}`: the MCP server `{server}` has no tool `{tool}`. Its tools: {}",
        if offered.is_empty() { "none offered".to_string() } else { offered.join(", ") }
    ))
}

/// Least time between two progress events of one call (the last report before it ends may be
/// skipped; its end follows anyway).
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Shows the progress the server reports for call `id` on its card (`tool_progress`), at most
/// one event per [`PROGRESS_EVERY`] however often the server reports.
fn progress_sink(ctx: &TurnCtx, id: i64) -> skald_mcp::ProgressSink {
    let emitter = ctx.frame.emitter.clone();
    let last: Mutex<Option<std::time::Instant>> = Mutex::new(None);
    Arc::new(move |p: Progress| {
        {
            let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let finished = p.total.is_some_and(|t| p.progress >= t);
            if last.is_some_and(|at| at.elapsed() < PROGRESS_EVERY) && !finished {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        emitter.emit(Event::ToolProgress {
            tool_call_id: id,
            progress: p.progress,
            total: p.total,
            message: p.message,
        });
    })
}

/// Runs a tool of an MCP server as call `id`; its result as the model may see it (capped,
/// media saved). The progress the server reports shows on the call's card.
pub async fn call(
    ctx: &TurnCtx,
    id: i64,
    server: &str,
    tool: &str,
    args: &Value,
) -> Result<ToolOutput, ToolError> {
    let hooks = skald_mcp::CallHooks {
        progress: Some(progress_sink(ctx, id)),
        elicitor: Some(crate::engine::elicitations::for_call(ctx, id)),
    };
    let out = match ctx.deps.mcp.call_watched(server, tool, args, &ctx.frame.cancel, hooks).await {
        Ok(out) => out,
        Err(McpError::Cancelled) => return Err(ToolError::Cancelled),
        Err(e) => return Err(ToolError::Failed(e.to_string())),
    };
    let is_error = out.is_error;
    let (text, media) = mcp_results::for_model(out, &ctx.deps.data_dir, ctx.policy.session_id, id);
    // Recorded before the call ends (a reader that sees it ended sees its media), for a failed
    // result too: what the server sent is on disk either way.
    if !media.is_empty() {
        let json = serde_json::to_string(&media)
            .map_err(|e| ToolError::Failed(format!("cannot encode the result's media: {e}")))?;
        ctx.deps
            .store
            .record_tool_media(id, &json)
            .await
            .map_err(|e| ToolError::Failed(format!("storage error: {e}")))?;
    }
    Ok(ToolOutput { media, failed: is_error, ..ToolOutput::text(text) })
}

/// Stores the grant in the frame's scope (the session's at the root, the frame's own below) and
/// adds it to the frame's set, so the next round offers the group's tools.
async fn grant(ctx: &TurnCtx, group: &str) -> Result<(), skald_store::StoreError> {
    if ctx.is_root() {
        ctx.deps.store.grant_session_tool_group(ctx.policy.session_id, group).await?;
    } else {
        ctx.deps.store.grant_stack_tool_group(ctx.frame.stack_id, group).await?;
    }
    ctx.frame.grants.insert(group);
    Ok(())
}

/// Runs `activate_tools`.
pub async fn activate(ctx: &TurnCtx, args: &Value) -> Result<ToolOutput, ToolError> {
    let groups: Vec<String> = match args.get("groups") {
        Some(Value::Array(items)) => {
            items.iter().filter_map(Value::as_str).map(|s| s.trim().to_string()).collect()
        }
        _ => {
            return Err(ToolError::InvalidArguments(
                "`groups` must be a list of server names".into(),
            ));
        }
    };
    let storage = |e: skald_store::StoreError| ToolError::Failed(format!("storage error: {e}"));
    let mut activated = Vec::new();
    let mut already = Vec::new();
    let mut refused = Vec::new();
    let mut tools = serde_json::Map::new();
    let mut unusable = serde_json::Map::new();
    for group in groups {
        if ctx.frame.grants.contains(&group) {
            already.push(group);
            continue;
        }
        if group == config_tools::GROUP {
            if !config_tools::allowed(ctx) {
                let reason = "the config group is for the user's own chat, where a person \
                              approves each change";
                refused.push(json!({ "group": group, "reason": reason }));
                continue;
            }
            grant(ctx, &group).await.map_err(storage)?;
            let offered = ConfigTool::ALL.map(ConfigTool::name);
            tools.insert(group.clone(), json!(offered));
            activated.push(group);
            continue;
        }
        if tic_frame(ctx) {
            let reason = "a TIC tick has only the servers whose events it reads";
            refused.push(json!({ "group": group, "reason": reason }));
            continue;
        }
        // Started now (again, after a failure), so a server that cannot run is said at once.
        match ctx.deps.mcp.connect(&group, true).await {
            Ok(listed) => {
                grant(ctx, &group).await.map_err(storage)?;
                let (kept, left_out) = offerable(&group, listed);
                let offered: Vec<String> =
                    kept.iter().map(|t| names::mcp_tool_name(&group, &t.name)).collect();
                tools.insert(group.clone(), json!(offered));
                if !left_out.is_empty() {
                    unusable.insert(group.clone(), json!(left_out));
                }
                activated.push(group);
            }
            Err(e) => refused.push(json!({ "group": group, "reason": e.to_string() })),
        }
    }
    let scope =
        if ctx.is_root() { "session".to_string() } else { format!("stack {}", ctx.frame.stack_id) };
    let mut answer = json!({
        "activated": activated,
        "already_active": already,
        "not_activated": refused,
        "scope": scope,
        "tools": tools,
    });
    if !unusable.is_empty() {
        // Said, so the model does not look for them.
        answer["not_offered"] = json!({
            "reason": "names a model provider would reject (over 64 characters, or characters \
                       other than letters, digits, _ and -), or a name the server uses twice",
            "tools": unusable,
        });
    }
    Ok(ToolOutput::text(answer.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skald_mcp::McpTool;

    use super::offerable;

    fn tool(name: &str) -> McpTool {
        McpTool {
            name: name.into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            read_only: true,
        }
    }

    #[test]
    fn tools_a_provider_would_reject_are_left_out_and_named() {
        let long = "x".repeat(60);
        let tools =
            vec![tool("read"), tool("files.read"), tool(&long), tool("read"), tool("a-b_c")];
        let (kept, skipped) = offerable("srv", tools);
        let kept: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(kept, ["read", "a-b_c"]);
        assert_eq!(skipped, ["files.read".to_string(), long, "read".to_string()]);
    }
}
