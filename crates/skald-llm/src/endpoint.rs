//! Model endpoints as configured: where a model lives, how strong it is, what it is for.

use serde::{Deserialize, Serialize};

/// How capable a model is; AUTO resolution picks models at or above an agent's required strength.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    VeryLow,
    Low,
    Average,
    High,
    VeryHigh,
}

/// One configured model on one OpenAI-compatible server.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEndpoint {
    /// Alias used in config, agent meta and events (`model_fallback {from, to}`).
    pub name: String,
    /// Base URL ending in `/v1` (or the provider's equivalent); `/chat/completions` is appended
    /// unless the URL already ends with it.
    pub base_url: String,
    /// Model id sent as `model` in the request body.
    pub model: String,
    #[serde(default)]
    pub api_key: Option<String>,
    /// Send Anthropic-style prompt-cache hints (header + `cache_control` markers).
    #[serde(default)]
    pub prompt_cache: bool,
    /// Merged top-level into every request body, overriding the defaults.
    #[serde(default)]
    pub extra_params: Option<serde_json::Value>,
    #[serde(default)]
    pub strength: Option<Strength>,
    #[serde(default)]
    pub scope: Vec<String>,
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Whether requests may ask for a streamed reply (a per-client `stream: false` says never).
    #[serde(default = "streams_by_default")]
    pub stream: bool,
}

fn streams_by_default() -> bool {
    true
}

impl ModelEndpoint {
    /// Where requests go, as `scheme://host[:port]`: what an error may name (the rest of the URL
    /// could carry a key). `None` for a base URL that does not parse.
    pub fn origin(&self) -> Option<String> {
        let url = reqwest::Url::parse(&self.base_url).ok()?;
        let host = url.host_str()?;
        Some(match url.port() {
            Some(port) => format!("{}://{host}:{port}", url.scheme()),
            None => format!("{}://{host}", url.scheme()),
        })
    }

    /// A minimal endpoint; the other fields keep their defaults.
    pub fn new(
        name: impl Into<String>,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        ModelEndpoint {
            name: name.into(),
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            prompt_cache: false,
            extra_params: None,
            strength: None,
            scope: Vec::new(),
            context_window: None,
            stream: true,
        }
    }

    /// The chat-completions URL for this endpoint.
    pub fn chat_url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        }
    }

    /// Strength used for ordering when the config leaves it out.
    pub(crate) fn effective_strength(&self) -> Strength {
        self.strength.unwrap_or(Strength::Average)
    }

    pub(crate) fn has_scope(&self, scope: &str) -> bool {
        self.scope.iter().any(|s| s.eq_ignore_ascii_case(scope))
    }
}

// Hand-written so that an endpoint can be logged without leaking its key.
impl std::fmt::Debug for ModelEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelEndpoint")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("prompt_cache", &self.prompt_cache)
            .field("extra_params", &self.extra_params)
            .field("strength", &self.strength)
            .field("scope", &self.scope)
            .field("context_window", &self.context_window)
            .field("stream", &self.stream)
            .finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn strength_is_ordered_and_snake_case() {
        assert!(Strength::VeryLow < Strength::Low && Strength::High < Strength::VeryHigh);
        let s: Strength = serde_json::from_str("\"very_high\"").unwrap();
        assert_eq!(s, Strength::VeryHigh);
    }

    #[test]
    fn debug_redacts_key_and_url_is_built() {
        let mut ep = ModelEndpoint::new("m", "http://h/v1/", "gpt");
        ep.api_key = Some("sk-secret".into());
        assert!(!format!("{ep:?}").contains("sk-secret"));
        assert_eq!(ep.chat_url(), "http://h/v1/chat/completions");
        let ep2 = ModelEndpoint::new("m", "http://h/api/paas/v4/chat/completions", "g");
        assert_eq!(ep2.chat_url(), "http://h/api/paas/v4/chat/completions");
    }
}
