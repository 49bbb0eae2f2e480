//! Session list and session debug-tree shapes (`GET /api/sessions`, `GET /api/sessions/:id`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Default page size of every paginated list.
pub const DEFAULT_PER_PAGE: u32 = 20;
/// Largest page a caller may ask for.
pub const MAX_PER_PAGE: u32 = 200;

/// One page of a list, as the reference list API shapes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Page<T> {
    pub items: Vec<T>,
    #[ts(type = "number")]
    pub total: u64,
    pub page: u32,
    pub per_page: u32,
}

/// Filter and pagination of the session list. Every field may be left out: a caller that names
/// none gets the first page of all sessions at the default page size (a misspelt field is
/// refused rather than quietly replaced by its default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
pub struct SessionListQuery {
    /// Only sessions of this source (`web`, `tic`, `cron`, ...); `None` = all.
    pub source: Option<String>,
    /// Text search: sessions whose title contains the text, or whose messages, tool names,
    /// paths or command lines match it (as in `SearchQuery`), newest first like the plain
    /// list, each with its hit count and best hit.
    pub search: Option<String>,
    /// 1-based page number.
    pub page: u32,
    pub per_page: u32,
}

impl Default for SessionListQuery {
    fn default() -> Self {
        Self { source: None, search: None, page: 1, per_page: DEFAULT_PER_PAGE }
    }
}

/// A row of the session list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionSummary {
    #[ts(type = "number")]
    pub id: i64,
    pub title: Option<String>,
    pub source: String,
    pub agent_id: String,
    pub is_ephemeral: bool,
    pub is_interactive: bool,
    pub created_at: String,
    #[ts(type = "number")]
    pub message_count: i64,
    pub last_message_at: Option<String>,
    /// With a search: how many messages and calls of the session match (0 for a title-only
    /// match, and without a search).
    #[ts(type = "number")]
    pub hit_count: i64,
    /// With a search: the session's best hit, to show and open.
    pub best_hit: Option<crate::SearchHit>,
}

/// Session metadata at the top of the debug tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionMeta {
    #[ts(type = "number")]
    pub id: i64,
    pub title: Option<String>,
    pub source: String,
    pub agent_id: String,
    pub is_interactive: bool,
    pub is_ephemeral: bool,
    pub created_at: String,
}

/// Terminal or in-flight state of a tool call (`chat_llm_tools.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Pending,
    Running,
    Done,
    Failed,
    Rejected,
    Cancelled,
}

impl ToolStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => Self::Pending,
            "running" => Self::Running,
            "done" => Self::Done,
            "failed" => Self::Failed,
            "rejected" => Self::Rejected,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }

    /// A terminal status never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Done | Self::Failed | Self::Rejected | Self::Cancelled)
    }
}

/// One row of the session debug tree, in replay order, children spliced after their call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DebugMessage {
    User {
        #[ts(type = "number")]
        message_id: i64,
        content: String,
        is_synthetic: bool,
        failed: bool,
        #[ts(type = "number")]
        stack_id: i64,
        depth: u32,
        created_at: String,
        /// Characters of the whole text; more than `content` holds when the row was cut to a
        /// preview (`truncated`).
        #[ts(type = "number")]
        content_chars: u64,
        /// The text or the reasoning was cut to a preview: `session_item` has the whole row.
        truncated: bool,
    },
    /// Assistant text produced together with tool calls.
    Thinking {
        #[ts(type = "number")]
        message_id: i64,
        content: String,
        reasoning: Option<String>,
        is_synthetic: bool,
        #[ts(type = "number | null")]
        input_tokens: Option<i64>,
        #[ts(type = "number | null")]
        output_tokens: Option<i64>,
        /// What the provider charged for this reply, in USD, when it says.
        cost_usd: Option<f64>,
        #[ts(type = "number")]
        stack_id: i64,
        depth: u32,
        created_at: String,
        /// Characters of the whole text; more than `content` holds when the row was cut to a
        /// preview (`truncated`).
        #[ts(type = "number")]
        content_chars: u64,
        /// The text or the reasoning was cut to a preview: `session_item` has the whole row.
        truncated: bool,
    },
    Assistant {
        #[ts(type = "number")]
        message_id: i64,
        content: String,
        reasoning: Option<String>,
        is_synthetic: bool,
        #[ts(type = "number | null")]
        input_tokens: Option<i64>,
        #[ts(type = "number | null")]
        output_tokens: Option<i64>,
        /// What the provider charged for this reply, in USD, when it says.
        cost_usd: Option<f64>,
        #[ts(type = "number")]
        stack_id: i64,
        depth: u32,
        created_at: String,
        /// Characters of the whole text; more than `content` holds when the row was cut to a
        /// preview (`truncated`).
        #[ts(type = "number")]
        content_chars: u64,
        /// The text or the reasoning was cut to a preview: `session_item` has the whole row.
        truncated: bool,
    },
    Tool {
        #[ts(type = "number")]
        tool_call_id: i64,
        #[ts(type = "number")]
        message_id: i64,
        name: String,
        /// What the call does, e.g. `write_file src/main.rs` (the live `ToolStart`'s
        /// `label_full`); the bare name when the tool is unknown or its arguments do not parse.
        label: String,
        #[ts(type = "unknown")]
        arguments: serde_json::Value,
        status: ToolStatus,
        result: Option<String>,
        /// The change a write call made, recorded when it finished.
        diff: Option<crate::FileDiff>,
        /// The media files and resource links an MCP call returned (empty for other calls).
        media: crate::ToolResultMedia,
        #[ts(type = "number")]
        stack_id: i64,
        depth: u32,
        created_at: String,
        /// Characters of the whole result (0 without one).
        #[ts(type = "number")]
        result_chars: u64,
        /// The result, a long argument string or a large diff was cut from this preview:
        /// `session_item` has the whole call.
        truncated: bool,
    },
    /// A sub-agent frame opened under its spawning call.
    Agent {
        #[ts(type = "number")]
        stack_id: i64,
        agent_id: String,
        depth: u32,
        prompt: Option<String>,
        #[ts(type = "number | null")]
        parent_tool_call_id: Option<i64>,
    },
    AgentEnd {
        #[ts(type = "number")]
        stack_id: i64,
        agent_id: String,
        depth: u32,
    },
}

/// One item of a session's tree: a window's edge or the target of a jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemRef {
    /// A user, agent or assistant message (`message_id`).
    Message {
        #[ts(type = "number")]
        id: i64,
    },
    /// A tool call (`tool_call_id`).
    Tool {
        #[ts(type = "number")]
        id: i64,
    },
    /// The opening row of a sub-agent frame.
    Agent {
        #[ts(type = "number")]
        stack_id: i64,
    },
    /// The closing row of a sub-agent frame.
    AgentEnd {
        #[ts(type = "number")]
        stack_id: i64,
    },
}

impl ItemRef {
    /// The reference of a tree row.
    pub fn of(item: &DebugMessage) -> Self {
        match item {
            DebugMessage::User { message_id, .. }
            | DebugMessage::Thinking { message_id, .. }
            | DebugMessage::Assistant { message_id, .. } => Self::Message { id: *message_id },
            DebugMessage::Tool { tool_call_id, .. } => Self::Tool { id: *tool_call_id },
            DebugMessage::Agent { stack_id, .. } => Self::Agent { stack_id: *stack_id },
            DebugMessage::AgentEnd { stack_id, .. } => Self::AgentEnd { stack_id: *stack_id },
        }
    }
}

/// Where a window of the tree sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WindowAnchor {
    /// The newest rows.
    Latest,
    /// The rows just before `item` (an earlier page), nearest last.
    Before { item: ItemRef },
    /// The rows just after `item` (a later page).
    After { item: ItemRef },
    /// `item` with rows on both sides (a jump to a message, a call or a search hit).
    Around { item: ItemRef },
}

/// Default rows of one window.
pub const DEFAULT_WINDOW_LIMIT: u32 = 100;
/// Most rows one window may hold.
pub const MAX_WINDOW_LIMIT: u32 = 500;

/// A window of a session's tree (`session_window`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WindowQuery {
    pub anchor: WindowAnchor,
    /// Rows wanted (1..=500; larger asks are cut to 500).
    pub limit: u32,
}

impl Default for WindowQuery {
    fn default() -> Self {
        Self { anchor: WindowAnchor::Latest, limit: DEFAULT_WINDOW_LIMIT }
    }
}

/// Part of a session's tree in replay order, keyset-paged on row ids: the rows of one page,
/// with long texts cut to previews.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionWindow {
    pub session: SessionMeta,
    pub items: Vec<DebugMessage>,
    /// Rows exist before the first one (ask with `before` the first row).
    pub has_more_before: bool,
    /// Rows exist after the last one; false means the window reaches the newest row.
    pub has_more_after: bool,
    /// Position in `items` of the anchor of an `around` window.
    pub anchor_index: Option<u32>,
    /// As in `SessionDetail`: messages waiting to be folded in, oldest first.
    pub pending_inputs: Vec<PendingInput>,
    /// Calls of the session waiting for a human decision or answer, oldest first, loaded or not
    /// (what "jump to the pending approval" goes to).
    #[ts(type = "number[]")]
    pub awaiting_human: Vec<i64>,
    /// How the turns that ended within this window's rows ended, oldest first (each goes after
    /// the row `after_message_id` names); a window reaching the newest row has every later end.
    pub turn_ends: Vec<crate::EndedTurn>,
    /// The async tasks the session started, oldest first, loaded or not (a reloaded chat puts
    /// each task's card after its call when that call is in the window).
    pub tasks: Vec<TaskInfo>,
}

/// `GET /api/sessions/:id` — the whole session tree in one read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionDetail {
    pub session: SessionMeta,
    pub messages: Vec<DebugMessage>,
    /// Messages stored but not folded into the history yet (steers waiting for a round boundary
    /// or for a decision), oldest first. Each becomes a `user` message when folded.
    pub pending_inputs: Vec<PendingInput>,
    /// How each turn of the session ended, oldest first (a turn that parked and was continued
    /// has one entry per run).
    pub turn_ends: Vec<crate::EndedTurn>,
    /// The async tasks the session started, oldest first: each runs in its own child session.
    pub tasks: Vec<TaskInfo>,
}

/// A message waiting to be folded into the history (`pending_inputs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PendingInput {
    /// Pending-input id (its own id space, not a message id).
    #[ts(type = "number")]
    pub id: i64,
    pub content: String,
    pub created_at: String,
}

/// What sending a message did (`send_message`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SendResult {
    #[ts(type = "number")]
    pub session_id: i64,
    /// The message was stored as a steer, to be folded into a running turn at its next round
    /// boundary — or, with `waiting_for`, into the turn that continues after the decision.
    pub steered: bool,
    /// Calls waiting for a human decision or answer that the message is queued behind.
    #[ts(type = "number[]")]
    pub waiting_for: Vec<i64>,
}

/// What a session has used: the last request's size against the model's window (`/context`, the
/// chat's context meter) and its spend (`/cost`). Synchronous sub-agents count towards it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionUsage {
    #[ts(type = "number")]
    pub session_id: i64,
    /// Input tokens the provider reported for the latest request; `None` until a reply made
    /// after the latest compaction reports usage (older numbers describe the larger context).
    #[ts(type = "number | null")]
    pub last_input_tokens: Option<i64>,
    #[ts(type = "number | null")]
    pub last_output_tokens: Option<i64>,
    /// The model that answered last.
    pub model: Option<String>,
    /// Window of the session's first model when known (configured or a well-known family).
    #[ts(type = "number | null")]
    pub context_window: Option<u64>,
    /// The context the next request carries, as compaction counts it: the latest reported usage
    /// plus an estimate of what followed; right after a compaction, the estimate of the compacted
    /// request. `None` before the session's first model reply.
    #[ts(type = "number | null")]
    pub context_tokens: Option<i64>,
    /// `context_tokens` is all estimate: no reply since the latest compaction reported usage.
    pub context_estimated: bool,
    #[ts(type = "number")]
    pub input_tokens_total: i64,
    #[ts(type = "number")]
    pub output_tokens_total: i64,
    /// Spend in USD as the provider reported it; `None` when no reply carried a cost.
    pub cost_usd: Option<f64>,
    /// Model replies that carried a cost, of all model replies.
    #[ts(type = "number")]
    pub priced_replies: i64,
    #[ts(type = "number")]
    pub replies: i64,
}

/// What `/compact` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CompactResult {
    /// False when there was nothing useful to summarise.
    pub compacted: bool,
    #[ts(type = "number | null")]
    pub tokens_before: Option<i64>,
    #[ts(type = "number | null")]
    pub tokens_after: Option<i64>,
    #[ts(type = "number")]
    pub summarised_messages: u64,
    /// The summary row, and its text: all the model keeps of the older history.
    #[ts(type = "number | null")]
    pub summary_id: Option<i64>,
    pub summary: Option<String>,
}

/// The session an operation went to (`active_session`, `new_session`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionRef {
    #[ts(type = "number")]
    pub session_id: i64,
}

/// What `stop_turn` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct StopResult {
    /// False when no turn was running (here or in another process).
    pub stopped: bool,
}

/// Whether a session runs a turn now (`turn_running`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TurnStatus {
    pub running: bool,
}

/// What `reset_tool_groups` (`/resettools`) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolGroupsReset {
    /// How many activated tool groups were revoked.
    #[ts(type = "number")]
    pub revoked: u64,
}

/// An async task (`execute_task` mode `async`): the child session it runs in and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TaskInfo {
    #[ts(type = "number")]
    pub task_id: i64,
    /// The session that started it; its report goes there.
    #[ts(type = "number")]
    pub parent_session_id: i64,
    #[ts(type = "number")]
    pub child_session_id: i64,
    /// The `execute_task` call that started it (its card goes after that call in the chat).
    #[ts(type = "number")]
    pub tool_call_id: i64,
    /// `agent#child_session_id`, as the report block names it.
    pub label: String,
    pub agent_id: String,
    pub state: crate::TaskState,
    /// The final answer or the failure, once it ended.
    pub report: Option<String>,
    /// Whether the report reached the parent's history.
    pub delivered: bool,
}
