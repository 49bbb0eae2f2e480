//! `skald mcp list` and `skald mcp tools SERVER`.

use skald_api::{Caller, ListMcpServersParams, ops};
use skald_core::Engine;
use skald_protocol::{ApiError, McpServerInfo, McpServerState};

use crate::cli::McpCommand;
use crate::exit;
use crate::output::Output;

pub async fn run(engine: &Engine, cmd: McpCommand, out: &Output) -> Result<u8, ApiError> {
    match cmd {
        McpCommand::List { start } => {
            let params = ListMcpServersParams { start, server: None };
            let servers = ops::list_mcp_servers(engine, &Caller::Cli, params).await?;
            if out.is_json() {
                out.json(&servers)?;
                return Ok(exit::OK);
            }
            if servers.is_empty() {
                out.line("No MCP servers configured: add them under mcp.servers in config.yml.");
                return Ok(exit::OK);
            }
            out.line(&format!("{:<20} {:<12} {:>5}  ENDPOINT", "NAME", "STATE", "TOOLS"));
            for s in &servers {
                let tools = if s.state == McpServerState::Ready {
                    s.tools.len().to_string()
                } else {
                    "-".into()
                };
                out.line(&format!("{:<20} {:<12} {:>5}  {}", s.name, state(s), tools, s.endpoint));
                if let Some(d) = &s.description {
                    out.line(&format!("{:>4}{d}", ""));
                }
                if let Some(e) = &s.error {
                    out.line(&format!("{:>4}error: {e}", ""));
                }
            }
            Ok(exit::OK)
        }
        McpCommand::Tools { server } => {
            let params = ListMcpServersParams { start: true, server: Some(server) };
            let servers = ops::list_mcp_servers(engine, &Caller::Cli, params).await?;
            if out.is_json() {
                out.json(&servers)?;
                return Ok(exit::OK);
            }
            let Some(s) = servers.first() else { return Ok(exit::OK) };
            match (&s.state, &s.error) {
                (McpServerState::Disabled, _) => {
                    out.line(&format!("{} is disabled in config.yml.", s.name));
                    return Ok(exit::ERROR);
                }
                (_, Some(e)) => {
                    out.line(&format!("{} could not be started: {e}", s.name));
                    if let Some(log) = &s.log_path {
                        out.line(&format!("Its log: {log}"));
                    }
                    return Ok(exit::ERROR);
                }
                _ => {}
            }
            for t in &s.tools {
                let gate = if t.read_only { "read-only" } else { "approval" };
                let first = t.description.lines().next().unwrap_or_default();
                out.line(&format!("{:<48} {:<9}  {first}", t.name, gate));
            }
            Ok(exit::OK)
        }
    }
}

fn state(s: &McpServerInfo) -> &'static str {
    match s.state {
        McpServerState::Disabled => "disabled",
        McpServerState::NotStarted => "not started",
        McpServerState::Ready => "ready",
        McpServerState::Failed => "failed",
    }
}
