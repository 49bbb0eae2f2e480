//! `skald mcp list`, `skald mcp tools SERVER`, `skald mcp login|logout SERVER` (OAuth), and
//! adding, removing, enabling and disabling servers in config.yml.

use skald_api::{
    AddMcpServerParams, AuthorizeMcpServerParams, Caller, ForgetMcpAuthorizationParams,
    ListMcpServersParams, RemoveMcpServerParams, SetMcpServerEnabledParams, ops,
};
use skald_core::Engine;
use skald_protocol::{ApiError, ErrorCode, McpServerInfo, McpServerInput, McpServerState};

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
                out.line(
                    "No MCP servers configured. Add one with `skald mcp add NAME -- COMMAND ARGS…` \
                     (or `skald mcp add NAME --url URL`), in Settings → MCP, or under mcp.servers \
                     in config.yml.",
                );
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
                    out.line(&format!(
                        "{} is disabled in config.yml: `skald mcp enable {}` turns it on.",
                        s.name, s.name
                    ));
                    return Ok(exit::ERROR);
                }
                (_, Some(e)) => {
                    out.line(&format!("{} could not be started: {e}", s.name));
                    if let Some(log) = &s.log_path {
                        out.line(&format!("Its log: {log}"));
                    }
                    // What it said last (often why it could not start: its stderr).
                    for line in s.log_lines.iter().rev().take(10).rev() {
                        out.line(&format!("  {line}"));
                    }
                    return Ok(exit::ERROR);
                }
                _ => {}
            }
            if s.tools.is_empty() {
                out.line(&format!("{} lists no tools.", s.name));
            }
            for t in &s.tools {
                let gate = if t.read_only { "read-only" } else { "approval" };
                let first = t.description.lines().next().unwrap_or_default();
                out.line(&format!("{:<48} {:<9}  {first}", t.name, gate));
            }
            Ok(exit::OK)
        }
        McpCommand::Add {
            name,
            description,
            url,
            api_key_env,
            env,
            cwd,
            trusted,
            keep_connected,
            command,
        } => {
            let mut words = command.into_iter();
            let server = McpServerInput {
                name: name.clone(),
                description,
                command: words.next(),
                args: words.collect(),
                env: env_pairs(env)?,
                cwd,
                url,
                api_key_env,
                trusted,
                keep_connected,
            };
            let params = AddMcpServerParams { server };
            let servers = ops::add_mcp_server(engine, &Caller::Cli, params).await?;
            print_change(out, &servers, &name, &format!("Added the MCP server {name}"))
        }
        McpCommand::Remove { name } => {
            let params = RemoveMcpServerParams { name: name.clone() };
            let servers = ops::remove_mcp_server(engine, &Caller::Cli, params).await?;
            print_change(out, &servers, &name, &format!("Removed the MCP server {name}"))
        }
        McpCommand::Login { server } => login(engine, out, server).await,
        McpCommand::Logout { server } => {
            let params = ForgetMcpAuthorizationParams { name: server.clone() };
            let servers = ops::forget_mcp_authorization(engine, &Caller::Cli, params).await?;
            print_change(out, &servers, &server, &format!("Forgot the authorization of {server}"))
        }
        McpCommand::Enable { name } => set_enabled(engine, out, name, true).await,
        McpCommand::Disable { name } => set_enabled(engine, out, name, false).await,
    }
}

/// Starts the authorization, prints the page to open, and waits for the browser's answer.
async fn login(engine: &Engine, out: &Output, server: String) -> Result<u8, ApiError> {
    let params = AuthorizeMcpServerParams { name: server.clone() };
    let started = ops::authorize_mcp_server(engine, &Caller::Cli, params).await?;
    if out.is_json() {
        out.json(&started)?;
    } else {
        out.line(&format!("Open this page in a browser to authorize Skald with {server}:"));
        out.line("");
        out.line(&format!("  {}", started.url));
        out.line("");
        out.line("Waiting for the browser (up to five minutes; Ctrl+C stops)…");
    }
    let servers = match engine.wait_mcp_authorization(&server).await {
        Ok(servers) => servers,
        Err(e) => {
            out.line(&format!("{server} was not authorized: {e}"));
            return Ok(exit::ERROR);
        }
    };
    let Some(s) = servers.first() else { return Ok(exit::ERROR) };
    if out.is_json() {
        out.json(&servers)?;
    } else if s.state == McpServerState::Ready {
        out.line(&format!("Authorized: {server} is ready with {} tools.", s.tools.len()));
    } else {
        out.line(&format!(
            "Authorized, but {server} could not start: {}",
            s.error.as_deref().unwrap_or("unknown")
        ));
    }
    Ok(if s.state == McpServerState::Ready { exit::OK } else { exit::ERROR })
}

async fn set_enabled(
    engine: &Engine,
    out: &Output,
    name: String,
    enabled: bool,
) -> Result<u8, ApiError> {
    let params = SetMcpServerEnabledParams { name: name.clone(), enabled };
    let servers = ops::set_mcp_server_enabled(engine, &Caller::Cli, params).await?;
    let what = if enabled { "Enabled" } else { "Disabled" };
    print_change(out, &servers, &name, &format!("{what} the MCP server {name}"))
}

/// What an edit of the server list prints: the server as it stands now, or that it is gone.
fn print_change(
    out: &Output,
    servers: &[McpServerInfo],
    name: &str,
    what: &str,
) -> Result<u8, ApiError> {
    if out.is_json() {
        out.json(&servers)?;
        return Ok(exit::OK);
    }
    out.line(&format!("{what} (config.yml; agents see it from their next turn)"));
    if let Some(s) = servers.iter().find(|s| s.name == name) {
        out.line(&format!("{:<20} {:<12} {}", s.name, state(s), s.endpoint));
    }
    Ok(exit::OK)
}

/// `KEY=VALUE` pairs of `--env`.
fn env_pairs(pairs: Vec<String>) -> Result<std::collections::BTreeMap<String, String>, ApiError> {
    pairs
        .into_iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(ApiError {
                code: ErrorCode::InvalidInput,
                message: format!("--env {p}: write it as KEY=VALUE"),
            }),
        })
        .collect()
}

fn state(s: &McpServerInfo) -> &'static str {
    match s.state {
        McpServerState::Disabled => "disabled",
        McpServerState::NotStarted => "not started",
        McpServerState::Ready => "ready",
        McpServerState::Failed => "failed",
        McpServerState::NeedsAuthorization => "needs auth",
        McpServerState::Authorizing => "authorizing",
    }
}
