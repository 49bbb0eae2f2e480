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

/// What a parked call asks a person to review, by kind (the `approval_requested` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalRequest {
    /// A file write: the file and the reviewed diff.
    Write { path: String, diff: FileDiff },
    /// A shell command and the directory it runs in.
    Command { command: String, workdir: String },
    /// A tool of an MCP server (`mcp__<server>__<tool>`).
    McpCall { server: String, tool: String },
    /// Any other tool: its name and arguments (on the event) are what is shown, with the path it
    /// acts on as it resolves (`../x` or a link shown as the file it really is).
    Other { path: Option<String> },
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
    /// The sub-agent that asks (`scout#42`, nested with `>`); `null` for the root agent.
    pub frame_label: Option<String>,
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
    /// The sub-agent that asks (`scout#42`, nested with `>`); `null` for the root agent.
    pub frame_label: Option<String>,
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

/// What a server's question asks to fill (the shape of `skald_mcp::Form`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ElicitationForm {
    /// The server's words (plain text).
    pub message: String,
    /// None: a yes/no confirmation.
    pub fields: Vec<ElicitationField>,
}

/// One field of a server's form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ElicitationField {
    /// The name the server reads the value under.
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(flatten)]
    pub kind: ElicitationFieldKind,
    pub required: bool,
    /// A secret: typed masked, handed to the server from memory, never stored.
    pub sensitive: bool,
    /// Pre-filled (never for a secret).
    #[serde(default)]
    #[ts(type = "unknown")]
    pub default: Option<serde_json::Value>,
}

/// What a field holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ElicitationFieldKind {
    /// `format`: `email`, `uri`, `date` or `date-time`.
    Text {
        #[serde(default)]
        format: Option<String>,
        #[serde(default)]
        #[ts(type = "number | null")]
        min_length: Option<u64>,
        #[serde(default)]
        #[ts(type = "number | null")]
        max_length: Option<u64>,
    },
    Number {
        integer: bool,
        #[serde(default)]
        minimum: Option<f64>,
        #[serde(default)]
        maximum: Option<f64>,
    },
    Boolean,
    /// One of `options`; `labels` as shown, in the same order.
    Choice {
        options: Vec<String>,
        labels: Vec<String>,
    },
    /// Some of `options`.
    MultiChoice {
        options: Vec<String>,
        labels: Vec<String>,
        #[serde(default)]
        #[ts(type = "number | null")]
        min_items: Option<u64>,
        #[serde(default)]
        #[ts(type = "number | null")]
        max_items: Option<u64>,
    },
}

/// A question an MCP server asks during a call (`elicitation/create`), open in the Agent Inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ElicitationItem {
    #[ts(type = "number")]
    pub elicitation_id: i64,
    /// The MCP call it was asked during.
    #[ts(type = "number")]
    pub tool_call_id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub source: String,
    /// The server that asks.
    pub server: String,
    pub form: ElicitationForm,
    pub created_at: String,
    #[ts(type = "number")]
    pub age_secs: i64,
}

/// `answer_elicitation`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ElicitationAnswered {
    /// The waiting call got the answer now (false: the same answer was recorded before).
    pub delivered: bool,
}

/// How a person answers a server's question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    Accept,
    Decline,
    Cancel,
}

impl ElicitationAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        }
    }
}

/// `GET /api/inbox`: oldest first. `total` counts approvals and questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Inbox {
    pub items: Vec<InboxItem>,
    pub questions: Vec<QuestionItem>,
    /// Questions MCP servers ask during calls.
    pub elicitations: Vec<ElicitationItem>,
    #[ts(type = "number")]
    pub total: u64,
}

/// The scope of a human-granted bypass. A scope must fit the call it is granted with: `category`
/// needs a call with a tool category, `mcp_server` an MCP tool; `all` fits every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BypassScopeKind {
    All,
    Category,
    McpServer,
}

/// How long a bypass lasts (decision 15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BypassDuration {
    FifteenMinutes,
    OneHour,
    /// Until `/new` starts another session, at most 24 hours.
    Session,
}

/// A bypass asked for together with an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct BypassRequest {
    pub duration: BypassDuration,
    /// `null`: the narrowest scope that fits the call (its MCP server, else its category).
    pub scope: Option<BypassScopeKind>,
}

/// A human's decision about one call. Who decided is not part of it: each shell names its own
/// surface (`app`, `tray`, `notification`, `web`, `cli`), so a page cannot claim to be another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct DecisionInput {
    pub approved: bool,
    /// Reason for a rejection; reaches the model verbatim.
    pub note: Option<String>,
    /// With an approval only: also allow similar calls of the session without asking. A scope
    /// that does not fit the call is refused (`invalid_input`) and nothing is recorded.
    pub bypass: Option<BypassRequest>,
}

/// A stored bypass: while active, calls of its session that its scope covers run without asking
/// (deny rules still apply).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct BypassView {
    #[ts(type = "number")]
    pub id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    /// The session's source (`web`, `cli`, ...).
    pub source: String,
    pub scope: BypassScopeKind,
    /// The category (`filesystem`, `shell`, `session`) or MCP server; `null` for `all`.
    pub scope_value: Option<String>,
    /// What it covers, for people: "all tools", "shell tools", "MCP server github".
    pub label: String,
    pub duration: BypassDuration,
    /// The surface that granted it (`app`, `tray`, `notification`, `web`, `cli`).
    pub granted_by: String,
    pub granted_at: String,
    pub expires_at: String,
    /// Seconds left at the time of the read.
    #[ts(type = "number")]
    pub remaining_secs: i64,
    /// The call it was approved with, if any.
    #[ts(type = "number | null")]
    pub tool_call_id: Option<i64>,
    /// When and by whom it was revoked (`null` while active).
    pub revoked_at: Option<String>,
    pub revoked_by: Option<String>,
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
    /// The bypass granted with the approval, if one was asked for.
    pub bypass: Option<BypassView>,
}
