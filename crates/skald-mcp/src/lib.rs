//! MCP client manager: the servers of `mcp.servers` (stdio and streamable HTTP), connected on
//! first need, their tools listed when they connect and again when they say the list changed,
//! and called with a timeout and a stop that reaches the server (`notifications/cancelled`).
//! What a server sends on its own is kept: log messages in its log, other notifications as
//! events.
//!
//! The engine owns one [`McpManager`]; which servers a frame may use (grants) and how a call is
//! gated and recorded are the engine's business, not this crate's.

mod config;
mod elicit;
mod error;
mod handler;
mod log;
mod manager;
mod oauth;
mod result;
mod server;
mod sink;

pub use config::{ServerConfig, Transport, validate_name};
pub use elicit::{Answer, Elicitor, Field, FieldKind, Form, MAX_FIELDS};
pub use handler::{ELICITATION_TIMEOUT, MAX_EVENTS, Progress, ServerEvent};
pub use log::RECENT_LINES;
pub use manager::{McpManager, ServerState, ServerStatus};
pub use oauth::{AUTHORIZE_TIMEOUT, MemoryVault, OAuthSettings, TokenVault, vault_key};
pub use result::{CallOutput, Link, Media};
pub use server::{CALL_TIMEOUT, CONNECT_TIMEOUT, CallHooks, MAX_CALL_TIME, McpTool, ProgressSink};
pub use sink::EventSink;

/// What went wrong talking to a server, in words the model and the user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("no MCP server named `{0}` is configured (mcp.servers in config.yml)")]
    UnknownServer(String),
    #[error("the MCP server `{0}` is disabled in config.yml")]
    Disabled(String),
    #[error("the MCP server `{server}` could not be started: {message}")]
    Connect { server: String, message: String },
    #[error("the MCP server `{server}` has no tool `{tool}`")]
    UnknownTool { server: String, tool: String },
    #[error(
        "the MCP server `{server}` did not answer `{tool}` within {secs} s (the call was cancelled)"
    )]
    Timeout { server: String, tool: String, secs: u64 },
    #[error("`{tool}` on the MCP server `{server}` failed: {message}")]
    Call { server: String, tool: String, message: String },
    /// The server wants OAuth authorization first (or again); the message says how.
    #[error("the MCP server `{server}`: {message}")]
    Unauthorized {
        server: String,
        message: String,
        /// The server's `WWW-Authenticate`, where the next authorization starts from.
        challenge: Option<String>,
    },
    #[error("stopped")]
    Cancelled,
}
