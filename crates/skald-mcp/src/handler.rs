//! What a server sends on its own, without being asked: a log message goes to the server's log,
//! a changed tool list is listed again (and offered from the next round), anything else is kept
//! as an event with its server, method and time.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
#[expect(
    deprecated,
    reason = "logging is deprecated from protocol 2026-07-28 on (SEP-2577); servers on 2025-11-25 still send it"
)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientConfig, CustomNotification, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, ProgressNotificationParam, ProgressToken, ResourceUpdatedNotificationParam,
    SubscriptionsAcknowledgedNotificationParams, TaskStatusNotificationParams,
};
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{NotificationContext, RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::elicit::{Answer, Elicitor, Form};
use crate::log::{ServerLog, sanitize};
use crate::server::{McpTool, to_tools};

/// How long a person has to answer a server's question before it is cancelled.
pub const ELICITATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5 * 60);
/// Longest progress message kept (characters).
const MAX_PROGRESS_MESSAGE: usize = 300;

/// How many events a server keeps (the oldest go first).
pub const MAX_EVENTS: usize = 100;
/// Largest event parameters kept as they came (serialised): larger ones are cut to a string.
const MAX_EVENT_PARAMS: usize = 16 * 1024;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A notification a server sent that is neither a log message nor a change of its tools
/// (a resource update, a list change, a server's own `event/...`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEvent {
    pub at: DateTime<Utc>,
    /// Its JSON-RPC method, e.g. `notifications/resources/updated`.
    pub method: String,
    pub params: Option<Value>,
}

/// A server's last [`MAX_EVENTS`] events in memory; each also goes to the engine's sink when
/// it set one (stored for TIC ticks).
#[derive(Debug, Clone, Default)]
pub struct Events(pub(crate) Arc<Mutex<VecDeque<ServerEvent>>>, pub(crate) crate::sink::ServerSink);

impl Events {
    fn push(&self, method: &str, params: Option<Value>) {
        let params = params.map(|p| {
            let text = p.to_string();
            if text.len() > MAX_EVENT_PARAMS { Value::String(sanitize(&text)) } else { p }
        });
        let event = ServerEvent { at: Utc::now(), method: method.to_string(), params };
        self.1.send(&event);
        let mut events = lock(&self.0);
        if events.len() == MAX_EVENTS {
            events.pop_front();
        }
        events.push_back(event);
    }

    /// Oldest first.
    pub fn list(&self) -> Vec<ServerEvent> {
        lock(&self.0).iter().cloned().collect()
    }
}

/// A connection's tools, replaced when the server says they changed. Each listing takes a
/// ticket before it asks, so a slow answer never overwrites a newer one.
#[derive(Debug, Clone, Default)]
pub struct ToolList {
    next: Arc<AtomicU64>,
    current: Arc<Mutex<(u64, Vec<McpTool>)>>,
    /// `tools/list_changed` notifications read off the transport so far, and how many of them a
    /// finished listing covers: a call that returns waits for the two to meet, so a tool its
    /// call added is offered from the very next round.
    changed: Arc<AtomicU64>,
    settled: Arc<AtomicU64>,
    relisted: Arc<tokio::sync::Notify>,
}

/// Longest a returning call waits for the tool list its server said changed.
const SETTLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl ToolList {
    /// The transport read a `tools/list_changed` (before the call's answer behind it).
    fn changed(&self) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }

    fn seen(&self) -> u64 {
        self.changed.load(Ordering::SeqCst)
    }

    /// A listing started after `seen` notifications is over (stored, stale or failed).
    fn settle_to(&self, seen: u64) {
        self.settled.fetch_max(seen, Ordering::SeqCst);
        self.relisted.notify_waiters();
    }

    /// Waits until every `tools/list_changed` read so far has been listed (at most
    /// [`SETTLE_TIMEOUT`]; a server slow to answer keeps the old list a while longer).
    pub async fn settled(&self) {
        let wait = async {
            loop {
                // Registered before the check, so a listing that ends in between still wakes it.
                let relisted = self.relisted.notified();
                tokio::pin!(relisted);
                relisted.as_mut().enable();
                if self.settled.load(Ordering::SeqCst) >= self.seen() {
                    return;
                }
                relisted.await;
            }
        };
        let _ = tokio::time::timeout(SETTLE_TIMEOUT, wait).await;
    }

    pub fn ticket(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Stores `tools` listed under `ticket` unless a later listing is stored already; returns
    /// the list it replaced (`None`: kept the later one).
    pub fn set(&self, ticket: u64, tools: Vec<McpTool>) -> Option<Vec<McpTool>> {
        let mut current = lock(&self.current);
        if current.0 > ticket {
            return None;
        }
        let old = std::mem::replace(&mut *current, (ticket, tools));
        Some(old.1)
    }

    pub fn get(&self) -> Vec<McpTool> {
        lock(&self.current).1.clone()
    }

    pub fn find(&self, name: &str) -> Option<McpTool> {
        lock(&self.current).1.iter().find(|t| t.name == name).cloned()
    }

    pub fn len(&self) -> usize {
        lock(&self.current).1.len()
    }
}

/// Progress a server reported for a running call (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Done so far (grows; its unit is the server's).
    pub progress: f64,
    /// Of how much, when the server knows.
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Who answers what a server asks during one call (`None`: the connection's default).
type CallElicitor = Option<Arc<dyn Elicitor>>;

/// The calls running on one connection, as the handler sees them: where each call's progress
/// goes (by the progress token rmcp put on its request), and how many questions the server is
/// asking a person now (a call's timeout does not run out meanwhile).
#[derive(Clone, Default)]
pub struct Calls {
    progress: Arc<Mutex<HashMap<ProgressToken, tokio::sync::mpsc::Sender<Progress>>>>,
    /// The calls in flight and who answers a question asked during each.
    running: Arc<Mutex<HashMap<u64, (CallElicitor, CancellationToken)>>>,
    next: Arc<AtomicU64>,
    asking: Arc<AtomicUsize>,
    /// Woken when a question is answered: a call's idle timer starts again from then.
    answered: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calls").field("running", &lock(&self.running).len()).finish_non_exhaustive()
    }
}

/// A call in flight, counted while it lives.
pub struct Running {
    calls: Calls,
    id: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        // A question asked during the call is withdrawn with it (answered, stopped, timed out).
        if let Some((_, ended)) = lock(&self.calls.running).remove(&self.id) {
            ended.cancel();
        }
    }
}

/// A call's subscription to its progress; dropped, it ends.
pub struct Watch {
    calls: Calls,
    token: ProgressToken,
    pub progress: tokio::sync::mpsc::Receiver<Progress>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        lock(&self.calls.progress).remove(&self.token);
    }
}

impl Calls {
    /// Counts a call as in flight until the returned guard drops; `elicitor` answers what the
    /// server asks while it is the only call in flight.
    pub fn start(&self, elicitor: Option<Arc<dyn Elicitor>>) -> Running {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.running).insert(id, (elicitor, CancellationToken::new()));
        Running { calls: self.clone(), id }
    }

    /// Who answers a question the server asks now: the elicitor of the one call in flight, and
    /// that call's end. With several calls in flight the question cannot be told apart (it might
    /// be another session's): no elicitor.
    fn elicitor_now(&self) -> (Option<Arc<dyn Elicitor>>, Option<CancellationToken>) {
        let running = lock(&self.running);
        match (running.len(), running.values().next()) {
            (1, Some((elicitor, ended))) => (elicitor.clone(), Some(ended.clone())),
            _ => (None, None),
        }
    }

    pub fn watch(&self, token: ProgressToken) -> Watch {
        // Bounded: a server flooding progress loses updates, not memory.
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        lock(&self.progress).insert(token.clone(), tx);
        Watch { calls: self.clone(), token, progress: rx }
    }

    /// Whether a person is being asked something by this server now.
    pub fn asking(&self) -> bool {
        self.asking.load(Ordering::SeqCst) > 0
    }

    /// Resolves when a question to a person is over.
    pub fn answered(&self) -> tokio::sync::futures::Notified<'_> {
        self.answered.notified()
    }

    fn report(&self, p: ProgressNotificationParam) {
        let Some(tx) = lock(&self.progress).get(&p.progress_token).cloned() else { return };
        let finite = |n: f64| n.is_finite().then_some(n);
        let Some(progress) = finite(p.progress) else { return };
        let message = p.message.map(|m| {
            let m: String = m.chars().filter(|c| !c.is_control()).collect();
            match m.char_indices().nth(MAX_PROGRESS_MESSAGE) {
                Some((at, _)) => format!("{}…", &m[..at]),
                None => m,
            }
        });
        let _ = tx.try_send(Progress { progress, total: p.total.and_then(finite), message });
    }
}

/// Counts a question as pending while it lives.
struct Asking<'a>(&'a Calls);

impl<'a> Asking<'a> {
    fn new(calls: &'a Calls) -> Self {
        calls.asking.fetch_add(1, Ordering::SeqCst);
        Self(calls)
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.0.asking.fetch_sub(1, Ordering::SeqCst);
        self.0.answered.notify_waiters();
    }
}

/// The client side of one connection.
pub struct Handler {
    pub info: ClientConfig,
    pub server: String,
    /// The user trusts the server's annotations (see [`crate::ServerConfig::trusted`]): a tool
    /// listed again is judged exactly as the first listing's tools were.
    pub trusted: bool,
    pub log: ServerLog,
    pub tools: ToolList,
    pub events: Events,
    pub calls: Calls,
    /// Who answers the server's questions asked outside a call's own elicitor (`None`: they
    /// are declined). Skald says it can ask only when this is set.
    pub elicitor: Option<Arc<dyn Elicitor>>,
}

fn declined() -> ElicitResult {
    ElicitResult::new(ElicitationAction::Decline)
}

impl Handler {
    /// A server's `elicitation/create`: its form put to a person through the elicitor, the
    /// answer checked against the form. Nobody to ask, a URL-mode request or no answer within
    /// [`ELICITATION_TIMEOUT`] is a decline or cancel; a form Skald cannot show is an error.
    async fn elicit(
        &self,
        request: ElicitRequestParams,
        withdrawn: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, schema) = match request {
            ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
                (message, requested_schema)
            }
            _ => {
                self.log.line("lifecycle", "elicitation declined: only forms are supported");
                return Ok(declined());
            }
        };
        let (call_elicitor, call_ended) = self.calls.elicitor_now();
        let call_ended = call_ended.unwrap_or_default();
        let Some(elicitor) = call_elicitor.or_else(|| self.elicitor.clone()) else {
            self.log.line("lifecycle", "elicitation declined: nobody to ask");
            return Ok(declined());
        };
        let schema = serde_json::to_value(&schema)
            .map_err(|e| ErrorData::invalid_params(format!("requestedSchema: {e}"), None))?;
        let form = Form::from_schema(&message, &schema).map_err(|e| {
            self.log.line("lifecycle", &format!("elicitation refused: {e}"));
            ErrorData::invalid_params(format!("unsupported elicitation form: {e}"), None)
        })?;
        // The values are never logged: only that a question was asked and how it ended.
        self.log.line("lifecycle", &format!("elicitation: asking ({} fields)", form.fields.len()));
        let answer = {
            let _asking = Asking::new(&self.calls);
            let ask = elicitor.elicit(&self.server, form.clone());
            // The server withdrew the question (its call was stopped) or the connection ended:
            // the person is no longer asked.
            tokio::select! {
                answer = tokio::time::timeout(ELICITATION_TIMEOUT, ask) => {
                    answer.unwrap_or(Answer::Cancel)
                }
                () = withdrawn.cancelled() => Answer::Cancel,
                () = call_ended.cancelled() => Answer::Cancel,
            }
        };
        let (result, how) = match answer {
            Answer::Accept(content) => match form.check(&content) {
                Ok(content) => (
                    ElicitResult::new(ElicitationAction::Accept)
                        .with_content(Value::Object(content)),
                    "accepted",
                ),
                Err(e) => {
                    tracing::warn!(server = %self.server, "elicitation answer did not fit: {e}");
                    (ElicitResult::new(ElicitationAction::Cancel), "cancelled (invalid answer)")
                }
            },
            Answer::Decline => (declined(), "declined"),
            Answer::Cancel => (ElicitResult::new(ElicitationAction::Cancel), "cancelled"),
        };
        self.log.line("lifecycle", &format!("elicitation {how}"));
        Ok(result)
    }

    fn event(&self, method: &str, params: Option<Value>) {
        tracing::debug!(server = %self.server, method, "MCP server notification");
        self.events.push(method, params);
    }

    fn event_of(&self, method: &str, params: &impl serde::Serialize) {
        self.event(method, serde_json::to_value(params).ok());
    }

    /// Lists the tools again after `notifications/tools/list_changed`.
    async fn relist(&self, context: NotificationContext<RoleClient>) {
        let seen = self.tools.seen();
        self.relist_inner(context).await;
        self.tools.settle_to(seen);
    }

    async fn relist_inner(&self, context: NotificationContext<RoleClient>) {
        let ticket = self.tools.ticket();
        // Bounded, so a server that never answers holds up returning calls only once.
        let listed = tokio::time::timeout(SETTLE_TIMEOUT, context.peer.list_all_tools()).await;
        let listed = match listed {
            Ok(Ok(listed)) => listed,
            Err(_) => {
                self.log.line("lifecycle", "tool list changed; tools/list did not answer");
                return;
            }
            Ok(Err(e)) => {
                // The old list stays: a tool that is gone fails at the server when called.
                self.log.line("lifecycle", &format!("tool list changed; tools/list failed: {e}"));
                return;
            }
        };
        let tools = to_tools(self.trusted, listed);
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let count = tools.len();
        let Some(old) = self.tools.set(ticket, tools) else { return };
        let added: Vec<&str> = names
            .iter()
            .filter(|n| !old.iter().any(|t| &t.name == *n))
            .map(String::as_str)
            .collect();
        let removed: Vec<&str> =
            old.iter().filter(|t| !names.contains(&t.name)).map(|t| t.name.as_str()).collect();
        let mut text = format!("tool list changed ({count} tools)");
        if !added.is_empty() {
            text.push_str(&format!("; added: {}", added.join(", ")));
        }
        if !removed.is_empty() {
            text.push_str(&format!("; removed: {}", removed.join(", ")));
        }
        self.log.line("lifecycle", &text);
        tracing::info!(server = %self.server, tools = count, "MCP server tool list changed");
    }
}

/// A transport that counts the `tools/list_changed` notifications it reads, in the order they
/// arrive: a call's answer read after one is returned only once the list is fetched again.
pub struct Watched<T> {
    pub inner: T,
    pub tools: ToolList,
    /// Progress is handed to its call here, in the order it arrives: before the call's answer
    /// behind it (rmcp runs notification handlers as tasks of their own, in no set order).
    pub calls: Calls,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Notification(n)) = &message {
            match &n.notification {
                ServerNotification::ToolListChangedNotification(_) => self.tools.changed(),
                ServerNotification::ProgressNotification(p) => self.calls.report(p.params.clone()),
                _ => {}
            }
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// `data` as one log line's text: a string as it is, anything else as JSON.
#[expect(
    deprecated,
    reason = "logging is deprecated from protocol 2026-07-28 on (SEP-2577); servers on 2025-11-25 still send it"
)]
fn log_text(params: &LoggingMessageNotificationParam) -> String {
    let data = match &params.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match &params.logger {
        Some(logger) => format!("{logger}: {data}"),
        None => data,
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    #[expect(
        deprecated,
        reason = "logging is deprecated from protocol 2026-07-28 on (SEP-2577); servers on 2025-11-25 still send it"
    )]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "log".into());
        self.log.line(&level, &log_text(&params));
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.elicit(request, context.ct).await
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.relist(context).await;
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.event_of("notifications/resources/updated", &params);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.event("notifications/resources/list_changed", None);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.event("notifications/prompts/list_changed", None);
    }

    async fn on_subscriptions_acknowledged(
        &self,
        params: SubscriptionsAcknowledgedNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        self.event_of("notifications/subscriptions/acknowledged", &params);
    }

    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        self.event_of("notifications/tasks/status", &params);
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        self.event(&notification.method, notification.params);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use serde_json::json;

    use super::{Events, MAX_EVENTS, ToolList};
    use crate::McpTool;

    fn tool(name: &str) -> McpTool {
        McpTool {
            name: name.into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            read_only: false,
        }
    }

    #[test]
    fn a_slow_listing_never_overwrites_a_newer_one() {
        let list = ToolList::default();
        let first = list.ticket();
        let second = list.ticket();
        assert_eq!(list.set(second, vec![tool("new")]), Some(vec![]));
        assert_eq!(list.set(first, vec![tool("old")]), None);
        assert_eq!(list.get(), vec![tool("new")]);
        assert!(list.find("new").is_some() && list.find("old").is_none());
    }

    #[tokio::test]
    async fn a_returning_call_waits_for_the_listing_a_change_started() {
        let list = ToolList::default();
        // Nothing changed: at once.
        tokio::time::timeout(Duration::from_secs(1), list.settled()).await.unwrap();
        list.changed();
        let seen = list.seen();
        let waiter = {
            let list = list.clone();
            tokio::spawn(async move { list.settled().await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!waiter.is_finished(), "returned before the list was fetched again");
        list.settle_to(seen);
        tokio::time::timeout(Duration::from_secs(1), waiter).await.unwrap().unwrap();
    }

    #[test]
    fn events_are_bounded_and_large_params_cut() {
        let events = Events::default();
        events.push("event/big", Some(json!({"text": "x".repeat(20_000)})));
        assert!(events.list()[0].params.as_ref().unwrap().is_string());
        for i in 0..MAX_EVENTS {
            events.push("event/n", Some(json!({"i": i})));
        }
        let list = events.list();
        assert_eq!(list.len(), MAX_EVENTS);
        assert_eq!(list[0].params, Some(json!({"i": 0})));
        assert_eq!(list[0].method, "event/n");
    }
}
