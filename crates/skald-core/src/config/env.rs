//! Environment overrides (`SKALD_LLM_BASE_URL`, `SKALD_LLM_MODEL`, `SKALD_LLM_API_KEY`).

use super::file::{ClientConfig, Config};

/// Name of the client the environment defines.
pub const ENV_CLIENT_NAME: &str = "env";
/// Environment variable whose value is the API key of the env-defined client.
pub const ENV_API_KEY: &str = "SKALD_LLM_API_KEY";

/// The LLM overrides read from the environment, captured once so tests can pass their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvOverrides {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
}

impl EnvOverrides {
    pub fn from_process_env() -> Self {
        let get = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Self {
            base_url: get("SKALD_LLM_BASE_URL"),
            model: get("SKALD_LLM_MODEL"),
            api_key: get(ENV_API_KEY),
        }
    }

    /// With a base URL, an `env` client is put first in the fallback order; the model defaults to
    /// the first configured client's model. A lone API key applies to the first client.
    pub(super) fn apply(&self, config: &mut Config) {
        if let Some(base_url) = &self.base_url {
            let model = self
                .model
                .clone()
                .or_else(|| config.llm.clients.first().map(|c| c.model.clone()))
                .unwrap_or_default();
            config.llm.clients.retain(|c| c.name != ENV_CLIENT_NAME);
            config.llm.clients.insert(
                0,
                ClientConfig {
                    api_key_env: self.api_key.as_ref().map(|_| ENV_API_KEY.to_string()),
                    ..ClientConfig::new(ENV_CLIENT_NAME.to_string(), base_url.clone(), model)
                },
            );
            config.llm.fallback.retain(|n| n != ENV_CLIENT_NAME);
            if !config.llm.fallback.is_empty() {
                config.llm.fallback.insert(0, ENV_CLIENT_NAME.to_string());
            }
        } else if let Some(model) = &self.model
            && let Some(first) = config.ordered_clients().first().map(|c| c.name.clone())
            && let Some(c) = config.llm.clients.iter_mut().find(|c| c.name == first)
        {
            c.model = model.clone();
        }
        if self.base_url.is_none()
            && self.api_key.is_some()
            && let Some(c) = config.llm.clients.iter_mut().find(|c| c.api_key_env.is_none())
        {
            c.api_key_env = Some(ENV_API_KEY.to_string());
        }
    }
}
