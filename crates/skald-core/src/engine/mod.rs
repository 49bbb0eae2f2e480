//! `Engine`: opens the data dir (config, database), owns the event bus, and answers every command.

mod agents;
mod approvals;
mod briefings;
mod bypasses;
mod chat;
mod compact;
pub(crate) mod elicitations;
mod instance;
mod jobs;
mod lifecycle;
mod mcp;
mod memory;
mod reconcile;
mod run_context;
mod runner;
mod search;
mod services;
mod settings;
mod tasks;
mod tic;
mod tool_media;
mod turn_context;
mod usage;
mod work;

pub use chat::{ChatOptions, SendReceipt};
pub use lifecycle::ShutdownReport;
pub use runner::{Lease, PANIC_ON_PROMPT_ENV};
pub use services::ServiceHealth;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use skald_protocol::{
    DebugMessage, Event, EventEnvelope, ItemRef, Page, SessionDetail, SessionListQuery,
    SessionMeta, SessionSummary, SessionWindow, WindowQuery,
};
use skald_store::repo::instances::Instance;
use skald_store::{Clock, Store, SystemClock};
use tokio::sync::broadcast;

use crate::events::{EventBus, EventFeed};

use crate::agents::AgentsWatcher;
use crate::config::{self, Config, ConfigWatcher, EnvOverrides, KeyringSecrets, SecretStore};
use crate::error::EngineError;
use crate::session::process::host_name;
use crate::session::registry::SessionRegistry;
use crate::tools::{ProcessRegistry, ToolRegistry};
use crate::{data_dir, session};

/// A session title longer than this is refused: it is a name, not a note.
pub const MAX_SESSION_TITLE_CHARS: usize = 200;

/// How to open an engine.
#[derive(Clone, Default)]
pub struct EngineOptions {
    /// `None` = `SKALD_DATA_DIR` or the OS data dir.
    pub data_dir: Option<PathBuf>,
    /// `None` = read from the process environment.
    pub env: Option<EnvOverrides>,
    /// `None` = the wall clock.
    pub clock: Option<Arc<dyn Clock>>,
    /// Watch `config.yml` (reloaded on change) and `agents/` (`agents_changed`): the app and
    /// `serve`, not one-shot CLI commands.
    pub watch_config: bool,
    /// `None` = the OS keychain.
    pub secrets: Option<Arc<dyn SecretStore>>,
    /// Memory for built histories kept between rounds; `None` = `context::DEFAULT_BUDGET_BYTES`,
    /// `Some(0)` = every round reads every row.
    pub context_cache_bytes: Option<usize>,
    /// The user's home, whose dot-entries are protected paths; `None` = the OS's.
    pub home_dir: Option<PathBuf>,
    /// Where agent memory lives; `None` = the Markdown files of the data dir's `memory/`. A
    /// remote store plugs in here (its `query_context` reaches every turn's dynamic tail).
    pub memory_store: Option<Arc<dyn crate::memory::MemoryStore>>,
}

/// The engine. Cheap to clone; every clone is the same engine.
#[derive(Debug, Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    data_dir: PathBuf,
    /// The user's home (protected dot-entries), if the OS names one.
    home_dir: Option<PathBuf>,
    store: Store,
    config: Arc<RwLock<Arc<Config>>>,
    env: EnvOverrides,
    /// In-process subscribers, the outbox every process shares, and the feed clients resume.
    events: EventBus,
    sessions: SessionRegistry,
    tools: Arc<ToolRegistry>,
    /// Agent memory (the data dir's `memory/`) and the record of its writes.
    memory: Arc<crate::memory::MemoryManager>,
    secrets: Arc<dyn SecretStore>,
    /// One model client for the engine's life: its connections and the per-model health are
    /// shared by every turn (each turn applies the current timeouts with `with_settings`).
    llm: skald_llm::LlmClient,
    /// Each frame's built history, extended round after round instead of rebuilt.
    context_cache: crate::context::ContextCache,
    /// Context windows servers revealed by refusing larger requests (cap the configured ones).
    windows: crate::context::LearnedWindows,
    /// Every task the engine starts, and how they end (`start_background`, `shutdown`).
    lifecycle: lifecycle::Lifecycle,
    /// Slots of the async task runner (`llm.max_async_tasks`).
    task_slots: Arc<tokio::sync::Semaphore>,
    /// Async task runs started in this process that have not ended yet (`wait_tasks`).
    task_runs: tokio::sync::watch::Sender<usize>,
    /// The MCP servers of `mcp.servers`, started on first need.
    mcp: Arc<skald_mcp::McpManager>,
    /// MCP servers' questions this process's calls wait on.
    elicitations: elicitations::Waiting,
    /// Identifies this process in `session_runners`.
    /// This engine as other processes see it (`engine_instances`).
    instance: instance::InstanceState,
    /// The work queue's state here: adopted sessions and the worker.
    work: work::WorkState,
    /// The background services and their health.
    services: services::Services,
    _watcher: Option<ConfigWatcher>,
    _agents_watcher: Option<AgentsWatcher>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("data_dir", &self.data_dir).finish_non_exhaustive()
    }
}

impl Engine {
    /// Creates the data dir if needed, loads the configuration and opens (migrates) the database.
    pub async fn open(opts: EngineOptions) -> Result<Self, EngineError> {
        let dir = data_dir::resolve(opts.data_dir).ok_or(EngineError::NoDataDir)?;
        prepare_dir(&dir)?;
        let env = opts.env.unwrap_or_else(EnvOverrides::from_process_env);
        let env_for_reload = env.clone();
        let config = Arc::new(RwLock::new(Arc::new(config::load(&dir, &env)?)));
        let clock = opts.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let store = Store::open(&dir.join(skald_store::DB_FILE_NAME), clock).await?;
        // A database that cannot be written is still opened to read (lists, the inbox, a
        // session's tree); the upkeep below writes, and waits for a writable one.
        if !store.is_read_only() {
            let (retention, keep_notifications) = {
                let c = config.read().unwrap_or_else(|p| p.into_inner());
                (c.llm.request_log.retention_days, c.notifications.retention_days)
            };
            let upkeep = async {
                store.seed_rules(crate::approval::gate::SEEDS).await?;
                store.retire_seeds(crate::approval::gate::RETIRED_SEEDS).await?;
                store.prune_outbox(store.clock().now()).await?;
                store.prune_notifications(store.clock().now(), keep_notifications).await?;
                store.purge_llm_requests(retention).await
            };
            // A full disk met here is said with the database's name.
            upkeep.await.map_err(|e| store.name_file(e))?;
            crate::tools::process_registry::reap_orphans(&store).await?;
        }
        let max_async_tasks =
            config.read().unwrap_or_else(|p| p.into_inner()).llm.max_async_tasks.max(1) as usize;
        let me = Instance::new(&host_name(), std::process::id(), store.clock().now());
        let events = EventBus::start(store.clone(), me.id.clone());
        let watcher = if opts.watch_config {
            let bus = events.clone();
            let w = ConfigWatcher::start(&dir, env, config.clone(), move |outcome| {
                let event = Event::ConfigReloaded {
                    ok: outcome.is_ok(),
                    error: outcome.err().map(|e| e.to_string()),
                };
                bus.send(EventEnvelope::global(event));
            })
            .map_err(|e| EngineError::DataDir {
                path: dir.display().to_string(),
                message: format!("cannot watch config.yml: {e}"),
            })?;
            Some(w)
        } else {
            None
        };
        let agents_watcher = if opts.watch_config {
            let bus = events.clone();
            let w = AgentsWatcher::start(&dir.join("agents"), move || {
                bus.send(EventEnvelope::global(Event::AgentsChanged {}));
            })
            .map_err(|e| EngineError::DataDir {
                path: dir.display().to_string(),
                message: format!("cannot watch the agents folder: {e}"),
            })?;
            Some(w)
        } else {
            None
        };
        // A read-only database is read, never held: the instance registers when it can write.
        if !store.is_read_only() {
            store.register_instance(&me).await.map_err(|e| store.name_file(e))?;
        }
        let windows = crate::context::LearnedWindows::load(&store).await;
        let memory = open_memory(&dir, &store, &config, opts.memory_store.clone())?;
        let mut tools = ToolRegistry::builtin_recording(ProcessRegistry::new(store.clone()));
        tools.register_memory(memory.clone());
        let tools = Arc::new(tools);
        let mcp_servers = config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .mcp
            .server_configs(&|k| std::env::var(k).ok());
        let mcp = Arc::new(skald_mcp::McpManager::new(mcp_servers, Some(dir.join("logs/mcp"))));
        // Skald can ask: each call's own elicitor puts a question to a person or declines it.
        mcp.set_elicitor(Arc::new(elicitations::Decline));
        let secrets = opts.secrets.unwrap_or_else(|| Arc::new(KeyringSecrets));
        // HTTP servers' OAuth tokens are kept where API keys are: the keychain.
        mcp.set_vault(Arc::new(mcp::KeychainVault::new(secrets.clone())));
        let llm = skald_llm::LlmClient::new(skald_llm::LlmSettings::default())
            .map_err(|e| EngineError::Internal(format!("cannot create the HTTP client: {e}")))?;
        let engine = Self {
            inner: Arc::new(Inner {
                data_dir: dir,
                home_dir: opts.home_dir.or_else(dirs::home_dir),
                store,
                config,
                env: env_for_reload,
                events,
                sessions: SessionRegistry::default(),
                tools,
                memory,
                secrets,
                llm,
                context_cache: crate::context::ContextCache::with_budget(
                    opts.context_cache_bytes.unwrap_or(crate::context::DEFAULT_BUDGET_BYTES),
                ),
                windows,
                lifecycle: lifecycle::Lifecycle::new(),
                task_slots: Arc::new(tokio::sync::Semaphore::new(max_async_tasks)),
                task_runs: tokio::sync::watch::Sender::new(0),
                mcp,
                elicitations: elicitations::Waiting::default(),
                instance: instance::InstanceState::new(me),
                work: work::WorkState::default(),
                services: services::Services::default(),
                _watcher: watcher,
                _agents_watcher: agents_watcher,
            }),
        };
        engine.start_instance_watch();
        Ok(engine)
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// The user's home as the approval gate sees it.
    pub fn home_dir(&self) -> Option<&Path> {
        self.inner.home_dir.as_deref()
    }

    /// How context builds used the cache of built histories (diagnostics).
    pub fn context_cache_stats(&self) -> crate::context::CacheStats {
        self.inner.context_cache.stats()
    }

    /// The configuration in force now (reloaded when the file changes).
    pub fn config(&self) -> Arc<Config> {
        self.inner.config.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Re-reads `config.yml` now (the watcher does the same on file changes).
    pub fn reload_config(&self) -> Result<(), EngineError> {
        let cfg = config::load(&self.inner.data_dir, &self.inner.env)?;
        *self.inner.config.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(cfg);
        Ok(())
    }

    /// The MCP manager, brought in line with the configuration in force first: a server whose
    /// entry changed or was removed is closed, a new one is known (and starts on first need).
    pub(crate) fn mcp(&self) -> Arc<skald_mcp::McpManager> {
        let wanted = self.config().mcp.server_configs(&|k| std::env::var(k).ok());
        // Closing a changed server's connection happens as the returned future is dropped.
        drop(self.inner.mcp.configure(wanted));
        self.inner.mcp.clone()
    }

    /// Every event this process emits, from now on, the moment it is emitted (without
    /// sequences: the outbox is written after). For a client that shows what every process
    /// does and resumes after a drop, `subscribe_feed`.
    pub fn subscribe(&self) -> broadcast::Receiver<EventEnvelope> {
        self.inner.events.subscribe_local()
    }

    /// Every event of every process on this data dir, in sequence order: this process's as
    /// soon as they are in the outbox, others' as the tail finds them (every
    /// `events::TAIL_EVERY`). `since`: the last sequence the client saw — the events after it
    /// are replayed from the outbox first, without duplicates or gaps, or `resync` comes when
    /// they were pruned; `None` starts from now. The first event is `subscribed` with the
    /// sequence the feed continues after.
    pub async fn subscribe_feed(&self, since: Option<i64>) -> Result<EventFeed, EngineError> {
        let live = self.inner.events.subscribe_feed().await;
        let head = self.store().outbox_head().await?;
        Ok(EventFeed::new(self.store().clone(), live, head, since))
    }

    /// Waits until every event emitted so far is in the outbox, so other processes see it: a
    /// one-shot command calls it before it exits (`shutdown` does too).
    pub async fn flush_events(&self) {
        self.inner.events.flush().await;
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Runs `write` with the events `build` makes (given the id of the row it created, if any)
    /// riding its transaction; they are delivered once it committed, never when it did not.
    pub(crate) async fn commit_events<T, E>(
        &self,
        write: impl std::future::Future<Output = Result<T, E>>,
        build: impl FnOnce(Option<i64>) -> Vec<EventEnvelope> + Send + 'static,
    ) -> Result<T, E> {
        self.inner.events.commit_with(Box::new(build), write).await
    }

    pub(crate) fn emit(&self, envelope: EventEnvelope) {
        // No subscriber is fine: events describe committed rows, which stay readable.
        self.inner.events.send(envelope);
    }

    /// The paginated session list, newest first. An empty `source` or `search` is no filter.
    pub async fn list_sessions(
        &self,
        mut query: SessionListQuery,
    ) -> Result<Page<SessionSummary>, EngineError> {
        query.source = query.source.filter(|s| !s.trim().is_empty());
        query.search = query.search.filter(|s| !s.trim().is_empty());
        Ok(self.store().list_sessions(&query).await?)
    }

    /// The exact request that produced an assistant row (when `llm.request_log` is enabled).
    pub async fn llm_request(&self, message_id: i64) -> Result<serde_json::Value, EngineError> {
        let found = self.store().llm_request_for_message(message_id).await?;
        let Some((model, json)) = found else {
            return Err(EngineError::NotFound(format!(
                "no request was logged for message {message_id} (set llm.request_log.enabled: \
                 true in config.yml to keep them)"
            )));
        };
        let mut v: serde_json::Value = serde_json::from_str(&json).map_err(|e| {
            EngineError::Internal(format!("the logged request of message {message_id}: {e}"))
        })?;
        v["model"] = serde_json::Value::String(model);
        Ok(v)
    }

    /// What a stored call does, as it was labelled live (`write_file src/main.rs`), for the tree.
    fn describe_call(&self, name: &str, args: &serde_json::Value) -> Option<String> {
        match self.inner.tools.get(name) {
            Some(tool) => Some(tool.describe(args, true)),
            None => crate::tools::interface_label(name, args, true),
        }
    }

    /// The session debug tree: every frame, message and tool call, children under their call.
    pub async fn session_detail(&self, id: i64) -> Result<SessionDetail, EngineError> {
        let label = |name: &str, args: &serde_json::Value| self.describe_call(name, args);
        Ok(session::debug_tree::load(self.store(), id, &label).await?)
    }

    /// A window of the session tree: the newest rows, a page before or after a row, or the rows
    /// around one (a jump to a message, a call or a search hit). Long texts are cut to previews
    /// (`truncated`); `session_item` has them whole.
    pub async fn session_window(
        &self,
        id: i64,
        query: WindowQuery,
    ) -> Result<SessionWindow, EngineError> {
        let label = |name: &str, args: &serde_json::Value| self.describe_call(name, args);
        Ok(session::window::load(self.store(), id, query, &label).await?)
    }

    /// One row of the session tree whole: what a window cut, fetched when the user expands it.
    pub async fn session_item(&self, id: i64, item: ItemRef) -> Result<DebugMessage, EngineError> {
        let label = |name: &str, args: &serde_json::Value| self.describe_call(name, args);
        Ok(session::window::item(self.store(), id, item, &label).await?)
    }

    /// Creates an interactive session for `source` and makes it the source's active one.
    /// Every client showing the source follows it (`new_session`); the list refreshes.
    pub async fn new_session(&self, source: &str) -> Result<i64, EngineError> {
        self.new_session_with_agent(source, None).await
    }

    /// `new_session` running agent `agent_id` (a chat or task agent that loads; `main` when
    /// `None`).
    pub async fn new_session_with_agent(
        &self,
        source: &str,
        agent_id: Option<&str>,
    ) -> Result<i64, EngineError> {
        self.new_session_in(source, agent_id, None).await
    }

    /// `new_session_with_agent` whose tools work in `workdir` (an absolute path to a
    /// directory; `None`: where Skald runs).
    pub async fn new_session_in(
        &self,
        source: &str,
        agent_id: Option<&str>,
        workdir: Option<&std::path::Path>,
    ) -> Result<i64, EngineError> {
        let source = source.trim();
        chat::validate_source(source)?;
        let mut new = skald_store::repo::sessions::NewSession::interactive(source);
        if let Some(agent_id) = agent_id {
            new.agent_id = self.session_agent(agent_id)?;
        }
        let workdir = workdir.map(new_session_workdir).transpose()?;
        new.run_context = run_context::workdir_run_context(workdir.as_deref())?;
        let store = self.store();
        // A new conversation ends the bypasses a human granted in the old one.
        if let Some(old) = store.active_session(source).await? {
            self.revoke_for_new_session(old, source).await?;
        }
        let created = store.create_session(&new).await?;
        let session_id = created.session_id;
        store.set_active_session(source, session_id).await?;
        for event in [Event::NewSession { session_id }, Event::SessionsChanged {}] {
            self.emit(EventEnvelope::session(session_id, source, event));
        }
        Ok(session_id)
    }

    /// Names the session (`None` or a blank title clears the name); lists, search and the debug
    /// view show it.
    pub async fn rename_session(
        &self,
        session_id: i64,
        title: Option<String>,
    ) -> Result<SessionMeta, EngineError> {
        let title = title.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        if title.as_ref().is_some_and(|t| t.chars().count() > MAX_SESSION_TITLE_CHARS) {
            return Err(EngineError::InvalidInput(format!(
                "a session title has at most {MAX_SESSION_TITLE_CHARS} characters"
            )));
        }
        let store = self.store();
        store.set_session_title(session_id, title.as_deref()).await?;
        let session = store.session(session_id).await?;
        self.emit(EventEnvelope::session(session_id, &session.source, Event::SessionsChanged {}));
        Ok(session.meta())
    }
}

/// The memory manager over the data dir's `memory/` (created here), its size limit read from
/// the configuration in force at each write.
fn open_memory(
    dir: &Path,
    store: &Store,
    config: &Arc<RwLock<Arc<Config>>>,
    backend: Option<Arc<dyn crate::memory::MemoryStore>>,
) -> Result<Arc<crate::memory::MemoryManager>, EngineError> {
    let memory_dir = dir.join(crate::memory::MEMORY_DIR);
    let local = crate::memory::LocalMemory::new(memory_dir.clone()).map_err(|e| {
        EngineError::DataDir { path: memory_dir.display().to_string(), message: e.to_string() }
    })?;
    let backend = backend.unwrap_or_else(|| Arc::new(local));
    let config = config.clone();
    let limit: crate::memory::SizeLimit =
        Arc::new(move || config.read().unwrap_or_else(|p| p.into_inner()).memory.max_file_bytes);
    Ok(Arc::new(crate::memory::MemoryManager::new(backend, store.clone(), limit)))
}

fn prepare_dir(dir: &Path) -> Result<(), EngineError> {
    data_dir::prepare(dir).map_err(|e| EngineError::DataDir {
        path: dir.display().to_string(),
        message: e.to_string(),
    })
}

/// A new session's working directory as stored: absolute, an existing directory, links
/// resolved.
fn new_session_workdir(dir: &std::path::Path) -> Result<std::path::PathBuf, EngineError> {
    let invalid = |why: &str| {
        EngineError::InvalidInput(format!("working directory {}: {why}", dir.display()))
    };
    if !dir.is_absolute() {
        return Err(invalid("not an absolute path"));
    }
    let dir = std::fs::canonicalize(dir).map_err(|e| invalid(&e.to_string()))?;
    if !dir.is_dir() {
        return Err(invalid("not a directory"));
    }
    Ok(dir)
}
