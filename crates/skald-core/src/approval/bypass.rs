//! Session bypasses: what a scope covers and which scopes fit a call. A bypass is a stored row
//! (`skald_store::repo::bypasses`) that every process honours; a scope that does not fit the call
//! it is granted with is refused, never widened, and no bypass ever converts a Deny.

use chrono::Duration;
use skald_protocol::{BypassDuration, BypassScopeKind};

use crate::tools::{ToolCategory, names};

/// What a bypass covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BypassScope {
    All,
    Category(ToolCategory),
    McpServer(String),
}

/// A requested scope that does not fit the call: the human is told, and chooses again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeMismatch {
    #[error(
        "`mcp_server` bypass does not fit `{tool}`: it is not an MCP tool; choose {}",
        alternatives(.category, &None)
    )]
    NotAnMcpTool { tool: String, category: Option<ToolCategory> },
    #[error(
        "`category` bypass does not fit `{tool}`: it has no tool category; choose {}",
        alternatives(&None, .server)
    )]
    NoCategory { tool: String, server: Option<String> },
    #[error("no narrow bypass scope fits `{tool}` (no category, not an MCP tool); choose `all`")]
    NoNarrowScope { tool: String },
}

/// The scopes that do fit, for the error message.
fn alternatives(category: &Option<ToolCategory>, server: &Option<String>) -> String {
    match (category, server) {
        (Some(c), _) => format!("`category` ({}) or `all`", c.as_str()),
        (None, Some(s)) => format!("`mcp_server` ({s}) or `all`"),
        (None, None) => "`all`".to_string(),
    }
}

impl BypassScope {
    /// The scope a human asked for, applied to the call it is granted with; `None` asks for the
    /// narrowest that fits (the call's MCP server, else its category). `category` is what
    /// `ToolRegistry::category_of` says for the call.
    pub fn for_call(
        requested: Option<BypassScopeKind>,
        tool: &str,
        category: Option<ToolCategory>,
    ) -> Result<Self, ScopeMismatch> {
        let server = names::mcp_server(tool).map(str::to_string);
        match (requested, category, server) {
            (Some(BypassScopeKind::All), ..) => Ok(Self::All),
            (Some(BypassScopeKind::McpServer) | None, _, Some(s)) => Ok(Self::McpServer(s)),
            (Some(BypassScopeKind::Category) | None, Some(c), _) => Ok(Self::Category(c)),
            (Some(BypassScopeKind::McpServer), category, None) => {
                Err(ScopeMismatch::NotAnMcpTool { tool: tool.to_string(), category })
            }
            (Some(BypassScopeKind::Category), None, server) => {
                Err(ScopeMismatch::NoCategory { tool: tool.to_string(), server })
            }
            (None, None, None) => Err(ScopeMismatch::NoNarrowScope { tool: tool.to_string() }),
        }
    }

    /// Rebuilds a stored scope; `None` for values this build does not know (they cover nothing).
    pub fn from_stored(kind: &str, value: Option<&str>) -> Option<Self> {
        match (kind, value) {
            ("all", None) => Some(Self::All),
            ("category", Some(c)) => ToolCategory::from_name(c).map(Self::Category),
            ("mcp_server", Some(s)) => Some(Self::McpServer(s.to_string())),
            _ => None,
        }
    }

    pub fn kind(&self) -> BypassScopeKind {
        match self {
            Self::All => BypassScopeKind::All,
            Self::Category(_) => BypassScopeKind::Category,
            Self::McpServer(_) => BypassScopeKind::McpServer,
        }
    }

    /// The stored kind name (`all`, `category`, `mcp_server`).
    pub fn kind_name(&self) -> &'static str {
        scope_kind_name(self.kind())
    }

    /// The category or server it names; `None` for `All`.
    pub fn value(&self) -> Option<String> {
        match self {
            Self::All => None,
            Self::Category(c) => Some(c.as_str().to_string()),
            Self::McpServer(s) => Some(s.clone()),
        }
    }

    /// What it covers, for people.
    pub fn label(&self) -> String {
        match self {
            Self::All => "all tools".to_string(),
            Self::Category(c) => format!("{} tools", c.as_str()),
            Self::McpServer(s) => format!("MCP server {s}"),
        }
    }

    /// Whether a call of `tool` (of `category`) falls under this scope.
    pub fn covers(&self, tool: &str, category: Option<ToolCategory>) -> bool {
        match self {
            Self::All => true,
            Self::Category(c) => Some(*c) == category,
            Self::McpServer(s) => names::mcp_server(tool) == Some(s.as_str()),
        }
    }
}

/// The stored name of a scope kind.
pub fn scope_kind_name(k: BypassScopeKind) -> &'static str {
    match k {
        BypassScopeKind::All => "all",
        BypassScopeKind::Category => "category",
        BypassScopeKind::McpServer => "mcp_server",
    }
}

pub fn scope_kind_from_name(name: &str) -> Option<BypassScopeKind> {
    [BypassScopeKind::All, BypassScopeKind::Category, BypassScopeKind::McpServer]
        .into_iter()
        .find(|k| scope_kind_name(*k) == name)
}

/// How long a bypass of this duration lasts: "this session" ends at `/new` and after a day at
/// the latest, so no bypass outlives a forgotten window.
pub fn lifetime(d: BypassDuration) -> Duration {
    match d {
        BypassDuration::FifteenMinutes => Duration::minutes(15),
        BypassDuration::OneHour => Duration::hours(1),
        BypassDuration::Session => Duration::hours(24),
    }
}

/// The stored duration name.
pub fn duration_name(d: BypassDuration) -> &'static str {
    match d {
        BypassDuration::FifteenMinutes => "fifteen_minutes",
        BypassDuration::OneHour => "one_hour",
        BypassDuration::Session => "session",
    }
}

pub fn duration_from_name(name: &str) -> Option<BypassDuration> {
    [BypassDuration::FifteenMinutes, BypassDuration::OneHour, BypassDuration::Session]
        .into_iter()
        .find(|d| duration_name(*d) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_that_does_not_fit_is_refused_never_widened() {
        let refused = |kind, tool, category| {
            BypassScope::for_call(Some(kind), tool, category).map_err(|e| e.to_string())
        };
        assert_eq!(
            refused(BypassScopeKind::McpServer, "execute_cmd", Some(ToolCategory::Shell)),
            Err("`mcp_server` bypass does not fit `execute_cmd`: it is not an MCP tool; choose \
                 `category` (shell) or `all`"
                .to_string())
        );
        assert_eq!(
            refused(BypassScopeKind::Category, "mcp__gh__issue", None),
            Err("`category` bypass does not fit `mcp__gh__issue`: it has no tool category; \
                 choose `mcp_server` (gh) or `all`"
                .to_string())
        );
    }

    #[test]
    fn the_default_is_the_narrowest_scope_that_fits() {
        let fs = Some(ToolCategory::Filesystem);
        assert_eq!(
            BypassScope::for_call(None, "write_file", fs),
            Ok(BypassScope::Category(ToolCategory::Filesystem))
        );
        assert_eq!(
            BypassScope::for_call(None, "mcp__gh__issue", None),
            Ok(BypassScope::McpServer("gh".into()))
        );
        assert_eq!(
            BypassScope::for_call(Some(BypassScopeKind::All), "write_file", fs),
            Ok(BypassScope::All)
        );
    }

    #[test]
    fn scopes_cover_only_their_calls_and_round_trip_through_storage() {
        let shell = BypassScope::Category(ToolCategory::Shell);
        assert!(shell.covers("execute_cmd", Some(ToolCategory::Shell)));
        assert!(!shell.covers("write_file", Some(ToolCategory::Filesystem)));
        let gh = BypassScope::McpServer("gh".into());
        assert!(gh.covers("mcp__gh__issue", None) && !gh.covers("mcp__ghx__issue", None));
        for s in [BypassScope::All, shell, gh] {
            assert_eq!(BypassScope::from_stored(s.kind_name(), s.value().as_deref()), Some(s));
        }
        assert_eq!(BypassScope::from_stored("category", Some("telepathy")), None);
    }
}
