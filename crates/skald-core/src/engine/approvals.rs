//! Human decisions from any surface, the Agent Inbox, and resuming a parked or crashed turn.

use chrono::DateTime;
use skald_protocol::{
    Answer, Decision, DecisionInput, Event, EventEnvelope, FileDiff, Inbox, InboxItem, QuestionItem,
};
use skald_store::repo::approvals::NewDecision;

use super::Engine;
use crate::error::EngineError;
use crate::tools::names;

impl Engine {
    /// Every open approval across all sessions, oldest first.
    pub async fn inbox(&self) -> Result<Inbox, EngineError> {
        let rows = self.store().open_approvals().await?;
        let now = self.store().clock().now();
        let mut items = Vec::with_capacity(rows.len());
        for r in rows {
            let frame_label = self.frame_label(r.stack_id).await?;
            items.push({
                let category = self.inner.tools.category_of(&r.tool_name);
                let mcp_server = names::mcp_server(&r.tool_name).map(str::to_string);
                let age = age_secs(now, &r.created_at);
                InboxItem {
                    tool_call_id: r.tool_call_id,
                    session_id: r.session_id,
                    source: r.source,
                    agent_id: r.agent_id,
                    context_label: r.context_label,
                    frame_label,
                    tool_name: r.tool_name,
                    tool_category: category.map(|c| c.as_str().to_string()),
                    mcp_server,
                    kind: r.kind,
                    arguments: serde_json::from_str(&r.arguments)
                        .unwrap_or(serde_json::Value::Null),
                    summary: r.summary,
                    path: r.path,
                    command: r.command,
                    workdir: r.workdir,
                    diff: r.diff.as_deref().and_then(|d| serde_json::from_str::<FileDiff>(d).ok()),
                    created_at: r.created_at,
                    age_secs: age,
                }
            });
        }
        let mut questions = Vec::new();
        for q in self.store().open_questions().await? {
            let frame_label = self.frame_label(q.stack_id).await?;
            questions.push(QuestionItem {
                tool_call_id: q.tool_call_id,
                session_id: q.session_id,
                source: q.source,
                agent_id: q.agent_id,
                context_label: q.context_label,
                frame_label,
                title: q.title,
                question: q.question,
                suggested_answers: serde_json::from_str(&q.suggested_answers).unwrap_or_default(),
                age_secs: age_secs(now, &q.created_at),
                created_at: q.created_at,
            });
        }
        let elicitations = self.open_elicitations().await?;
        let total = (items.len() + questions.len() + elicitations.len()) as u64;
        Ok(Inbox { items, questions, elicitations, total })
    }

    /// Which sub-agent asks, as the live stream labels it (`None` for the root agent).
    async fn frame_label(&self, stack_id: i64) -> Result<Option<String>, EngineError> {
        Ok(crate::session::origin::of_frame(self.store(), stack_id).await?.label)
    }

    /// Records the answer to a clarification question (single assignment, any process); a live
    /// turn continues at once, an engine running `start_background` continues a parked one.
    pub async fn answer(
        &self,
        tool_call_id: i64,
        answer: &str,
        decided_by: &str,
    ) -> Result<Answer, EngineError> {
        let answer = answer.trim();
        if answer.is_empty() {
            return Err(EngineError::InvalidInput("the answer is empty".into()));
        }
        let store = self.store();
        let q = store
            .question(tool_call_id)
            .await?
            .ok_or_else(|| EngineError::NotFound(format!("no question {tool_call_id}")))?;
        let frame = crate::session::origin::of_frame(store, q.stack_id).await?;
        let (session_id, source) = (q.session_id, q.source.clone());
        // Only a fresh answer commits, and only a commit says it.
        let resolved = move |_| {
            let event = Event::ClarificationResolved { request_id: tool_call_id, tool_call_id };
            vec![EventEnvelope::framed(session_id, &source, frame, event)]
        };
        self.commit_events(store.answer_question(tool_call_id, answer, decided_by), resolved)
            .await?;
        let resumed = self.goes_on(q.session_id).await?;
        Ok(Answer { tool_call_id, session_id: q.session_id, answer: answer.to_string(), resumed })
    }

    /// Records a human decision about a parked call (single assignment: the first wins, a repeat
    /// is a no-op, a conflicting one is refused), with the bypass it asks for in the same
    /// transaction. `decided_by` names the surface it came from, as the shell knows it. A bypass
    /// scope that does not fit the call is refused before anything is recorded. A live turn
    /// continues within a second; with `start_background` a parked one is continued here.
    pub async fn decide(
        &self,
        tool_call_id: i64,
        input: DecisionInput,
        decided_by: &str,
    ) -> Result<Decision, EngineError> {
        let store = self.store();
        let request = store.approval_request(tool_call_id).await?.ok_or_else(|| {
            EngineError::Conflict(format!("tool call {tool_call_id} is not waiting for a decision"))
        })?;
        let note =
            input.note.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_string);
        let decided_by = if decided_by.trim().is_empty() { "unknown" } else { decided_by.trim() };
        let bypass =
            self.bypass_for_decision(&request, input.approved, input.bypass, decided_by)?;
        let granted = bypass.is_some();
        let session_id = request.session_id;
        let source = store.session(session_id).await?.source;
        let frame = crate::session::origin::of_frame(store, request.stack_id).await?;
        let (approved, bypass_changed) = (input.approved, granted);
        // Only a fresh decision commits (a repeat is a no-op), and only a commit says it.
        let resolved = move |_| {
            let event =
                Event::ApprovalResolved { request_id: tool_call_id, tool_call_id, approved };
            let mut events = vec![EventEnvelope::framed(session_id, &source, frame, event)];
            if bypass_changed {
                let changed = Event::BypassesChanged {};
                events.push(EventEnvelope::session(session_id, &source, changed));
            }
            events
        };
        let decision = NewDecision {
            tool_call_id,
            approved: input.approved,
            note: note.clone(),
            decided_by: decided_by.to_string(),
            bypass,
        };
        let (row, _fresh) = self.commit_events(store.decide(&decision), resolved).await?;
        let bypass = match granted {
            true => self.call_bypass(tool_call_id).await?,
            false => None,
        };
        let resumed = self.goes_on(session_id).await?;
        Ok(Decision {
            tool_call_id,
            session_id,
            approved: row.approved,
            note: row.note,
            decided_by: row.decided_by,
            decided_at: row.created_at,
            resumed,
            bypass,
        })
    }

    /// Whether the session's turn goes on after a decision by itself: it runs (here or
    /// elsewhere, and reads the decision itself), or a live engine continues it from the queue
    /// (one that runs the background, or one that waits on this session).
    async fn goes_on(&self, session_id: i64) -> Result<bool, EngineError> {
        if self.is_running(session_id).await? {
            return Ok(true);
        }
        if self.inner.lifecycle.background() || self.adopted(session_id) {
            self.wake_worker();
            return Ok(true);
        }
        let alive = self.liveness();
        Ok(self.store().continued_by_someone(session_id, &alive).await?)
    }
}

fn age_secs(now: chrono::DateTime<chrono::Utc>, created_at: &str) -> i64 {
    DateTime::parse_from_rfc3339(created_at)
        .map(|t| (now - t.to_utc()).num_seconds().max(0))
        .unwrap_or(0)
}
