//! Human decisions from any surface, the Agent Inbox, and resuming a parked or crashed turn.

use std::time::Duration;

use chrono::DateTime;
use skald_protocol::{
    Answer, Decision, DecisionInput, Event, EventEnvelope, FileDiff, Inbox, InboxItem, QuestionItem,
};
use skald_store::repo::approvals::NewDecision;

use super::Engine;
use super::chat::{Step, TurnSlot};
use crate::error::EngineError;
use crate::tools::names;
use crate::turn::{ParkMode, TurnOutcome};

/// How often the app / `serve` looks for decisions written by other processes.
const AUTO_RESUME_POLL: Duration = Duration::from_secs(1);

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
        let total = (items.len() + questions.len()) as u64;
        Ok(Inbox { items, questions, total })
    }

    /// Which sub-agent asks, as the live stream labels it (`None` for the root agent).
    async fn frame_label(&self, stack_id: i64) -> Result<Option<String>, EngineError> {
        Ok(crate::session::origin::of_frame(self.store(), stack_id).await?.label)
    }

    /// Records the answer to a clarification question (single assignment, any process); a live
    /// turn continues at once, an auto-resuming engine continues a parked one.
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
        let fresh = store.answer_question(tool_call_id, answer, decided_by).await?;
        if fresh {
            let frame = crate::session::origin::of_frame(store, q.stack_id).await?;
            self.emit(EventEnvelope::framed(
                q.session_id,
                &q.source,
                frame,
                Event::ClarificationResolved { request_id: tool_call_id, tool_call_id },
            ));
            self.inner.decisions.notify_waiters();
        }
        let live = self.is_running(q.session_id).await?;
        let resumed = live || (self.inner.auto_resume && self.spawn_resume(q.session_id));
        Ok(Answer { tool_call_id, session_id: q.session_id, answer: answer.to_string(), resumed })
    }

    /// Records a human decision about a parked call (single assignment: the first wins, a repeat
    /// is a no-op, a conflicting one is refused), with the bypass it asks for in the same
    /// transaction. `decided_by` names the surface it came from, as the shell knows it. A bypass
    /// scope that does not fit the call is refused before anything is recorded. A live turn
    /// continues within a second; with auto-resume a parked one is continued here.
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
        let (row, fresh) = store
            .decide(&NewDecision {
                tool_call_id,
                approved: input.approved,
                note: note.clone(),
                decided_by: decided_by.to_string(),
                bypass,
            })
            .await?;
        let session_id = request.session_id;
        if fresh {
            let source = store.session(session_id).await?.source;
            let frame = crate::session::origin::of_frame(store, request.stack_id).await?;
            self.emit(EventEnvelope::framed(
                session_id,
                &source,
                frame,
                Event::ApprovalResolved {
                    request_id: tool_call_id,
                    tool_call_id,
                    approved: input.approved,
                },
            ));
            if granted {
                self.emit_bypasses_changed(session_id, &source);
            }
            self.inner.decisions.notify_waiters();
        }
        let bypass = match granted {
            true => self.call_bypass(tool_call_id).await?,
            false => None,
        };
        let live = self.is_running(session_id).await?;
        let resumed = live || (self.inner.auto_resume && self.spawn_resume(session_id));
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

    /// Settles recorded decisions and continues the session's turn in this process (folding
    /// steers queued meanwhile), waiting for further decisions when `mode` is `Wait`.
    pub async fn resume(
        &self,
        session_id: i64,
        mode: ParkMode,
    ) -> Result<TurnOutcome, EngineError> {
        let session = self.store().session(session_id).await?;
        let handle = self.inner.sessions.handle(session_id);
        let busy =
            || EngineError::Conflict(format!("session {session_id} is already running a turn"));
        let Ok(guard) = handle.processing.clone().try_lock_owned() else {
            return Err(busy());
        };
        if self.runner_elsewhere(session_id).await? {
            return Err(busy());
        }
        let chain = self.model_chain()?;
        let slot = TurnSlot { guard, chain, cancel: handle.begin() };
        Ok(self.run_steps(session_id, &session.source, Step::Resume, slot, mode).await)
    }

    /// Starts a background resume unless the session is busy. Returns whether one started.
    fn spawn_resume(&self, session_id: i64) -> bool {
        let handle = self.inner.sessions.handle(session_id);
        if handle.is_processing() {
            return false;
        }
        let engine = self.clone();
        tokio::spawn(async move {
            if let Err(e) = engine.resume(session_id, ParkMode::Wait).await {
                tracing::warn!(session_id, "auto-resume failed: {e}");
            }
        });
        true
    }

    /// For the app and `serve`: continues parked turns whose decision was written by another
    /// process (e.g. `skald approve`) while no turn is live. Runs until the engine is dropped.
    pub fn spawn_auto_resume(&self) -> tokio::task::JoinHandle<()> {
        let weak = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(AUTO_RESUME_POLL).await;
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                let Ok(mut ids) = engine.store().sessions_with_unsettled_decisions().await else {
                    continue;
                };
                if let Ok(more) = engine.store().sessions_with_unsettled_answers().await {
                    ids.extend(more);
                    ids.sort_unstable();
                    ids.dedup();
                }
                for id in ids {
                    if !matches!(engine.runner_elsewhere(id).await, Ok(true)) {
                        engine.spawn_resume(id);
                    }
                }
            }
        })
    }
}

fn age_secs(now: chrono::DateTime<chrono::Utc>, created_at: &str) -> i64 {
    DateTime::parse_from_rfc3339(created_at)
        .map(|t| (now - t.to_utc()).num_seconds().max(0))
        .unwrap_or(0)
}
