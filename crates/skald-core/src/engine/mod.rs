//! `Engine`: opens the data dir (config, database), owns the event bus, and answers every command.

mod approvals;
mod bypasses;
mod chat;
mod chat_bus;
mod compact;
mod search;
mod settings;
mod usage;

pub use chat::{ChatOptions, SendReceipt};
pub use chat_bus::{CompletedToolCall, CompletedTurn};

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use skald_protocol::{
    ApiError, Event, EventEnvelope, Page, SessionDetail, SessionListQuery, SessionSummary,
};
use skald_store::{Clock, Store, SystemClock};
use tokio::sync::broadcast;

use crate::config::{self, Config, ConfigWatcher, EnvOverrides, KeyringSecrets, SecretStore};
use crate::error::EngineError;
use crate::session::registry::SessionRegistry;
use crate::tools::ToolRegistry;
use crate::{data_dir, session};

/// Capacity of the global event bus; a slow subscriber that falls further behind sees `Lagged`.
const EVENT_BUS_CAPACITY: usize = 1024;

/// How to open an engine.
#[derive(Clone, Default)]
pub struct EngineOptions {
    /// `None` = `SKALD_DATA_DIR` or the OS data dir.
    pub data_dir: Option<PathBuf>,
    /// `None` = read from the process environment.
    pub env: Option<EnvOverrides>,
    /// `None` = the wall clock.
    pub clock: Option<Arc<dyn Clock>>,
    /// Watch `config.yml` and reload on change (the app and `serve`; not one-shot CLI commands).
    pub watch_config: bool,
    /// `None` = the OS keychain.
    pub secrets: Option<Arc<dyn SecretStore>>,
    /// Continue a parked turn by itself when its decision lands (the app and `skald serve`).
    pub auto_resume: bool,
}

/// The engine. Cheap to clone; every clone is the same engine.
#[derive(Debug, Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    data_dir: PathBuf,
    store: Store,
    config: Arc<RwLock<Arc<Config>>>,
    env: EnvOverrides,
    events: broadcast::Sender<EventEnvelope>,
    chat_bus: broadcast::Sender<chat_bus::CompletedTurn>,
    sessions: SessionRegistry,
    tools: Arc<ToolRegistry>,
    secrets: Arc<dyn SecretStore>,
    /// One model client for the engine's life: its connections and the per-model health are
    /// shared by every turn (each turn applies the current timeouts with `with_settings`).
    llm: skald_llm::LlmClient,
    /// Woken whenever this process records a decision, so a waiting turn continues at once.
    decisions: Arc<tokio::sync::Notify>,
    /// Continue parked turns by themselves once decided (the app and `serve`).
    auto_resume: bool,
    /// Identifies this process in `session_runners`.
    runner_id: String,
    _watcher: Option<ConfigWatcher>,
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
        store.seed_rules(crate::approval::gate::SEEDS).await?;
        let retention =
            config.read().unwrap_or_else(|p| p.into_inner()).llm.request_log.retention_days;
        store.purge_llm_requests(retention).await?;
        let (events, _) = broadcast::channel(EVENT_BUS_CAPACITY);
        let watcher = if opts.watch_config {
            let bus = events.clone();
            let w = ConfigWatcher::start(&dir, env, config.clone(), move |outcome| {
                let event = Event::ConfigReloaded {
                    ok: outcome.is_ok(),
                    error: outcome.err().map(|e| e.to_string()),
                };
                let _ = bus.send(EventEnvelope { session_id: None, source: None, event });
            })
            .map_err(|e| EngineError::DataDir {
                path: dir.display().to_string(),
                message: format!("cannot watch config.yml: {e}"),
            })?;
            Some(w)
        } else {
            None
        };
        let runner_id =
            format!("{}-{}", std::process::id(), store.clock().now().timestamp_millis());
        let llm = skald_llm::LlmClient::new(skald_llm::LlmSettings::default()).map_err(|e| {
            EngineError::InvalidInput(format!("cannot create the HTTP client: {e}"))
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                data_dir: dir,
                store,
                config,
                env: env_for_reload,
                events,
                chat_bus: broadcast::channel(chat_bus::CHAT_BUS_CAPACITY).0,
                sessions: SessionRegistry::default(),
                tools: Arc::new(ToolRegistry::builtin()),
                secrets: opts.secrets.unwrap_or_else(|| Arc::new(KeyringSecrets)),
                llm,
                decisions: Arc::new(tokio::sync::Notify::new()),
                auto_resume: opts.auto_resume,
                runner_id,
                _watcher: watcher,
            }),
        })
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// The configuration in force now (reloaded when the file changes).
    pub fn config(&self) -> Arc<Config> {
        self.inner.config.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Re-reads `config.yml` now (the watcher does the same on file changes).
    pub fn reload_config(&self) -> Result<(), ApiError> {
        let cfg = config::load(&self.inner.data_dir, &self.inner.env).map_err(EngineError::from)?;
        *self.inner.config.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(cfg);
        Ok(())
    }

    /// Every event, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EventEnvelope> {
        self.inner.events.subscribe()
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    pub(crate) fn emit(&self, envelope: EventEnvelope) {
        // No subscriber is fine: events describe committed rows, which stay readable.
        let _ = self.inner.events.send(envelope);
    }

    /// The paginated session list, newest first.
    pub async fn list_sessions(
        &self,
        query: SessionListQuery,
    ) -> Result<Page<SessionSummary>, ApiError> {
        Ok(self.store().list_sessions(&query).await.map_err(EngineError::from)?)
    }

    /// The exact request that produced an assistant row (when `llm.request_log` is enabled).
    pub async fn llm_request(&self, message_id: i64) -> Result<serde_json::Value, ApiError> {
        let found =
            self.store().llm_request_for_message(message_id).await.map_err(EngineError::from)?;
        let Some((model, json)) = found else {
            return Err(ApiError::new(
                skald_protocol::ErrorCode::NotFound,
                format!(
                    "no request was logged for message {message_id} (set llm.request_log.enabled: \
                     true in config.yml to keep them)"
                ),
            ));
        };
        let mut v: serde_json::Value = serde_json::from_str(&json)
            .map_err(|e| ApiError::new(skald_protocol::ErrorCode::Internal, e.to_string()))?;
        v["model"] = serde_json::Value::String(model);
        Ok(v)
    }

    /// The session debug tree: every frame, message and tool call, children under their call.
    pub async fn session_detail(&self, id: i64) -> Result<SessionDetail, ApiError> {
        // Calls are labelled as they were live (`write_file src/main.rs`), not by bare name.
        let tools = &self.inner.tools;
        let label = |name: &str, args: &serde_json::Value| {
            tools.get(name).map(|tool| tool.describe(args, true))
        };
        Ok(session::debug_tree::load(self.store(), id, &label).await.map_err(EngineError::from)?)
    }

    /// Creates an interactive session for `source` and makes it the source's active one.
    pub async fn new_session(&self, source: &str) -> Result<i64, ApiError> {
        let source = source.trim();
        if source.is_empty() || !source.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(EngineError::InvalidInput(format!(
                "invalid source `{source}`: use letters, digits and `-`"
            ))
            .into());
        }
        let store = self.store();
        // A new conversation ends the bypasses a human granted in the old one.
        if let Some(old) = store.active_session(source).await.map_err(EngineError::from)? {
            self.revoke_for_new_session(old, source).await?;
        }
        let created = store
            .create_session(&skald_store::repo::sessions::NewSession::interactive(source))
            .await
            .map_err(EngineError::from)?;
        store.set_active_session(source, created.session_id).await.map_err(EngineError::from)?;
        self.emit(EventEnvelope {
            session_id: Some(created.session_id),
            source: Some(source.to_string()),
            event: Event::SessionsChanged {},
        });
        Ok(created.session_id)
    }
}

fn prepare_dir(dir: &Path) -> Result<(), EngineError> {
    let err = |e: std::io::Error| EngineError::DataDir {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    let cfg = dir.join(config::CONFIG_FILE_NAME);
    if !cfg.exists() {
        std::fs::write(&cfg, config::default_config_text()).map_err(err)?;
    }
    Ok(())
}
