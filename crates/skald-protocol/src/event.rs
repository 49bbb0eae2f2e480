//! Events the engine emits after the rows they describe are committed ("persist, then emit").
//!
//! Names and fields follow the client protocol; a UI can rebuild everything it shows from the
//! database, so an event missed during a reconnect is never lost information.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ApprovalRequest, FrameOrigin, TurnEnd};

/// An event with where it comes from: the session and source (absent for global events) and
/// the stack frame inside the session (absent for global events and for events about the
/// session as a whole: `sessions_changed`, `new_session`, `bypasses_changed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct EventEnvelope {
    /// The event's place in the outbox every process shares: a client that reconnects asks for
    /// what came after the last one it saw. `null` for events that stay in the process that
    /// emitted them (streamed token deltas, notices about the stream, file watches) and on the
    /// engine's in-process bus, which delivers before the outbox is written. On a
    /// subscription's own `subscribed` and `resync`: the sequence the stream goes on after.
    #[ts(type = "number | null")]
    pub seq: Option<i64>,
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    pub source: Option<String>,
    pub frame: Option<FrameOrigin>,
    pub event: Event,
}

impl EventEnvelope {
    /// An event that belongs to no session (configuration, a transport's own `resync`).
    pub fn global(event: Event) -> Self {
        Self { seq: None, session_id: None, source: None, frame: None, event }
    }

    /// An event about session `session_id` as a whole, not one of its frames.
    pub fn session(session_id: i64, source: &str, event: Event) -> Self {
        Self {
            seq: None,
            session_id: Some(session_id),
            source: Some(source.to_string()),
            frame: None,
            event,
        }
    }

    /// An event from frame `frame` of session `session_id`.
    pub fn framed(session_id: i64, source: &str, frame: FrameOrigin, event: Event) -> Self {
        Self {
            seq: None,
            session_id: Some(session_id),
            source: Some(source.to_string()),
            frame: Some(frame),
            event,
        }
    }
}

/// Which stream a `token_delta` belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DeltaKind {
    Content,
    Reasoning,
}

/// Where an async task (`execute_task` mode `async`) is, as its parent session sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Started by the parent's call; waits for a slot of the background runner.
    Queued,
    /// The runner drives the child session.
    Running,
    /// Ended with a final answer (the report).
    Done,
    /// Ended without an answer: the report is the failure.
    Failed,
    /// Stopped before its answer.
    Cancelled,
    /// The report reached the parent's history (`message_id`).
    Delivered,
    /// A second delivery of the same report was dropped.
    DeliveryDropped,
}

/// Every observable change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A session was created or the session list changed.
    SessionsChanged {},
    /// This receiver may have missed events (it fell further behind than the outbox keeps, or
    /// its connection was re-established without a sequence to resume from): reload what it
    /// shows from the engine. Sent by the subscription, not by an operation.
    Resync {},
    /// The first event of every subscription (a WebSocket, a window's channel): its envelope's
    /// `seq` is where the stream continues from, so a client that later reconnects asks for
    /// what came after it even if nothing happened meanwhile. Sent by the subscription.
    Subscribed {},
    /// The engine's configuration was (re)loaded from disk.
    ConfigReloaded {
        ok: bool,
        error: Option<String>,
    },
    /// A file under the data dir's `agents/` changed (an edit by hand, another window): agent
    /// lists and details shown are stale. Sent where the data dir is watched (the app, `serve`).
    AgentsChanged {},
    /// A source got a new active session; clients clear their view.
    NewSession {
        #[ts(type = "number")]
        session_id: i64,
    },
    /// The message that starts a turn was saved as history row `message_id`.
    UserMessage {
        #[ts(type = "number")]
        message_id: i64,
        content: String,
    },
    /// A message sent while the session was busy was stored as pending input `pending_input_id`
    /// (its own id space: never a history id). It joins the history at the next round boundary
    /// (`steer_folded`); when `waiting_for` names calls, only after the human settled them.
    SteerQueued {
        #[ts(type = "number")]
        pending_input_id: i64,
        content: String,
        /// Calls waiting for a human decision or answer that the message is queued behind.
        #[ts(type = "number[]")]
        waiting_for: Vec<i64>,
    },
    /// Pending input `pending_input_id` became history row `message_id` at a round boundary.
    SteerFolded {
        #[ts(type = "number")]
        pending_input_id: i64,
        #[ts(type = "number")]
        message_id: i64,
        content: String,
    },
    /// A stop dropped these pending inputs before they were folded (kept for the debug view).
    SteersDiscarded {
        #[ts(type = "number[]")]
        pending_input_ids: Vec<i64>,
    },
    /// Whether a turn is running for the session (sent on (re)connect and when it changes).
    TurnRunning {
        running: bool,
    },
    /// Best-effort streamed text; `thinking` / `done` stay authoritative.
    TokenDelta {
        kind: DeltaKind,
        delta: String,
    },
    /// Assistant text produced together with tool calls.
    Thinking {
        #[ts(type = "number")]
        message_id: i64,
        content: String,
        reasoning: Option<String>,
        #[ts(type = "number | null")]
        input_tokens: Option<i64>,
        #[ts(type = "number | null")]
        output_tokens: Option<i64>,
        /// What the provider charged for this reply, in USD, when it says.
        cost_usd: Option<f64>,
    },
    ToolStart {
        #[ts(type = "number")]
        tool_call_id: i64,
        #[ts(type = "number")]
        message_id: i64,
        name: String,
        /// As the model sent them (before working-directory injection).
        #[ts(type = "unknown")]
        arguments: serde_json::Value,
        label_short: String,
        label_full: String,
        path: Option<String>,
    },
    /// A running call's progress as its MCP server reports it (`notifications/progress`):
    /// live only, never stored; the card shows the latest.
    ToolProgress {
        #[ts(type = "number")]
        tool_call_id: i64,
        /// Done so far, in the server's unit.
        progress: f64,
        /// Of how much, when the server knows.
        total: Option<f64>,
        message: Option<String>,
    },
    ToolDone {
        #[ts(type = "number")]
        tool_call_id: i64,
        result: String,
        result_type: ResultType,
        /// The media files and resource links an MCP call returned (empty for other calls).
        #[serde(default)]
        media: crate::ToolResultMedia,
    },
    ToolError {
        #[ts(type = "number")]
        tool_call_id: i64,
        error: String,
        /// What a failed MCP call returned besides its text (empty for other calls).
        #[serde(default)]
        media: crate::ToolResultMedia,
    },
    ToolCancelled {
        #[ts(type = "number")]
        tool_call_id: i64,
    },
    ToolRejected {
        #[ts(type = "number")]
        tool_call_id: i64,
        reason: String,
    },
    /// A call waits for a human decision; `request` says what to review, by kind.
    ApprovalRequested {
        #[ts(type = "number")]
        request_id: i64,
        #[ts(type = "number")]
        tool_call_id: i64,
        tool_name: String,
        /// As the model sent them.
        #[ts(type = "unknown")]
        arguments: serde_json::Value,
        request: ApprovalRequest,
    },
    /// A decision landed (from any surface or process).
    ApprovalResolved {
        #[ts(type = "number")]
        request_id: i64,
        #[ts(type = "number")]
        tool_call_id: i64,
        approved: bool,
    },
    /// The session's bypasses changed (granted, revoked, or revoked by `/new`); clients reload
    /// them. Expiry sends nothing: every read leaves out expired rows.
    BypassesChanged {},
    /// An agent asks the user a question; the call waits for the answer.
    AgentQuestion {
        #[ts(type = "number")]
        request_id: i64,
        #[ts(type = "number")]
        tool_call_id: i64,
        title: String,
        /// Markdown.
        question: String,
        suggested_answers: Vec<String>,
    },
    /// A question was answered (from any surface or process).
    ClarificationResolved {
        #[ts(type = "number")]
        request_id: i64,
        #[ts(type = "number")]
        tool_call_id: i64,
    },
    /// An MCP server asks the user something during call `tool_call_id` (the Agent Inbox lists
    /// it with its form).
    ElicitationRequested {
        #[ts(type = "number")]
        elicitation_id: i64,
        #[ts(type = "number")]
        tool_call_id: i64,
        server: String,
        message: String,
    },
    /// A server's question was answered, declined, cancelled or given up (from any process).
    ElicitationResolved {
        #[ts(type = "number")]
        elicitation_id: i64,
        #[ts(type = "number")]
        tool_call_id: i64,
        action: crate::ElicitationAction,
    },
    /// A write tool changed a file: what changed, for the call's card.
    FileChanged {
        path: String,
        #[ts(type = "number")]
        tool_call_id: i64,
        diff: crate::FileDiff,
    },
    /// `from` failed and `to` answers instead; text streamed from `from` is void (the reply
    /// streams anew).
    ModelFallback {
        from: String,
        to: String,
        reason: String,
    },
    /// A model request failed and goes to the same model again after a pause; text streamed
    /// for the failed attempt is void (the retry streams the reply anew).
    ModelRetry {
        model: String,
        /// Which retry this is (1 = the first).
        attempt: u32,
        reason: String,
    },
    LlmFailed {
        tried: Vec<String>,
        last_error: String,
    },
    /// The reply hit the output length limit.
    Truncated {
        #[ts(type = "number | null")]
        output_tokens: Option<i64>,
    },
    /// An answer was saved but the turn goes on: messages sent while the model wrote it are
    /// folded in next and answered in the same turn (`done` ends the turn).
    InterimAnswer {
        #[ts(type = "number")]
        message_id: i64,
        #[ts(type = "number")]
        stack_id: i64,
        content: String,
        reasoning: Option<String>,
        #[ts(type = "number | null")]
        input_tokens: Option<i64>,
        #[ts(type = "number | null")]
        output_tokens: Option<i64>,
        /// What the provider charged for this reply, in USD, when it says.
        cost_usd: Option<f64>,
    },
    /// The turn finished with a final answer.
    Done {
        #[ts(type = "number")]
        message_id: i64,
        #[ts(type = "number")]
        stack_id: i64,
        content: String,
        #[ts(type = "number | null")]
        input_tokens: Option<i64>,
        #[ts(type = "number | null")]
        output_tokens: Option<i64>,
        /// What the provider charged for this reply, in USD, when it says.
        cost_usd: Option<f64>,
    },
    /// The turn (or one resume of it) ended, as stored: final, cancelled, exhausted, parked or
    /// failed with its reason. Sent after `done` for a final answer.
    TurnEnded {
        outcome: TurnEnd,
    },
    /// History is being summarised.
    Compacting {},
    /// A call cut off while it ran was flagged for the user, or the user reconciled it (the
    /// call's state as stored now).
    InterruptedCall {
        call: crate::InterruptedCall,
    },
    /// An async task of this session changed state (sent on the parent session's root frame).
    TaskUpdate {
        #[ts(type = "number")]
        task_id: i64,
        /// The child session the task runs in.
        #[ts(type = "number")]
        child_session_id: i64,
        /// `agent#id`, as the report block names it.
        label: String,
        state: TaskState,
        /// The report (final answer or failure) once the task ended.
        report: Option<String>,
        /// The parent's history row the report became (`delivered`).
        #[ts(type = "number | null")]
        message_id: Option<i64>,
    },
    /// A scheduled job's run was recorded or changed state (claimed, skipped, running, waiting
    /// for a person, ended); sent globally, so a Jobs page re-reads what it shows.
    JobRunUpdate {
        run: crate::JobRunInfo,
    },
    /// A job was added, edited, enabled, disabled or deleted (`deleted`), by any process; a
    /// Jobs page reads the jobs again.
    JobChanged {
        #[ts(type = "number")]
        job_id: i64,
        deleted: bool,
    },
    /// A notice for the home conversation was written (a job's run ended).
    HomeNotice {
        notice: crate::HomeNotice,
    },
    /// A notice was dismissed; every window showing it drops it.
    HomeNoticeDismissed {
        #[ts(type = "number")]
        notice_id: i64,
    },
    /// Notifications of background work were delivered to this (home) session as one briefing
    /// input; its agent writes the briefing next. Carries no reported text (a notification
    /// shows the count, never what an agent wrote).
    BriefingDelivered {
        notifications: u32,
    },
    CompactionDone {
        #[ts(type = "number")]
        summary_id: i64,
        #[ts(type = "number")]
        covers_up_to_message_id: i64,
        #[ts(type = "number")]
        tokens_before: i64,
        #[ts(type = "number")]
        tokens_after: i64,
    },
}

/// Which kind of event, without its fields: operations declare the kinds they cause, and a UI
/// test checks that it only drives kinds the engine can emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    SessionsChanged,
    Resync,
    Subscribed,
    ConfigReloaded,
    AgentsChanged,
    NewSession,
    UserMessage,
    SteerQueued,
    SteerFolded,
    SteersDiscarded,
    TurnRunning,
    TokenDelta,
    Thinking,
    ToolStart,
    ToolProgress,
    ToolDone,
    ToolError,
    ToolCancelled,
    ToolRejected,
    ApprovalRequested,
    ApprovalResolved,
    BypassesChanged,
    AgentQuestion,
    ClarificationResolved,
    ElicitationRequested,
    ElicitationResolved,
    FileChanged,
    ModelFallback,
    ModelRetry,
    LlmFailed,
    Truncated,
    InterimAnswer,
    Done,
    TurnEnded,
    Compacting,
    InterruptedCall,
    TaskUpdate,
    JobRunUpdate,
    JobChanged,
    HomeNotice,
    HomeNoticeDismissed,
    BriefingDelivered,
    CompactionDone,
}

impl EventKind {
    /// Every kind, in declaration order.
    pub const ALL: &[EventKind] = &[
        EventKind::SessionsChanged,
        EventKind::Resync,
        EventKind::Subscribed,
        EventKind::ConfigReloaded,
        EventKind::AgentsChanged,
        EventKind::NewSession,
        EventKind::UserMessage,
        EventKind::SteerQueued,
        EventKind::SteerFolded,
        EventKind::SteersDiscarded,
        EventKind::TurnRunning,
        EventKind::TokenDelta,
        EventKind::Thinking,
        EventKind::ToolStart,
        EventKind::ToolProgress,
        EventKind::ToolDone,
        EventKind::ToolError,
        EventKind::ToolCancelled,
        EventKind::ToolRejected,
        EventKind::ApprovalRequested,
        EventKind::ApprovalResolved,
        EventKind::BypassesChanged,
        EventKind::AgentQuestion,
        EventKind::ClarificationResolved,
        EventKind::ElicitationRequested,
        EventKind::ElicitationResolved,
        EventKind::FileChanged,
        EventKind::ModelFallback,
        EventKind::ModelRetry,
        EventKind::LlmFailed,
        EventKind::Truncated,
        EventKind::InterimAnswer,
        EventKind::Done,
        EventKind::TurnEnded,
        EventKind::Compacting,
        EventKind::InterruptedCall,
        EventKind::TaskUpdate,
        EventKind::JobRunUpdate,
        EventKind::JobChanged,
        EventKind::HomeNotice,
        EventKind::HomeNoticeDismissed,
        EventKind::BriefingDelivered,
        EventKind::CompactionDone,
    ];

    /// The `type` tag this kind has on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::SessionsChanged => "sessions_changed",
            EventKind::Resync => "resync",
            EventKind::Subscribed => "subscribed",
            EventKind::ConfigReloaded => "config_reloaded",
            EventKind::AgentsChanged => "agents_changed",
            EventKind::NewSession => "new_session",
            EventKind::UserMessage => "user_message",
            EventKind::SteerQueued => "steer_queued",
            EventKind::SteerFolded => "steer_folded",
            EventKind::SteersDiscarded => "steers_discarded",
            EventKind::TurnRunning => "turn_running",
            EventKind::TokenDelta => "token_delta",
            EventKind::Thinking => "thinking",
            EventKind::ToolStart => "tool_start",
            EventKind::ToolProgress => "tool_progress",
            EventKind::ToolDone => "tool_done",
            EventKind::ToolError => "tool_error",
            EventKind::ToolCancelled => "tool_cancelled",
            EventKind::ToolRejected => "tool_rejected",
            EventKind::ApprovalRequested => "approval_requested",
            EventKind::ApprovalResolved => "approval_resolved",
            EventKind::BypassesChanged => "bypasses_changed",
            EventKind::AgentQuestion => "agent_question",
            EventKind::ClarificationResolved => "clarification_resolved",
            EventKind::ElicitationRequested => "elicitation_requested",
            EventKind::ElicitationResolved => "elicitation_resolved",
            EventKind::FileChanged => "file_changed",
            EventKind::ModelFallback => "model_fallback",
            EventKind::ModelRetry => "model_retry",
            EventKind::LlmFailed => "llm_failed",
            EventKind::Truncated => "truncated",
            EventKind::InterimAnswer => "interim_answer",
            EventKind::Done => "done",
            EventKind::TurnEnded => "turn_ended",
            EventKind::Compacting => "compacting",
            EventKind::InterruptedCall => "interrupted_call",
            EventKind::TaskUpdate => "task_update",
            EventKind::JobRunUpdate => "job_run_update",
            EventKind::JobChanged => "job_changed",
            EventKind::HomeNotice => "home_notice",
            EventKind::HomeNoticeDismissed => "home_notice_dismissed",
            EventKind::BriefingDelivered => "briefing_delivered",
            EventKind::CompactionDone => "compaction_done",
        }
    }
}

impl Event {
    /// The kind of this event (the match is exhaustive, so a new event needs a kind).
    pub fn kind(&self) -> EventKind {
        match self {
            Event::SessionsChanged { .. } => EventKind::SessionsChanged,
            Event::Resync { .. } => EventKind::Resync,
            Event::Subscribed { .. } => EventKind::Subscribed,
            Event::ConfigReloaded { .. } => EventKind::ConfigReloaded,
            Event::AgentsChanged {} => EventKind::AgentsChanged,
            Event::NewSession { .. } => EventKind::NewSession,
            Event::UserMessage { .. } => EventKind::UserMessage,
            Event::SteerQueued { .. } => EventKind::SteerQueued,
            Event::SteerFolded { .. } => EventKind::SteerFolded,
            Event::SteersDiscarded { .. } => EventKind::SteersDiscarded,
            Event::TurnRunning { .. } => EventKind::TurnRunning,
            Event::TokenDelta { .. } => EventKind::TokenDelta,
            Event::Thinking { .. } => EventKind::Thinking,
            Event::ToolStart { .. } => EventKind::ToolStart,
            Event::ToolProgress { .. } => EventKind::ToolProgress,
            Event::ToolDone { .. } => EventKind::ToolDone,
            Event::ToolError { .. } => EventKind::ToolError,
            Event::ToolCancelled { .. } => EventKind::ToolCancelled,
            Event::ToolRejected { .. } => EventKind::ToolRejected,
            Event::ApprovalRequested { .. } => EventKind::ApprovalRequested,
            Event::ApprovalResolved { .. } => EventKind::ApprovalResolved,
            Event::BypassesChanged { .. } => EventKind::BypassesChanged,
            Event::AgentQuestion { .. } => EventKind::AgentQuestion,
            Event::ClarificationResolved { .. } => EventKind::ClarificationResolved,
            Event::ElicitationRequested { .. } => EventKind::ElicitationRequested,
            Event::ElicitationResolved { .. } => EventKind::ElicitationResolved,
            Event::FileChanged { .. } => EventKind::FileChanged,
            Event::ModelFallback { .. } => EventKind::ModelFallback,
            Event::ModelRetry { .. } => EventKind::ModelRetry,
            Event::LlmFailed { .. } => EventKind::LlmFailed,
            Event::Truncated { .. } => EventKind::Truncated,
            Event::InterimAnswer { .. } => EventKind::InterimAnswer,
            Event::Done { .. } => EventKind::Done,
            Event::TurnEnded { .. } => EventKind::TurnEnded,
            Event::Compacting { .. } => EventKind::Compacting,
            Event::InterruptedCall { .. } => EventKind::InterruptedCall,
            Event::TaskUpdate { .. } => EventKind::TaskUpdate,
            Event::JobRunUpdate { .. } => EventKind::JobRunUpdate,
            Event::JobChanged { .. } => EventKind::JobChanged,
            Event::HomeNotice { .. } => EventKind::HomeNotice,
            Event::HomeNoticeDismissed { .. } => EventKind::HomeNoticeDismissed,
            Event::BriefingDelivered { .. } => EventKind::BriefingDelivered,
            Event::CompactionDone { .. } => EventKind::CompactionDone,
        }
    }
}

/// How a tool result is to be displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    String,
    Json,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn each_kind_is_named_as_serde_names_it() {
        for kind in EventKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str(), "{kind:?}");
        }
    }

    #[test]
    fn the_kinds_are_exactly_the_event_types_on_the_wire() {
        // ts-rs renders the union from serde's own attributes, so its tags are the wire's.
        let decl = Event::decl();
        let tags: Vec<&str> =
            decl.split("\"type\": \"").skip(1).filter_map(|rest| rest.split('"').next()).collect();
        let kinds: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(tags, kinds);
    }

    #[test]
    fn an_envelope_names_its_frame_and_a_session_wide_one_none() {
        let running = Event::TurnRunning { running: true };
        let framed = EventEnvelope::framed(7, "web", FrameOrigin::root(3), running.clone());
        assert_eq!(
            serde_json::to_value(&framed).unwrap(),
            serde_json::json!({
                "seq": null,
                "session_id": 7,
                "source": "web",
                "frame": { "stack_id": 3, "depth": 0, "label": null, "parent_tool_call_id": null },
                "event": { "type": "turn_running", "running": true },
            })
        );
        let child = FrameOrigin::root(3).child(9, "researcher", 4);
        let json = serde_json::to_value(EventEnvelope::framed(7, "web", child, running)).unwrap();
        assert_eq!(json["frame"]["depth"], 1);
        assert_eq!(json["frame"]["label"], "researcher#9");
        assert_eq!(json["frame"]["parent_tool_call_id"], 4);
        let whole = EventEnvelope::session(7, "web", Event::SessionsChanged {});
        assert_eq!(serde_json::to_value(&whole).unwrap()["frame"], serde_json::Value::Null);
        let back: EventEnvelope = serde_json::from_value(json).unwrap();
        assert_eq!(back.frame.map(|f| f.stack_id), Some(9));
    }

    #[test]
    fn an_event_knows_its_kind() {
        let event = Event::TurnRunning { running: true };
        assert_eq!(event.kind(), EventKind::TurnRunning);
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["type"], event.kind().as_str());
    }
}
