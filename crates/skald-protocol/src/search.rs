//! Full-text search shapes: ranked hits across sessions, matches inside one session, snippets.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Default number of hits of a cross-session search.
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;

/// A stretch of a snippet. Stretches with `hit` matched the query: a surface shows them
/// highlighted (the UI as `<mark>` elements, never as HTML it parses).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SnippetPart {
    pub text: String,
    pub hit: bool,
}

/// What a match is in: a message of this role, or a tool call (its name, paths or command).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HitKind {
    User,
    Assistant,
    /// A parent agent's prompt to a sub-agent.
    Agent,
    Tool,
}

/// Where a match is: a message, or a tool call and the assistant message that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MatchRef {
    #[ts(type = "number")]
    pub message_id: i64,
    /// Set when the match is a tool call (`kind: tool`).
    #[ts(type = "number | null")]
    pub tool_call_id: Option<i64>,
    pub kind: HitKind,
}

/// Cross-session search: words of messages (prefix-matched as the last one is typed) and
/// substrings of tool names, paths and command lines. Any text is valid; FTS syntax is not
/// interpreted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SearchQuery {
    pub text: String,
    /// Most hits to return (1-200); ask again with a larger limit for more.
    pub limit: u32,
}

impl SearchQuery {
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), limit: DEFAULT_SEARCH_LIMIT }
    }
}

/// One search hit with the text around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SearchHit {
    #[ts(type = "number")]
    pub session_id: i64,
    pub session_title: Option<String>,
    pub session_source: String,
    pub at: MatchRef,
    /// The called tool, for a tool hit.
    pub tool_name: Option<String>,
    pub snippet: Vec<SnippetPart>,
    /// FTS5 bm25 rank: lower is better. Comparable within one answer only.
    pub rank: f64,
    /// When the message or call was stored.
    pub created_at: String,
}

/// Hits best first; `more` when further hits exist beyond the limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    pub more: bool,
}

/// Every match of a text inside one session, in session order (find-in-session's next/previous).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionMatches {
    #[ts(type = "number")]
    pub session_id: i64,
    pub matches: Vec<MatchRef>,
}
