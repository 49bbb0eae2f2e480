//! Settings on the wire: LLM clients (never the key itself), connection tests, approval rules.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A configured LLM client as the Settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LlmClientView {
    pub name: String,
    pub base_url: String,
    pub model: String,
    pub provider: Option<String>,
    /// Environment variable the key is read from, if any.
    pub api_key_env: Option<String>,
    /// Whether a key is available (env var set, or an entry in the OS keychain).
    pub has_api_key: bool,
    /// `env` = defined by SKALD_LLM_* variables (read-only here).
    pub from_env: bool,
    #[ts(type = "number | null")]
    pub context_window: Option<u64>,
    /// False when config.yml says `stream: false` (replies are then never streamed).
    pub stream: bool,
}

/// What the Settings page saves for one client. The client's other keys in config.yml
/// (`strength`, `scope`, `extra_params`, comments) are kept as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LlmClientInput {
    /// The client's name in config.yml before this edit; null for a new client. A different
    /// `name` renames the client and keeps its other keys.
    #[serde(default)]
    pub previous_name: Option<String>,
    pub name: String,
    pub base_url: String,
    pub model: String,
    pub provider: Option<String>,
    pub api_key_env: Option<String>,
    #[ts(type = "number | null")]
    pub context_window: Option<u64>,
    /// False writes `stream: false`; null keeps what config.yml says.
    #[serde(default)]
    pub stream: Option<bool>,
}

/// `GET /api/settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SettingsView {
    pub clients: Vec<LlmClientView>,
    /// Client names in the order they are tried.
    pub fallback: Vec<String>,
    pub data_dir: String,
    pub config_path: String,
    /// Names the text of config.yml this view was read from. A save that passes it back is
    /// refused (`conflict`) if the file changed since, so a client added by hand is not dropped.
    pub revision: String,
}

/// The result of "test connection": the endpoint's model list or why it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ConnectionTest {
    pub ok: bool,
    pub models: Vec<String>,
    /// Whether the configured model is among them.
    pub model_listed: bool,
    pub error: Option<String>,
    #[ts(type = "number")]
    pub latency_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    Allow,
    Require,
    Deny,
}

/// One approval rule, in evaluation order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ApprovalRuleView {
    #[ts(type = "number")]
    pub id: i64,
    pub group_id: String,
    pub tool_pattern: String,
    pub path_pattern: Option<String>,
    pub agent_id: Option<String>,
    pub source: Option<String>,
    pub action: RuleAction,
    #[ts(type = "number")]
    pub priority: i64,
    pub note: Option<String>,
    /// Set for the seeded defaults.
    pub seed_key: Option<String>,
}

/// A rule to create or update (group `default` when `group_id` is null).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ApprovalRuleInput {
    pub group_id: Option<String>,
    pub tool_pattern: String,
    pub path_pattern: Option<String>,
    pub agent_id: Option<String>,
    pub source: Option<String>,
    pub action: RuleAction,
    #[ts(type = "number")]
    pub priority: i64,
    pub note: Option<String>,
}
