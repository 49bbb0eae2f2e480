//! Session bypasses: a human's temporary "allow what would need approval". In memory only; never
//! converts a Deny; cleared on `/new`, on restart and when they expire.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::tools::ToolCategory;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum BypassScope {
    All,
    Category(ToolCategory),
    McpServer(String),
}

impl BypassScope {
    /// The scope a human asked for (`all`, `category`, `mcp_server`), applied to this call; when
    /// none was named: the call's category, else its MCP server, else everything.
    pub fn for_call(requested: Option<&str>, tool: &str, category: Option<ToolCategory>) -> Self {
        let server = tool.strip_prefix("mcp__").and_then(|r| r.split_once("__")).map(|(s, _)| s);
        match (requested, category, server) {
            (Some("all"), ..) => Self::All,
            (Some("mcp_server" | "mcpserver"), _, Some(s)) | (None, None, Some(s)) => {
                Self::McpServer(s.to_string())
            }
            (Some("category") | None, Some(c), _) => Self::Category(c),
            _ => Self::All,
        }
    }
}

#[derive(Debug, Clone)]
struct Bypass {
    scope: BypassScope,
    expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Default)]
pub struct BypassRegistry {
    by_session: Mutex<HashMap<i64, Vec<Bypass>>>,
}

impl BypassRegistry {
    pub fn grant(&self, session_id: i64, scope: BypassScope, expires_at: Option<DateTime<Utc>>) {
        self.by_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(session_id)
            .or_default()
            .push(Bypass { scope, expires_at });
    }

    pub fn clear(&self, session_id: i64) {
        self.by_session.lock().unwrap_or_else(|p| p.into_inner()).remove(&session_id);
    }

    /// Whether a live bypass covers this call (expired entries are pruned on the way).
    pub fn covers(
        &self,
        session_id: i64,
        tool: &str,
        category: Option<ToolCategory>,
        now: DateTime<Utc>,
    ) -> bool {
        let mut map = self.by_session.lock().unwrap_or_else(|p| p.into_inner());
        let Some(list) = map.get_mut(&session_id) else { return false };
        list.retain(|b| b.expires_at.is_none_or(|e| e > now));
        list.iter().any(|b| match &b.scope {
            BypassScope::All => true,
            BypassScope::Category(c) => Some(*c) == category,
            BypassScope::McpServer(s) => tool.starts_with(&format!("mcp__{s}__")),
        })
    }
}
