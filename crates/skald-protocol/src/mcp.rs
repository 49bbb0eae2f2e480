//! MCP servers on the wire: what Settings and `skald mcp list` show of each configured server.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a server stands. Servers start when an agent first activates them (or when a listing
/// asks to start them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    Disabled,
    NotStarted,
    Ready,
    /// Its last start failed (`error` says why); the next activation tries again.
    Failed,
    /// An HTTP server that wants OAuth authorization (first, again, or for more permissions;
    /// `error` says which): `authorize_mcp_server` starts it.
    NeedsAuthorization,
    /// An authorization was started and waits for the browser to come back.
    Authorizing,
}

/// An authorization started for an MCP server: the user opens `url` in a browser and consents;
/// the browser comes back to Skald on 127.0.0.1 and the server connects at its next use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpAuthorization {
    pub server: String,
    /// The authorization server's page to open.
    pub url: String,
}

/// One tool of a started server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpToolInfo {
    /// The name agents call it by: `mcp__<server>__<tool>`.
    pub name: String,
    pub description: String,
    /// The server says it changes nothing: no approval by default.
    pub read_only: bool,
}

/// One configured server (`mcp.servers` in config.yml).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpServerInfo {
    pub name: String,
    pub description: Option<String>,
    /// `stdio: <command> <args>` or `http: <url>`.
    pub endpoint: String,
    pub state: McpServerState,
    pub error: Option<String>,
    /// Empty until the server has started.
    pub tools: Vec<McpToolInfo>,
    /// Its log file (stderr, the server's log messages and connection events).
    pub log_path: Option<String>,
    /// The last lines of that log, oldest first, as the file has them (kept in memory since
    /// Skald started; empty before the server's first start).
    pub log_lines: Vec<String>,
    /// Marked `keep_connected`: the app and `skald serve` keep it running, and what it pushes
    /// is read by TIC ticks.
    pub keep_connected: bool,
}

/// A server to add to `mcp.servers`: `command` (with `args`, `env`, `cwd`) for a local server, or
/// `url` (with `api_key_env`, the variable holding its key) for a remote one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpServerInput {
    pub name: String,
    pub description: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment; `${VAR}` in a value is read from Skald's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub api_key_env: Option<String>,
    /// Trust the server's annotations: its tools marked read-only run without approval.
    #[serde(default)]
    pub trusted: bool,
    /// Keep it connected (started with Skald, restarted when it exits) so what it pushes is
    /// stored for TIC ticks.
    #[serde(default)]
    pub keep_connected: bool,
}
