//! The shape of `config.yml`, parsed strictly: an unknown key is an error that names it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Model strength (clients declare theirs; agents and the compactor ask for a minimum): the
/// client crate's type, so the configuration feeds chain resolution as written.
pub use skald_llm::Strength;

/// The whole configuration file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub llm: LlmConfig,
    pub mcp: super::mcp::McpConfig,
    /// IANA zone for the date shown to the model and for cron; `None` = the OS zone.
    pub timezone: Option<String>,
    pub memory: MemoryConfig,
    pub notifications: NotificationsConfig,
    pub tic: super::tic::TicConfig,
    /// What each source (surface) adds to its sessions' requests, over built-in defaults.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sources: std::collections::BTreeMap<String, super::sources::SourceContextConfig>,
}

impl Config {
    /// What `source`'s sessions get in their requests (`sources:` over the built-in defaults).
    pub fn source_context(&self, source: &str) -> super::sources::SourceContext {
        super::sources::source_context(&self.sources, source)
    }
}

/// `notifications:` — what background work reports reaches the person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NotificationsConfig {
    /// Deliver what jobs and ticks report to the home source's session, where its agent writes
    /// one briefing per batch (default true). Off: reports are kept (listed by
    /// `list_notifications`) and not delivered, so no model request is made for them.
    pub briefings: bool,
    /// Days a notification is kept (default 30; 0 keeps them): a delivered one counted from
    /// its delivery (the briefing stays in the home chat), an undelivered one from when it was
    /// made. Pruned when Skald starts and hourly while the background runs.
    pub retention_days: u32,
}

impl Default for NotificationsConfig {
    fn default() -> Self {
        Self { briefings: true, retention_days: 30 }
    }
}

/// `memory:` — agent memory in the data dir's `memory/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Largest memory file an agent (or the Memory page) may write, in bytes (default 64 KiB):
    /// a write past it is refused with an error that asks the agent to condense the file.
    pub max_file_bytes: u64,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self { max_file_bytes: 64 * 1024 }
    }
}

/// The bounds of `memory.max_file_bytes`.
const MEMORY_FILE_BYTES: std::ops::RangeInclusive<u64> = 1024..=16 * 1024 * 1024;

/// The deepest `llm.max_subagent_depth` accepted: each level is a live frame of one turn.
const MAX_SUBAGENT_DEPTH: u32 = 16;

/// The most async tasks one reply or one turn may be allowed to start: each is a session of its
/// own with up to `max_tool_rounds` model requests, and its report wakes the chat again.
const MAX_ASYNC_TASK_STARTS: u32 = 64;

/// `llm:` — clients, fallback order and loop limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    pub clients: Vec<ClientConfig>,
    /// Client names in the order they are tried; clients not listed follow in file order.
    pub fallback: Vec<String>,
    pub max_tool_rounds: u32,
    pub max_history_messages: u32,
    pub max_tool_result_chars: Option<u32>,
    pub max_parallel_subagents: u32,
    /// Async tasks (`execute_task` mode `async`) the background runner drives at once (default
    /// 2); more wait their turn in the queue. Read when the engine opens.
    pub max_async_tasks: u32,
    /// Async tasks one model reply may start (default 4); its further `execute_task` async
    /// calls are refused with a tool error, never queued.
    pub max_async_tasks_per_reply: u32,
    /// Async tasks one turn may start (default 8), counted from the user's latest message, so
    /// reports that wake the chat do not renew the allowance.
    pub max_async_tasks_per_turn: u32,
    /// Deepest sub-agent level (default 5): the root agent is depth 0, its sub-agents depth 1,
    /// and so on. A sub-agent at this depth is not offered `execute_subtask`; 0 turns delegation
    /// off.
    pub max_subagent_depth: u32,
    /// Seconds before a model request without any response byte is abandoned.
    pub request_timeout_secs: u64,
    /// Seconds a stream may stay silent before it counts as dropped.
    pub idle_timeout_secs: u64,
    pub datetime: DatetimeConfig,
    pub compaction: Option<CompactionConfig>,
    pub request_log: RequestLogConfig,
}

/// `llm.request_log:` — keep the exact request of each round for the debug view (off by default:
/// it stores the whole context every round).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RequestLogConfig {
    pub enabled: bool,
    pub retention_days: u32,
}

impl Default for RequestLogConfig {
    fn default() -> Self {
        Self { enabled: false, retention_days: 14 }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            clients: Vec::new(),
            fallback: Vec::new(),
            max_tool_rounds: 20,
            max_history_messages: 30,
            max_tool_result_chars: None,
            max_parallel_subagents: 4,
            max_async_tasks: 2,
            max_async_tasks_per_reply: 4,
            max_async_tasks_per_turn: 8,
            max_subagent_depth: 5,
            request_timeout_secs: 300,
            idle_timeout_secs: 60,
            datetime: DatetimeConfig::default(),
            compaction: None,
            request_log: RequestLogConfig::default(),
        }
    }
}

/// One OpenAI-compatible endpoint + model. Serialised without the keys left at their default, so
/// a client written into the file says only what it sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientConfig {
    pub name: String,
    pub base_url: String,
    pub model: String,
    /// Environment variable holding the API key. Without it the OS keychain entry
    /// (service `skald`, account = client name) is used, if present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Provider kind, for provider-specific behaviour such as prompt-cache hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<Strength>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scope: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_params: Option<serde_json::Value>,
    /// `false`: never ask this client to stream (for servers that break streamed replies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

impl ClientConfig {
    /// A client with only its name, endpoint and model set.
    pub fn new(name: String, base_url: String, model: String) -> Self {
        ClientConfig {
            name,
            base_url,
            model,
            api_key_env: None,
            provider: None,
            strength: None,
            scope: Vec::new(),
            context_window: None,
            extra_params: None,
            stream: None,
        }
    }

    /// Whether replies are streamed (the default).
    pub fn streams(&self) -> bool {
        self.stream != Some(false)
    }

    /// Anthropic models behind OpenRouter take explicit cache-control hints.
    pub fn wants_cache_hints(&self) -> bool {
        self.provider.as_deref() == Some("openrouter") && self.model.starts_with("anthropic/")
    }
}

/// `llm.datetime:` — how "now" appears in the dynamic tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatetimeConfig {
    pub enabled: bool,
    /// Round the shown time down to this many minutes so the prompt prefix stays cacheable.
    pub round_minutes: Option<u32>,
}

impl Default for DatetimeConfig {
    fn default() -> Self {
        Self { enabled: true, round_minutes: Some(15) }
    }
}

/// `llm.compaction:` — when and how the history is summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompactionConfig {
    pub enabled: bool,
    /// Compact when the context estimate exceeds this; `None` = window minus reserve.
    pub threshold_tokens: Option<u64>,
    pub reserve_tokens: u64,
    /// Token budget of the recent tail kept verbatim after the summary.
    pub keep_recent_tokens: u64,
    pub strength: Option<Strength>,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold_tokens: None,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
            strength: None,
        }
    }
}

/// The commented file written on first start.
pub fn default_config_text() -> &'static str {
    include_str!("default_config.yml")
}

pub(super) fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Config::default());
    }
    yaml_serde::from_str::<Config>(text).map_err(|e| {
        let (line, column) = e.location().map(|l| (l.line(), l.column())).unwrap_or((1, 1));
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            message: strip_location(&e.to_string()),
        }
    })
}

/// yaml_serde appends " at line L column C"; the error already carries both up front.
fn strip_location(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Checks what serde cannot: names are unique, fallback names exist, limits are sane.
pub(super) fn validate(path: &Path, text: Option<&str>, c: &Config) -> Result<(), ConfigError> {
    let fail = |needle: &str, message: String| -> ConfigError {
        match text.and_then(|t| find_line(t, needle)) {
            Some(line) => {
                ConfigError::Invalid { path: path.to_path_buf(), line, column: 1, message }
            }
            None => ConfigError::Semantic { path: path.to_path_buf(), message },
        }
    };
    let mut seen = std::collections::HashSet::new();
    for client in &c.llm.clients {
        if client.name.trim().is_empty() {
            return Err(fail("name:", "llm.clients: a client has an empty `name`".into()));
        }
        if !seen.insert(client.name.as_str()) {
            return Err(fail(
                &client.name,
                format!("llm.clients: the client name `{}` is used twice", client.name),
            ));
        }
        if !(client.base_url.starts_with("http://") || client.base_url.starts_with("https://")) {
            return Err(fail(
                &client.base_url,
                format!(
                    "llm.clients[{}].base_url: `{}` is not an http(s) URL",
                    client.name, client.base_url
                ),
            ));
        }
        if client.model.trim().is_empty() {
            return Err(fail(
                "model:",
                format!("llm.clients[{}].model: must not be empty", client.name),
            ));
        }
    }
    for name in &c.llm.fallback {
        if !seen.contains(name.as_str()) {
            return Err(fail(
                name,
                format!("llm.fallback: `{name}` is not the name of a client in llm.clients"),
            ));
        }
    }
    if let Some((needle, message)) = c.mcp.problem() {
        return Err(fail(&needle, message));
    }
    if let Some((needle, message)) = c.tic.problem() {
        return Err(fail(&needle, message));
    }
    if let Some((needle, message)) = super::sources::problem(&c.sources) {
        return Err(fail(&needle, message));
    }
    if c.llm.max_tool_rounds == 0 {
        return Err(fail("max_tool_rounds", "llm.max_tool_rounds: must be at least 1".into()));
    }
    if c.llm.max_parallel_subagents == 0 {
        return Err(fail(
            "max_parallel_subagents",
            "llm.max_parallel_subagents: must be at least 1".into(),
        ));
    }
    if c.llm.max_async_tasks == 0 {
        return Err(fail("max_async_tasks:", "llm.max_async_tasks: must be at least 1".into()));
    }
    for (key, value) in [
        ("max_async_tasks_per_reply", c.llm.max_async_tasks_per_reply),
        ("max_async_tasks_per_turn", c.llm.max_async_tasks_per_turn),
    ] {
        if !(1..=MAX_ASYNC_TASK_STARTS).contains(&value) {
            return Err(fail(
                key,
                format!("llm.{key}: must be between 1 and {MAX_ASYNC_TASK_STARTS}, not {value}"),
            ));
        }
    }
    if c.llm.max_async_tasks_per_reply > c.llm.max_async_tasks_per_turn {
        return Err(fail(
            "max_async_tasks_per_reply",
            format!(
                "llm.max_async_tasks_per_reply: at most llm.max_async_tasks_per_turn ({}), not {}",
                c.llm.max_async_tasks_per_turn, c.llm.max_async_tasks_per_reply
            ),
        ));
    }
    if !MEMORY_FILE_BYTES.contains(&c.memory.max_file_bytes) {
        return Err(fail(
            "max_file_bytes",
            format!(
                "memory.max_file_bytes: must be between {} and {}, not {}",
                MEMORY_FILE_BYTES.start(),
                MEMORY_FILE_BYTES.end(),
                c.memory.max_file_bytes
            ),
        ));
    }
    if c.llm.max_subagent_depth > MAX_SUBAGENT_DEPTH {
        return Err(fail(
            "max_subagent_depth",
            format!("llm.max_subagent_depth: at most {MAX_SUBAGENT_DEPTH}"),
        ));
    }
    Ok(())
}

fn find_line(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| !l.trim_start().starts_with('#') && l.contains(needle)).map(|i| i + 1)
}

impl ClientConfig {
    /// The window set on the client, else the one of its model's well-known family.
    pub fn effective_context_window(&self) -> Option<u64> {
        self.context_window.or_else(|| skald_llm::known_context_window(&self.model))
    }
}

impl Config {
    /// Clients in the order they are tried: the fallback list first, then the rest in file order.
    pub fn ordered_clients(&self) -> Vec<&ClientConfig> {
        let mut out: Vec<&ClientConfig> = self
            .llm
            .fallback
            .iter()
            .filter_map(|n| self.llm.clients.iter().find(|c| &c.name == n))
            .collect();
        for c in &self.llm.clients {
            if !out.iter().any(|o| o.name == c.name) {
                out.push(c);
            }
        }
        out
    }
}
