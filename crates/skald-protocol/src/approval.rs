//! Approvals on the wire: inbox items, the diff a human reviews, decisions.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of review an approval asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKind {
    /// A file write: the diff is shown.
    Write,
    /// A shell command: command line and working directory are shown.
    Command,
    /// Any other tool: name and arguments are shown.
    Tool,
}

/// How a file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    Modify,
    Create,
    Delete,
    /// Binary content: only sizes are shown.
    Binary,
    /// Too large to diff line by line: only a summary is shown.
    TooLarge,
    /// Old and new content are identical.
    Unchanged,
}

/// One side-by-side cell of a changed line: a run of text, marked when it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DiffSpan {
    pub text: String,
    pub changed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DiffLineTag {
    Context,
    Delete,
    Insert,
}

/// A line of a hunk with its numbers on each side and word-level spans for changed lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DiffLine {
    pub tag: DiffLineTag,
    pub old_line: Option<u32>,
    pub new_line: Option<u32>,
    /// The line without its line ending.
    pub text: String,
    /// For a changed line paired with its counterpart: which words changed. Empty otherwise.
    pub spans: Vec<DiffSpan>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DiffHunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub lines: Vec<DiffLine>,
}

/// The reviewed change of one file, computed when the call was parked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileDiff {
    pub path: String,
    pub kind: DiffKind,
    pub hunks: Vec<DiffHunk>,
    pub added: u32,
    pub removed: u32,
    /// The unified diff text (`---`/`+++`/`@@`), for copying and terminals.
    pub unified: String,
    /// One-line human summary ("new file, 12 lines", "binary file, 3 KB → 4 KB", ...).
    pub summary: String,
    /// Whether the old side used CRLF line endings (shown as a badge).
    pub crlf: bool,
    /// Whether the old / new side lacked a final newline.
    pub old_missing_newline: bool,
    pub new_missing_newline: bool,
}

/// An open approval in the Agent Inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InboxItem {
    /// The tool call id; also the approval id.
    #[ts(type = "number")]
    pub tool_call_id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub source: String,
    pub agent_id: String,
    pub context_label: Option<String>,
    pub tool_name: String,
    /// `filesystem`, `shell`, `session`; `null` for MCP or unknown tools.
    pub tool_category: Option<String>,
    /// Parsed from `mcp__<server>__<tool>`.
    pub mcp_server: Option<String>,
    pub kind: ApprovalKind,
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
    /// One-line description of what will happen.
    pub summary: String,
    pub path: Option<String>,
    pub command: Option<String>,
    pub workdir: Option<String>,
    pub diff: Option<FileDiff>,
    pub created_at: String,
    /// Seconds since the call started waiting (at the time of the read).
    #[ts(type = "number")]
    pub age_secs: i64,
}

/// An open clarification question in the Agent Inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct QuestionItem {
    /// The tool call id of the `ask_user_clarification` call; also the question id.
    #[ts(type = "number")]
    pub tool_call_id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub source: String,
    pub agent_id: String,
    pub context_label: Option<String>,
    pub title: String,
    /// Markdown.
    pub question: String,
    pub suggested_answers: Vec<String>,
    pub created_at: String,
    #[ts(type = "number")]
    pub age_secs: i64,
}

/// A recorded answer to a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Answer {
    #[ts(type = "number")]
    pub tool_call_id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub answer: String,
    /// Whether a turn picked the answer up right away (false: the next resume settles it).
    pub resumed: bool,
}

/// `GET /api/inbox`: oldest first. `total` counts approvals and questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Inbox {
    pub items: Vec<InboxItem>,
    pub questions: Vec<QuestionItem>,
    #[ts(type = "number")]
    pub total: u64,
}

/// The scope of a human-granted bypass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BypassScopeKind {
    All,
    Category,
    McpServer,
}

/// A human's decision about one call. Who decided is not part of it: each shell names its own
/// surface (`app`, `tray`, `notification`, `web`, `cli`), so a page cannot claim to be another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct DecisionInput {
    pub approved: bool,
    /// Reason for a rejection; reaches the model verbatim.
    pub note: Option<String>,
    /// With an approval: also allow similar calls for this many seconds (0 = rest of the session).
    #[ts(type = "number | null")]
    pub bypass_secs: Option<u64>,
    pub bypass_scope: Option<BypassScopeKind>,
}

/// A recorded decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Decision {
    #[ts(type = "number")]
    pub tool_call_id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub approved: bool,
    pub note: Option<String>,
    /// The surface that decided: `app`, `tray`, `notification`, `web` or `cli`.
    pub decided_by: String,
    pub decided_at: String,
    /// Whether a turn picked the decision up right away (false: it is settled on the next resume).
    pub resumed: bool,
}
