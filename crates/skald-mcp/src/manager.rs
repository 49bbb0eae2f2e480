//! Every configured server and its connection: started on first need (one start at a time per
//! server), reconciled when the configuration changes, closed at shutdown.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::elicit::Elicitor;
use crate::handler::{Events, ServerEvent};
use crate::log::ServerLog;
use crate::oauth::{self, MemoryVault, TokenVault};
use crate::server::{CALL_TIMEOUT, CallHooks, Connection, Failure, McpTool};
use crate::sink::{EventSink, ServerSink, SharedSink};
use crate::{CallOutput, McpError, ServerConfig, Transport};

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Disabled,
    /// Not needed yet: servers start when an agent first activates them.
    NotStarted,
    Ready,
    /// Its last start failed; the next activation tries again.
    Failed(String),
    /// It wants OAuth authorization (first, again, or for more permissions): the message says
    /// why and how; nothing is sent to it until someone authorizes.
    NeedsAuthorization(String),
    /// An authorization was started and waits for the browser to come back.
    Authorizing,
}

/// A server as a listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    pub description: Option<String>,
    /// `stdio: <command> <args>` or `http: <url>`.
    pub endpoint: String,
    pub state: ServerState,
    /// Its tools once it has started.
    pub tools: Vec<McpTool>,
    pub log: Option<PathBuf>,
    /// The last lines of its log (stderr, log messages, connection events), oldest first.
    pub log_lines: Vec<String>,
    /// The last notifications it sent that are neither log messages nor tool changes.
    pub events: Vec<ServerEvent>,
}

enum Conn {
    Idle,
    Ready(Arc<Connection>),
    Failed(String),
    NeedsAuth(String),
}

/// An authorization waiting for the browser.
struct Authorizing {
    /// `None` until it ends.
    outcome: tokio::sync::watch::Receiver<Option<Result<(), String>>>,
    task: tokio::task::AbortHandle,
}

impl Drop for Authorizing {
    /// A replaced or forgotten authorization stops listening for its answer.
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Slot {
    config: ServerConfig,
    log: ServerLog,
    events: Events,
    conn: Mutex<Conn>,
    /// Held while starting, so concurrent callers share one start.
    starting: tokio::sync::Mutex<()>,
    /// The server's last `WWW-Authenticate`, where its next authorization starts.
    challenge: Mutex<Option<String>>,
    authorizing: Mutex<Option<Authorizing>>,
}

impl Slot {
    /// The server asked for authorization: nothing more is sent until someone gives it.
    fn needs_auth(&self, message: &str, challenge: Option<String>) {
        self.log.line("lifecycle", message);
        if challenge.is_some() {
            *lock(&self.challenge) = challenge;
        }
        *lock(&self.conn) = Conn::NeedsAuth(message.to_string());
    }
}

/// The engine's MCP servers.
pub struct McpManager {
    log_dir: Option<PathBuf>,
    slots: RwLock<BTreeMap<String, Arc<Slot>>>,
    /// Answers servers' questions (`elicitation/create`); servers started without one are not
    /// told that Skald can ask (and their questions are declined).
    elicitor: RwLock<Option<Arc<dyn Elicitor>>>,
    sink: SharedSink,
    /// Where HTTP servers' OAuth tokens are kept (the keychain, given by the engine).
    vault: RwLock<Arc<dyn TokenVault>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager").field("servers", &self.names()).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpManager {
    /// Servers of `configs`, none started; each logs under `log_dir` (`None`: nowhere).
    pub fn new(configs: Vec<ServerConfig>, log_dir: Option<PathBuf>) -> Self {
        let manager = Self {
            log_dir,
            slots: RwLock::new(BTreeMap::new()),
            elicitor: RwLock::new(None),
            sink: SharedSink::default(),
            vault: RwLock::new(Arc::new(MemoryVault::default())),
        };
        drop(manager.configure(configs));
        manager
    }

    /// Where OAuth tokens are kept from now on (by default in memory, gone at exit).
    pub fn set_vault(&self, vault: Arc<dyn TokenVault>) {
        *self.vault.write().unwrap_or_else(std::sync::PoisonError::into_inner) = vault;
    }

    fn vault(&self) -> Arc<dyn TokenVault> {
        self.vault.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Who answers servers' questions from now on (servers started later advertise it).
    pub fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        *self.elicitor.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(elicitor);
    }

    fn slots(&self) -> BTreeMap<String, Arc<Slot>> {
        self.slots.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn slot(&self, name: &str) -> Option<Arc<Slot>> {
        self.slots.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(name).cloned()
    }

    /// Applies a new server list: a server whose configuration changed or that is gone is
    /// closed (the returned future closes them; dropping it closes them on drop); the others
    /// keep their connection.
    pub fn configure(&self, configs: Vec<ServerConfig>) -> impl Future<Output = ()> + use<> {
        let mut slots = self.slots.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut closed = Vec::new();
        let mut next = BTreeMap::new();
        for config in configs {
            match slots.remove(&config.name) {
                Some(slot) if slot.config == config => {
                    next.insert(config.name.clone(), slot);
                }
                old => {
                    closed.extend(old);
                    let log = ServerLog::new(self.log_dir.as_deref(), &config.name);
                    let sink =
                        ServerSink { server: config.name.clone(), shared: self.sink.clone() };
                    let slot = Slot {
                        config,
                        log,
                        events: Events(Arc::default(), sink),
                        conn: Mutex::new(Conn::Idle),
                        starting: tokio::sync::Mutex::new(()),
                        challenge: Mutex::new(None),
                        authorizing: Mutex::new(None),
                    };
                    next.insert(slot.config.name.clone(), Arc::new(slot));
                }
            }
        }
        closed.extend(std::mem::replace(&mut *slots, next).into_values());
        async move {
            for slot in closed {
                close(&slot).await;
            }
        }
    }

    /// Hands every server's events (from now on, also those of servers configured later) to
    /// `sink` besides their in-memory list. Set once: a second sink is refused (false).
    pub fn set_event_sink(&self, sink: Arc<dyn EventSink>) -> bool {
        self.sink.set(sink)
    }

    /// Whether `server` is connected now (started, and its process or session not gone).
    pub fn is_connected(&self, server: &str) -> bool {
        self.slot(server)
            .is_some_and(|s| matches!(&*lock(&s.conn), Conn::Ready(c) if !c.is_closed()))
    }

    /// Every configured server's name, in order.
    pub fn names(&self) -> Vec<String> {
        self.slots().into_keys().collect()
    }

    /// The enabled servers with their descriptions (what an agent may activate).
    pub fn enabled(&self) -> Vec<(String, Option<String>)> {
        self.slots()
            .into_values()
            .filter(|s| s.config.enabled)
            .map(|s| (s.config.name.clone(), s.config.description.clone()))
            .collect()
    }

    pub fn is_enabled(&self, name: &str) -> bool {
        self.slot(name).is_some_and(|s| s.config.enabled)
    }

    /// The tools of a started server (`None` when it has not started or failed).
    pub fn tools(&self, server: &str) -> Option<Vec<McpTool>> {
        let slot = self.slot(server)?;
        match &*lock(&slot.conn) {
            Conn::Ready(c) => Some(c.tools.get()),
            _ => None,
        }
    }

    /// The last notifications `server` sent that are neither log messages nor tool changes
    /// (kept across reconnections; in memory only).
    pub fn events(&self, server: &str) -> Vec<ServerEvent> {
        self.slot(server).map(|s| s.events.list()).unwrap_or_default()
    }

    /// One tool of a started server.
    pub fn tool(&self, server: &str, tool: &str) -> Option<McpTool> {
        // Asked for each offered tool every round: only the one tool is copied.
        let slot = self.slot(server)?;
        match &*lock(&slot.conn) {
            Conn::Ready(c) => c.tools.find(tool),
            _ => None,
        }
    }

    /// Starts `server` unless it runs (or, with `retry` false, unless its last start failed);
    /// returns its tools.
    pub async fn connect(&self, server: &str, retry: bool) -> Result<Vec<McpTool>, McpError> {
        Ok(self.connection(server, retry).await?.tools.get())
    }

    async fn connection(&self, server: &str, retry: bool) -> Result<Arc<Connection>, McpError> {
        let slot = self.slot(server).ok_or_else(|| McpError::UnknownServer(server.into()))?;
        if !slot.config.enabled {
            return Err(McpError::Disabled(server.into()));
        }
        let failed = |message: String| McpError::Connect { server: server.into(), message };
        let _starting = slot.starting.lock().await;
        match &*lock(&slot.conn) {
            // A server that exited since its last call is started again before anything is
            // sent to it (a call it never received cannot have had an effect).
            Conn::Ready(c) if c.is_closed() => slot.log.line("lifecycle", "disconnected"),
            Conn::Ready(c) => return Ok(c.clone()),
            Conn::Failed(e) if !retry => return Err(failed(e.clone())),
            // Starting again cannot help until someone authorizes (a client credentials server
            // gets a new token by starting again).
            Conn::NeedsAuth(message) if !uses_client_credentials(&slot.config) => {
                return Err(McpError::Unauthorized {
                    server: server.into(),
                    message: message.clone(),
                    challenge: lock(&slot.challenge).clone(),
                });
            }
            _ => {}
        }
        slot.log.line("lifecycle", &format!("starting ({})", endpoint(&slot.config)));
        let elicitor =
            self.elicitor.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        match Connection::open(&slot.config, &slot.log, &slot.events, elicitor, self.vault()).await
        {
            Ok(c) => {
                let count = c.tools.len();
                slot.log.line("lifecycle", &format!("connected ({count} tools)"));
                tracing::info!(server, tools = count, "MCP server connected");
                let c = Arc::new(c);
                *lock(&slot.conn) = Conn::Ready(c.clone());
                Ok(c)
            }
            Err(Failure { message, need: Some(need) }) => {
                tracing::info!(server, "MCP server needs authorization");
                let challenge = need.challenge().map(str::to_string);
                slot.needs_auth(&message, challenge.clone());
                Err(McpError::Unauthorized { server: server.into(), message, challenge })
            }
            Err(Failure { message: e, need: None }) => {
                slot.log.line("lifecycle", &format!("start failed: {e}"));
                tracing::warn!(server, "MCP server failed to start: {e}");
                *lock(&slot.conn) = Conn::Failed(e.clone());
                Err(failed(e))
            }
        }
    }

    /// Calls `tool` of `server` with `args` (starting the server if needed); a stop or the
    /// server's call timeout ([`CALL_TIMEOUT`] unless configured) cancels it at the server.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: &Value,
        cancel: &CancellationToken,
    ) -> Result<CallOutput, McpError> {
        self.call_watched(server, tool, args, cancel, CallHooks::default()).await
    }

    /// [`Self::call`] with `hooks`: each progress report the server sends for it (progress
    /// also starts the call's timeout again), and who answers what the server asks meanwhile.
    pub async fn call_watched(
        &self,
        server: &str,
        tool: &str,
        args: &Value,
        cancel: &CancellationToken,
        hooks: CallHooks,
    ) -> Result<CallOutput, McpError> {
        let conn = self.connection(server, false).await?;
        // The list as it is now: a tool the server added since the connection started is
        // called, one it removed is refused here.
        if conn.tools.find(tool).is_none() {
            return Err(McpError::UnknownTool { server: server.into(), tool: tool.into() });
        }
        // A call the server may have received is never sent again here (it may have had its
        // effect): a server that died under it fails the call, and the next one restarts it.
        let timeout = self.slot(server).and_then(|s| s.config.call_timeout).unwrap_or(CALL_TIMEOUT);
        let result = conn.call(server, tool, args, cancel, timeout, hooks).await;
        if let Err(McpError::Unauthorized { message, challenge, .. }) = &result
            && let Some(slot) = self.slot(server)
        {
            // Its session stays open for calls in flight; new ones wait for an authorization.
            slot.needs_auth(message, challenge.clone());
        }
        result
    }

    /// Starts authorizing `server` (an HTTP server without an API key): returns the URL the
    /// user opens to consent. The browser's answer comes back to a listener on 127.0.0.1 that
    /// closes after one answer or [`oauth::AUTHORIZE_TIMEOUT`]; the tokens go to the vault and
    /// the server connects at its next use. A second start replaces the first.
    pub async fn authorize(&self, server: &str) -> Result<String, McpError> {
        let slot = self.slot(server).ok_or_else(|| McpError::UnknownServer(server.into()))?;
        let failed = |message: String| McpError::Connect { server: server.into(), message };
        let Transport::Http { url, api_key, oauth: settings } = &slot.config.transport else {
            return Err(failed("a local (stdio) server needs no authorization".into()));
        };
        if api_key.is_some() {
            return Err(failed(
                "it is configured with an API key (api_key_env); OAuth is for servers without one"
                    .into(),
            ));
        }
        if settings.client_credentials {
            // No person consents: forget the token so the next start gets a new one.
            oauth::forget(server, url, self.vault()).await.map_err(failed)?;
            *lock(&slot.conn) = Conn::Idle;
            return Err(failed(
                "it uses the client credentials grant: Skald gets its token without a browser                  when it starts"
                    .into(),
            ));
        }
        let challenge = lock(&slot.challenge).clone();
        let started = oauth::start(server, url, settings, self.vault(), challenge.as_deref())
            .await
            .map_err(|e| failed(format!("authorization: {e}")))?;
        slot.log.line("lifecycle", "authorization started: waiting for the browser");
        let (tx, rx) = tokio::sync::watch::channel(None);
        let waiting = slot.clone();
        let task = tokio::spawn(async move {
            let outcome = started.done.await;
            match &outcome {
                Ok(()) => {
                    waiting.log.line("lifecycle", "authorized");
                    *lock(&waiting.challenge) = None;
                    // The old session (without a token, or with too few scopes) goes; the next
                    // use connects with the new token.
                    let old = std::mem::replace(&mut *lock(&waiting.conn), Conn::Idle);
                    if let Conn::Ready(c) = old
                        && let Some(c) = Arc::into_inner(c)
                    {
                        c.close().await;
                    }
                }
                Err(e) => {
                    let message = format!("authorization failed: {e}");
                    waiting.needs_auth(&message, None);
                }
            }
            let _ = tx.send(Some(outcome));
        });
        let authorizing = Authorizing { outcome: rx, task: task.abort_handle() };
        *lock(&slot.authorizing) = Some(authorizing);
        Ok(started.url)
    }

    /// Waits for `server`'s authorization (started by [`Self::authorize`]) to end.
    pub async fn wait_authorized(&self, server: &str) -> Result<(), McpError> {
        let slot = self.slot(server).ok_or_else(|| McpError::UnknownServer(server.into()))?;
        let rx = lock(&slot.authorizing).as_ref().map(|a| a.outcome.clone());
        let Some(mut rx) = rx else {
            return Err(McpError::Connect {
                server: server.into(),
                message: "no authorization was started".into(),
            });
        };
        let outcome = match rx.wait_for(Option::is_some).await {
            Ok(v) => v.clone().unwrap_or(Ok(())),
            Err(_) => Err("the authorization was replaced or stopped".into()),
        };
        outcome.map_err(|message| McpError::Unauthorized {
            server: server.into(),
            message: format!("authorization failed: {message}"),
            challenge: None,
        })
    }

    /// Forgets `server`'s OAuth tokens (and stops an authorization in progress); it asks for
    /// authorization again at its next start.
    pub async fn forget_authorization(&self, server: &str) -> Result<(), McpError> {
        let slot = self.slot(server).ok_or_else(|| McpError::UnknownServer(server.into()))?;
        let Transport::Http { url, .. } = &slot.config.transport else { return Ok(()) };
        lock(&slot.authorizing).take();
        oauth::forget(server, url, self.vault()).await.map_err(|message| McpError::Connect {
            server: server.into(),
            message: format!("cannot remove its tokens from the keychain: {message}"),
        })?;
        slot.log.line("lifecycle", "authorization forgotten");
        close(&slot).await;
        Ok(())
    }

    /// Every server and where it stands.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.slots()
            .into_values()
            .map(|slot| {
                let authorizing =
                    lock(&slot.authorizing).as_ref().is_some_and(|a| a.outcome.borrow().is_none());
                let (state, tools) = match (&*lock(&slot.conn), slot.config.enabled) {
                    (_, false) => (ServerState::Disabled, Vec::new()),
                    _ if authorizing => (ServerState::Authorizing, Vec::new()),
                    (Conn::NeedsAuth(e), true) => {
                        (ServerState::NeedsAuthorization(e.clone()), Vec::new())
                    }
                    (Conn::Ready(c), true) if c.is_closed() => {
                        (ServerState::NotStarted, Vec::new())
                    }
                    (Conn::Idle, true) => (ServerState::NotStarted, Vec::new()),
                    (Conn::Ready(c), true) => (ServerState::Ready, c.tools.get()),
                    (Conn::Failed(e), true) => (ServerState::Failed(e.clone()), Vec::new()),
                };
                ServerStatus {
                    name: slot.config.name.clone(),
                    description: slot.config.description.clone(),
                    endpoint: endpoint(&slot.config),
                    state,
                    tools,
                    log: slot.log.path().map(std::path::Path::to_path_buf),
                    log_lines: slot.log.recent(),
                    events: slot.events.list(),
                }
            })
            .collect()
    }

    /// Closes every connection (the engine's shutdown).
    pub async fn shutdown(&self) {
        for slot in self.slots().into_values() {
            close(&slot).await;
        }
    }
}

async fn close(slot: &Slot) {
    let conn = std::mem::replace(&mut *lock(&slot.conn), Conn::Idle);
    if let Conn::Ready(c) = conn {
        slot.log.line("lifecycle", "closing");
        // Calls in flight hold their own reference; the last one out closes it.
        if let Some(c) = Arc::into_inner(c) {
            c.close().await;
        }
    }
}

fn uses_client_credentials(config: &ServerConfig) -> bool {
    matches!(&config.transport, Transport::Http { oauth, .. } if oauth.client_credentials)
}

fn endpoint(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } if args.is_empty() => format!("stdio: {command}"),
        Transport::Stdio { command, args, .. } => format!("stdio: {command} {}", args.join(" ")),
        Transport::Http { url, .. } => format!("http: {url}"),
    }
}
