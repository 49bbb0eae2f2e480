//! The configured MCP servers as Settings and `skald mcp list` show them.

use skald_mcp::ServerState;
use skald_protocol::{McpServerInfo, McpServerState, McpToolInfo};

use super::Engine;
use crate::error::EngineError;
use crate::tools::names;

impl Engine {
    /// Every server of `mcp.servers` (or only `only`) and where it stands; with `start`, the
    /// enabled ones that are not running are started first (again, after a failure), so their
    /// tools are listed.
    pub async fn list_mcp_servers(
        &self,
        start: bool,
        only: Option<&str>,
    ) -> Result<Vec<McpServerInfo>, EngineError> {
        let mcp = self.mcp();
        if let Some(name) = only
            && !mcp.names().iter().any(|n| n == name)
        {
            let known = mcp.names().join(", ");
            return Err(EngineError::NotFound(format!(
                "no MCP server named `{name}` in mcp.servers (configured: {})",
                if known.is_empty() { "none" } else { &known }
            )));
        }
        let wanted = |name: &str| only.is_none_or(|o| o == name);
        if start {
            let starts = mcp
                .enabled()
                .into_iter()
                .filter(|(name, _)| wanted(name))
                .map(|(name, _)| {
                    let mcp = mcp.clone();
                    async move { mcp.connect(&name, true).await }
                })
                .collect::<Vec<_>>();
            // A server that fails says so in its status; the others are listed all the same.
            let _ = futures::future::join_all(starts).await;
        }
        Ok(mcp
            .statuses()
            .into_iter()
            .filter(|s| wanted(&s.name))
            .map(|s| {
                let (state, error) = match s.state {
                    ServerState::Disabled => (McpServerState::Disabled, None),
                    ServerState::NotStarted => (McpServerState::NotStarted, None),
                    ServerState::Ready => (McpServerState::Ready, None),
                    ServerState::Failed(e) => (McpServerState::Failed, Some(e)),
                };
                let tools = s
                    .tools
                    .iter()
                    .map(|t| McpToolInfo {
                        name: names::mcp_tool_name(&s.name, &t.name),
                        description: t.description.clone(),
                        read_only: t.read_only,
                    })
                    .collect();
                McpServerInfo {
                    name: s.name,
                    description: s.description,
                    endpoint: s.endpoint,
                    state,
                    error,
                    tools,
                    log_path: s.log.map(|p| p.display().to_string()),
                }
            })
            .collect())
    }
}
