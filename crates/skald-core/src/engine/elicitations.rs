//! Questions MCP servers ask during a call (`elicitation/create`): in a session a person
//! attends, the form goes to the Agent Inbox (`mcp_elicitations`, `elicitation_requested`) and
//! the call's server waits for the answer; anywhere else it is declined at once. Answered from
//! any process like a clarification question, with one difference: a secret typed into the form
//! is handed to the server from memory and never stored (only that a value was given), so a form
//! with a secret can be answered only in the process whose call waits for it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use skald_mcp::{Answer, Elicitor, Form};
use skald_protocol::{ElicitationAction, ElicitationForm, ElicitationItem, Event, EventEnvelope};
use skald_store::Store;
use tokio::sync::oneshot;

use super::Engine;
use crate::error::EngineError;
use crate::turn::TurnCtx;
use crate::turn::TurnEmitter;

/// How often a waiting call looks for an answer given in another process.
const POLL: Duration = Duration::from_millis(500);

/// The questions this process's calls wait on, by id: an answer given here is handed over
/// directly (secrets included).
#[derive(Clone, Default)]
pub struct Waiting(Arc<Mutex<HashMap<i64, oneshot::Sender<Answer>>>>);

impl std::fmt::Debug for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiting").finish_non_exhaustive()
    }
}

impl Waiting {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, oneshot::Sender<Answer>>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Declines every question: what servers hear outside a call a person attends. Set as the
/// manager's default so that Skald says it can ask (its calls answer through the inbox).
pub struct Decline;

impl Elicitor for Decline {
    fn elicit(&self, _server: &str, _form: Form) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        Box::pin(async { Answer::Decline })
    }
}

/// Who answers what `server` asks during call `tool_call_id` of this frame: the inbox when a
/// person attends the session, a decline at once otherwise (a job's run, a task, an unattended
/// source).
pub(crate) fn for_call(ctx: &TurnCtx, tool_call_id: i64) -> Arc<dyn Elicitor> {
    let attended = ctx.policy.interactive && !ctx.policy.background && ctx.questions_available();
    if !attended {
        return Arc::new(Decline);
    }
    Arc::new(Inbox {
        store: ctx.deps.store.clone(),
        emitter: ctx.frame.emitter.clone(),
        waiting: ctx.deps.elicitations.clone(),
        session_id: ctx.policy.session_id,
        tool_call_id,
    })
}

struct Inbox {
    store: Store,
    emitter: TurnEmitter,
    waiting: Waiting,
    session_id: i64,
    tool_call_id: i64,
}

/// Gives a question up when its wait ends unanswered (the server cancelled, the call stopped,
/// the deadline passed): it leaves the inbox.
struct GiveUp {
    store: Store,
    emitter: TurnEmitter,
    waiting: Waiting,
    id: i64,
    tool_call_id: i64,
    armed: bool,
}

impl Drop for GiveUp {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.waiting.lock().remove(&self.id);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (store, emitter, id, tool_call_id) =
            (self.store.clone(), self.emitter.clone(), self.id, self.tool_call_id);
        runtime.spawn(async move {
            if let Ok(true) = store.resolve_elicitation(id, "cancel", None, "skald").await {
                emitter.emit(Event::ElicitationResolved {
                    elicitation_id: id,
                    tool_call_id,
                    action: ElicitationAction::Cancel,
                });
            }
        });
    }
}

impl Elicitor for Inbox {
    fn elicit(&self, server: &str, form: Form) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let (store, emitter, waiting) =
            (self.store.clone(), self.emitter.clone(), self.waiting.clone());
        let (session_id, tool_call_id, server) =
            (self.session_id, self.tool_call_id, server.to_string());
        Box::pin(async move {
            let Ok(json) = serde_json::to_string(&form) else { return Answer::Cancel };
            let id = match store.create_elicitation(tool_call_id, session_id, &server, &json).await
            {
                Ok(id) => id,
                Err(e) => {
                    tracing::warn!("cannot store an MCP server's question: {e}");
                    return Answer::Cancel;
                }
            };
            let (tx, mut rx) = oneshot::channel();
            waiting.lock().insert(id, tx);
            let mut give_up = GiveUp {
                store: store.clone(),
                emitter: emitter.clone(),
                waiting: waiting.clone(),
                id,
                tool_call_id,
                armed: true,
            };
            emitter.emit(Event::ElicitationRequested {
                elicitation_id: id,
                tool_call_id,
                server,
                message: form.message.clone(),
            });
            loop {
                tokio::select! {
                    answer = &mut rx => {
                        give_up.armed = false;
                        return answer.unwrap_or(Answer::Cancel);
                    }
                    () = tokio::time::sleep(POLL) => {}
                }
                // Answered in another process? Whoever takes the sender answers: this process
                // (it sends right after its write) or, once the row says so, the row.
                let Ok(Some(row)) = store.elicitation(id).await else { continue };
                let Some(action) = row.action else { continue };
                if waiting.lock().remove(&id).is_none() {
                    give_up.armed = false;
                    return rx.await.unwrap_or(Answer::Cancel);
                }
                give_up.armed = false;
                return match action.as_str() {
                    "accept" => {
                        let values =
                            row.answer.as_deref().and_then(|a| serde_json::from_str(a).ok());
                        match values {
                            Some(Value::Object(values)) => Answer::Accept(values),
                            _ => Answer::Cancel,
                        }
                    }
                    "decline" => Answer::Decline,
                    _ => Answer::Cancel,
                };
            }
        })
    }
}

fn age_secs(created_at: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(created_at)
        .map(|t| (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds().max(0))
        .unwrap_or(0)
}

/// `content` as it may be stored: each secret replaced by `true` (a value was given).
fn storable(form: &Form, content: &Map<String, Value>) -> Map<String, Value> {
    content
        .iter()
        .map(|(k, v)| {
            let secret = form.fields.iter().any(|f| &f.name == k && f.sensitive);
            (k.clone(), if secret { Value::Bool(true) } else { v.clone() })
        })
        .collect()
}

impl Engine {
    /// The servers' questions waiting for an answer, oldest first.
    pub(crate) async fn open_elicitations(&self) -> Result<Vec<ElicitationItem>, EngineError> {
        let rows = self.store().open_elicitations().await?;
        Ok(rows
            .into_iter()
            .map(|r| ElicitationItem {
                elicitation_id: r.id,
                tool_call_id: r.tool_call_id,
                session_id: r.session_id,
                source: r.source,
                server: r.server,
                form: serde_json::from_str(&r.form).unwrap_or_else(|_| ElicitationForm {
                    message: "(this question's form could not be read)".into(),
                    fields: Vec::new(),
                }),
                age_secs: age_secs(&r.created_at),
                created_at: r.created_at,
            })
            .collect())
    }

    /// Answers a server's question (once; the same action again is a no-op, another one a
    /// conflict). An accepted `content` must fit the form. Returns whether the waiting call got
    /// it now (false: it was answered before).
    pub async fn answer_elicitation(
        &self,
        id: i64,
        action: ElicitationAction,
        content: Option<Map<String, Value>>,
        decided_by: &str,
    ) -> Result<bool, EngineError> {
        let store = self.store();
        let row = store
            .elicitation(id)
            .await?
            .ok_or_else(|| EngineError::NotFound(format!("no question {id} of an MCP server")))?;
        if let Some(done) = &row.action {
            if done == action.as_str() {
                return Ok(false);
            }
            return Err(EngineError::Conflict(format!(
                "the question was already answered ({done})"
            )));
        }
        let form: Form = serde_json::from_str(&row.form)
            .map_err(|e| EngineError::Internal(format!("stored form: {e}")))?;
        let content = match action {
            ElicitationAction::Accept => {
                let given = content.unwrap_or_default();
                Some(form.check(&given).map_err(EngineError::InvalidInput)?)
            }
            _ => None,
        };
        let has_secret = content.as_ref().is_some_and(|c| {
            c.keys().any(|k| form.fields.iter().any(|f| &f.name == k && f.sensitive))
        });
        // Taken before the write: the waiting call then waits for this answer, not the row.
        let waiter = self.inner.elicitations.lock().remove(&id);
        if waiter.is_none() && has_secret {
            return Err(EngineError::Conflict(
                "this question asks for a secret, which Skald never stores: answer it in the \
                 window of the process that runs the session"
                    .into(),
            ));
        }
        let stored = content.as_ref().map(|c| Value::Object(storable(&form, c)).to_string());
        let (session_id, source, tool_call_id) =
            (row.session_id, row.source.clone(), row.tool_call_id);
        let resolved = move |_| {
            let event = Event::ElicitationResolved { elicitation_id: id, tool_call_id, action };
            vec![EventEnvelope::session(session_id, &source, event)]
        };
        let write = store.resolve_elicitation(id, action.as_str(), stored.as_deref(), decided_by);
        let fresh = self.commit_events(write, resolved).await?;
        if !fresh {
            return Err(EngineError::Conflict("the question was answered meanwhile".into()));
        }
        if let Some(waiter) = waiter {
            let answer = match (action, content) {
                (ElicitationAction::Accept, Some(c)) => Answer::Accept(c),
                (ElicitationAction::Decline, _) => Answer::Decline,
                _ => Answer::Cancel,
            };
            let _ = waiter.send(answer);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::{Form, storable};

    #[test]
    fn a_secret_is_stored_only_as_given() {
        let schema =
            json!({"properties": {"user": {"type": "string"}, "password": {"type": "string"}}});
        let form = Form::from_schema("Log in", &schema).unwrap();
        let content = json!({"user": "ada", "password": "hunter2"});
        let kept = storable(&form, content.as_object().unwrap());
        assert_eq!(serde_json::Value::Object(kept), json!({"user": "ada", "password": true}));
    }
}
