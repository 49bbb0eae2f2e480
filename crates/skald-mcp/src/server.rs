//! One live connection to a server: started (child process or HTTP session), initialized, its
//! tools listed; calls race the server against a stop and a timeout.

use std::time::Duration;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion, RequestId,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;

use crate::elicit::Elicitor;
use crate::handler::{Calls, Events, Handler, Progress, ToolList, Watched};
use crate::log::ServerLog;
use crate::oauth::{self, AuthNeed, TokenVault};
use crate::{CallOutput, McpError, ServerConfig, Transport};

/// Why a server could not be started.
#[derive(Debug)]
pub(crate) struct Failure {
    pub message: String,
    /// It wants (more) authorization first.
    pub need: Option<AuthNeed>,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self { message, need: None }
    }
}

/// How long a server may take to start and list its tools.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one `tools/call` may take before it is cancelled.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest a call may run however often its server reports progress.
pub const MAX_CALL_TIME: Duration = Duration::from_secs(60 * 60);

/// Where a call's progress goes.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// What a caller hooks into one call.
#[derive(Default, Clone)]
pub struct CallHooks {
    /// Each progress report the server sends for the call.
    pub progress: Option<ProgressSink>,
    /// Answers what the server asks while the call runs (when it is its only call in flight).
    pub elicitor: Option<Arc<dyn Elicitor>>,
}

/// A tool a server offers, as the engine needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The server's own name for it (without the `mcp__<server>__` prefix).
    pub name: String,
    pub description: String,
    /// JSON Schema of its arguments.
    pub input_schema: Value,
    /// It changes nothing, as far as Skald believes: `readOnlyHint` from a server the user
    /// trusts, without `openWorldHint` (see `read_only`). No approval by default, and safe to
    /// run again after a crash.
    pub read_only: bool,
}

/// Whether a tool runs without asking by default: its server says it changes nothing
/// (`readOnlyHint`), the user trusts that server's word, and it does not reach an open world
/// (`openWorldHint`: the internet, which a read can leak to, always asks).
fn read_only(trusted: bool, hints: Option<&rmcp::model::ToolAnnotations>) -> bool {
    let hint = |h: Option<bool>| h.unwrap_or(false);
    trusted && hints.is_some_and(|a| hint(a.read_only_hint) && !hint(a.open_world_hint))
}

/// Variables a stdio server inherits from Skald: where programs and home are, the user, the
/// locale and terminal, temp dirs, and what Windows needs to run anything at all.
const INHERITED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMFILES",
    "HOMEDRIVE",
    "HOMEPATH",
];

fn inherited_env() -> impl Iterator<Item = (String, String)> {
    std::env::vars().filter(|(k, _)| INHERITED.contains(&k.as_str()) || k.starts_with("LC_"))
}

/// A server's tools as the engine sees them, judged by whether the user trusts the server
/// (the first listing and every listing after `tools/list_changed` alike).
pub(crate) fn to_tools(trusted: bool, listed: Vec<rmcp::model::Tool>) -> Vec<McpTool> {
    listed
        .into_iter()
        .map(|t| McpTool {
            name: t.name.to_string(),
            description: t.description.map(|d| d.to_string()).unwrap_or_default(),
            input_schema: Value::Object((*t.input_schema).clone()),
            read_only: read_only(trusted, t.annotations.as_ref()),
        })
        .collect()
}

type Service = RunningService<RoleClient, Handler>;

/// A started, initialized server.
pub struct Connection {
    service: Service,
    /// Replaced when the server says its tools changed.
    pub tools: ToolList,
    calls: Calls,
    /// Its requests carry an OAuth token.
    had_tokens: bool,
}

/// Sends `notifications/cancelled` for a request dropped before its answer (a stop, a timeout,
/// a caller gone), unless disarmed.
struct CancelOnDrop {
    peer: rmcp::Peer<RoleClient>,
    id: Option<RequestId>,
    reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let peer = self.peer.clone();
        let params = CancelledNotificationParam::new(Some(id), Some(self.reason.to_string()));
        runtime.spawn(async move {
            let note = CancelledNotification::new(params);
            let _ = peer.send_notification(note.into()).await;
        });
    }
}

impl Connection {
    /// Starts `config`'s server and lists its tools, within [`CONNECT_TIMEOUT`].
    pub async fn open(
        config: &ServerConfig,
        log: &ServerLog,
        events: &Events,
        elicitor: Option<Arc<dyn Elicitor>>,
        vault: Arc<dyn TokenVault>,
    ) -> Result<Self, Failure> {
        let open = Self::open_inner(config, log, events, elicitor, vault);
        match tokio::time::timeout(CONNECT_TIMEOUT, open).await {
            Ok(r) => r,
            Err(_) => Err(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()).into()),
        }
    }

    async fn open_inner(
        config: &ServerConfig,
        log: &ServerLog,
        events: &Events,
        elicitor: Option<Arc<dyn Elicitor>>,
        vault: Arc<dyn TokenVault>,
    ) -> Result<Self, Failure> {
        let server = config.name.as_str();
        // Whether requests carry an OAuth token (a 401 then means it expired or was revoked).
        let mut had_tokens = false;
        let auth_failure = |need: AuthNeed, had_tokens: bool| {
            let need = need.with_tokens(had_tokens);
            Failure { message: need.describe(server), need: Some(need) }
        };
        let tools = ToolList::default();
        let calls = Calls::default();
        let mut capabilities = ClientCapabilities::default();
        if elicitor.is_some() {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        let info = Handler {
            // The newest version that still has an `initialize` handshake: rmcp's LATEST
            // (2026-07-28) has none, and servers on it would negotiate down from a version
            // they cannot have answered.
            info: ClientConfig::new(
                capabilities,
                Implementation::new("skald", env!("CARGO_PKG_VERSION")),
            )
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE),
            server: config.name.clone(),
            trusted: config.trusted,
            log: log.clone(),
            tools: tools.clone(),
            events: events.clone(),
            calls: calls.clone(),
            elicitor,
        };
        let service = match &config.transport {
            Transport::Stdio { command, args, env, cwd } => {
                let mut cmd = tokio::process::Command::new(command);
                // Only a neutral part of Skald's environment, plus the server's own `env`: its
                // tools must not see Skald's keys (server-everything's `get-env` would hand
                // them to the model without an approval).
                cmd.env_clear().envs(inherited_env()).envs(env).args(args);
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
                // Its own process group: a Ctrl+C in the terminal does not reach it, and a kill
                // on drop takes the whole group (an `npx` wrapper and the server it started).
                #[cfg(unix)]
                wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
                // Killed even when its connection is dropped where no task can run anymore.
                wrapped.wrap(process_wrap::tokio::KillOnDrop);
                let (transport, stderr) = TokioChildProcess::builder(wrapped)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| Failure::from(format!("cannot run `{command}`: {e}")))?;
                if let Some(stderr) = stderr {
                    let log = log.clone();
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            log.line("stderr", &line);
                        }
                    });
                }
                let transport =
                    Watched { inner: transport, tools: tools.clone(), calls: calls.clone() };
                info.serve(transport)
                    .await
                    .map_err(|e| Failure::from(crate::error::describe_init(&e)))?
            }
            Transport::Http { url, api_key, oauth } => {
                let http = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let served = if let Some(key) = api_key {
                    let transport =
                        StreamableHttpClientTransport::from_config(http.auth_header(key.clone()));
                    let transport =
                        Watched { inner: transport, tools: tools.clone(), calls: calls.clone() };
                    info.serve(transport).await
                } else {
                    // OAuth: with the stored tokens; none until the server asks (its 401 says
                    // so either way, and an authorization starts a new connection).
                    let (client, has_token) = oauth::client(server, url, oauth, vault)
                        .await
                        .map_err(|e| format!("{url}: authorization: {e}"))?;
                    had_tokens = has_token;
                    if has_token {
                        let transport = StreamableHttpClientTransport::with_client(client, http);
                        let transport = Watched {
                            inner: transport,
                            tools: tools.clone(),
                            calls: calls.clone(),
                        };
                        info.serve(transport).await
                    } else {
                        let transport = StreamableHttpClientTransport::from_config(http);
                        let transport = Watched {
                            inner: transport,
                            tools: tools.clone(),
                            calls: calls.clone(),
                        };
                        info.serve(transport).await
                    }
                };
                served.map_err(|e| match crate::error::init_need(&e) {
                    // A bearer key the server refuses is the key's fault, not a consent to ask for.
                    Some(need) if api_key.is_none() => auth_failure(need, had_tokens),
                    _ => Failure::from(format!("{url}: {}", crate::error::describe_init(&e))),
                })?
            }
        };
        // A `tools/list_changed` that arrives while this listing runs lists again under a later
        // ticket, which this one never overwrites.
        let ticket = tools.ticket();
        let listed =
            service.peer().list_all_tools().await.map_err(
                |e| match crate::error::service_need(&e) {
                    Some(need) => auth_failure(need, had_tokens),
                    None => Failure::from(format!("tools/list: {}", crate::error::describe(&e))),
                },
            )?;
        tools.set(ticket, to_tools(config.trusted, listed));
        Ok(Self { service, tools, calls, had_tokens })
    }

    /// Calls `tool`; a stop or the timeout drops the request, which tells the server
    /// (`notifications/cancelled`). `timeout` is an idle time: progress the server reports
    /// starts it again, and it waits while the server is asking a person something; the whole
    /// call is bounded by [`MAX_CALL_TIME`]. Each progress report goes to `on_progress`.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: &Value,
        cancel: &CancellationToken,
        timeout: Duration,
        hooks: CallHooks,
    ) -> Result<CallOutput, McpError> {
        let on_progress = hooks.progress;
        let failed =
            |message: String| McpError::Call { server: server.into(), tool: tool.into(), message };
        // A server asking for (more) authorization says so, with its challenge for the next
        // authorization.
        let refused = |e: rmcp::service::ServiceError| match crate::error::service_need(&e) {
            Some(need) => McpError::Unauthorized {
                message: need.clone().with_tokens(self.had_tokens).describe(server),
                server: server.into(),
                challenge: need.challenge().map(str::to_string),
            },
            None => failed(crate::error::describe(&e)),
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = match args {
            Value::Object(map) => Some(map.clone()),
            Value::Null => None,
            other => return Err(failed(format!("arguments must be a JSON object, not {other}"))),
        };
        let peer = self.service.peer().clone();
        let _running = self.calls.start(hooks.elicitor);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let timed_out = || McpError::Timeout {
            server: server.into(),
            tool: tool.into(),
            secs: timeout.as_secs(),
        };
        // Sent under a guard: from here on, a call dropped before its answer is cancelled at
        // the server.
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(refused)?;
        let mut guard =
            CancelOnDrop { peer: peer.clone(), id: Some(handle.id.clone()), reason: "stopped" };
        let mut watch = self.calls.watch(handle.progress_token.clone());
        let response = handle.await_response();
        tokio::pin!(response);
        let started = tokio::time::Instant::now();
        let mut idle = Box::pin(tokio::time::sleep(timeout));
        let response = loop {
            tokio::select! {
                r = &mut response => break r,
                () = cancel.cancelled() => return Err(McpError::Cancelled),
                () = &mut idle => {
                    // A person answering the server's question is not the server idling.
                    if self.calls.asking() && started.elapsed() < MAX_CALL_TIME {
                        idle.as_mut().reset(tokio::time::Instant::now() + timeout);
                        continue;
                    }
                    guard.reason = "timeout";
                    return Err(timed_out());
                }
                () = self.calls.answered() => {
                    idle.as_mut().reset(tokio::time::Instant::now() + timeout);
                }
                Some(p) = watch.progress.recv() => {
                    let deadline = (tokio::time::Instant::now() + timeout).min(started + MAX_CALL_TIME);
                    idle.as_mut().reset(deadline);
                    if let Some(sink) = &on_progress {
                        sink(p);
                    }
                }
            }
        };
        // Answered (or the transport closed): nothing to cancel. Progress read before the
        // answer is still delivered.
        guard.id = None;
        if let Some(sink) = &on_progress {
            while let Ok(p) = watch.progress.try_recv() {
                sink(p);
            }
        }
        drop(watch);
        // A tool list the server changed while answering (a tool the call added) is fetched
        // before the call returns, so the next round offers it.
        self.tools.settled().await;
        let result: CallToolResult = match response.map_err(refused)? {
            ServerResult::CallToolResult(result) => result,
            ServerResult::EmptyResult(_) => CallToolResult::success(vec![]),
            _ => {
                return Err(failed(
                    "the server answered with a task or an input request, which Skald does not \
                     support yet"
                        .into(),
                ));
            }
        };
        let wire = serde_json::to_value(&result).map_err(|e| failed(e.to_string()))?;
        Ok(CallOutput::from_wire(&wire))
    }

    /// The transport is gone (the server exited or the HTTP session ended).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// Ends the session (closes stdin or the HTTP session; the child is killed if it lingers).
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}
