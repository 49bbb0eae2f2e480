//! How one MCP server is reached, as `mcp.servers` in config.yml describes it.

use std::collections::BTreeMap;

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Unique; the middle part of its tools' names (`mcp__<name>__<tool>`).
    pub name: String,
    pub transport: Transport,
    /// Shown to the model next to the name, so it knows when to activate the server.
    pub description: Option<String>,
    /// A disabled server is listed but never started.
    pub enabled: bool,
    /// How long one call may take before it is cancelled (`None`: [`crate::CALL_TIMEOUT`]).
    pub call_timeout: Option<std::time::Duration>,
    /// The user trusts the server's annotations: only then does `readOnlyHint` let its tools
    /// run without approval (a hint from a program we do not control is not a permission).
    pub trusted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the inherited environment (values already interpolated).
        env: BTreeMap<String, String>,
        cwd: Option<std::path::PathBuf>,
    },
    /// Streamable HTTP; `api_key` is sent as `Authorization: Bearer <key>`. Without one, a
    /// server that asks for authorization gets OAuth 2.1 ([`crate::OAuthSettings`]).
    Http { url: String, api_key: Option<String>, oauth: crate::OAuthSettings },
}

/// Why `name` cannot name a server, or `None` when it can: tool names are split on `__`, and
/// providers accept only `[A-Za-z0-9_-]` in a tool name.
pub fn validate_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a server name cannot be empty".into());
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Some(format!(
            "`{name}` contains `{c}`: server names use letters, digits, `_` and `-` only"
        ));
    }
    if name.contains("__") {
        return Some(format!(
            "`{name}` contains `__`, which separates the server from the tool in `mcp__<server>__<tool>`"
        ));
    }
    if name == "config" {
        return Some("`config` is reserved for the configuration tool group".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::validate_name;

    #[test]
    fn names_that_would_break_tool_names_are_refused() {
        assert_eq!(validate_name("everything"), None);
        assert_eq!(validate_name("git-2_x"), None);
        for bad in ["", "a__b", "a b", "a.b", "config", "ü"] {
            assert!(validate_name(bad).is_some(), "{bad:?} accepted");
        }
    }
}
