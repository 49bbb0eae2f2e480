//! `mcp.servers:` — the MCP servers agents may activate, as written in config.yml, and how each
//! becomes a [`skald_mcp::ServerConfig`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `mcp:` in config.yml.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    pub servers: Vec<McpServerEntry>,
}

/// One server: `command` (+ `args`, `env`, `cwd`) for a local process speaking stdio, or `url`
/// (+ `api_key_env`) for streamable HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerEntry {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment; `${VAR}` in a value is replaced by Skald's own `VAR`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Environment variable holding the bearer key of an HTTP server (keys stay out of the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// How Skald identifies itself when an HTTP server without a key asks for OAuth (by default
    /// it registers itself dynamically; the tokens go to the OS keychain, never this file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<Box<McpOAuthEntry>>,
    #[serde(default = "enabled_by_default", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// Seconds one call may take before it is cancelled (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// The user trusts the server's annotations (`readOnlyHint`); false unless set by a person
    /// (config.yml, `skald mcp add --trusted`, Settings), never by an agent's `register_mcp`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trusted: bool,
    /// Started with the engine and started again (with backoff) when it exits, so what it
    /// pushes is stored for TIC ticks; only such servers' events are stored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_connected: bool,
}

/// `oauth:` of an HTTP server: a client registered beforehand (its secret or private key read
/// from the environment), scopes, a client ID metadata document, or the client credentials
/// grant for a server acting for a machine.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpOAuthEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Environment variable holding the client's secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// HTTPS URL of Skald's client metadata document, used as the client id where the
    /// authorization server accepts one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// Get a token with the client's own credentials, no browser (`client_id` and a secret or
    /// private key required).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub client_credentials: bool,
    /// Environment variable holding a PEM private key that signs the client's assertion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_key_env: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
}

/// The longest call timeout accepted: an hour (a call the user waits for, not a daemon).
const MAX_TIMEOUT_SECS: u64 = 3600;

fn enabled_by_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl McpConfig {
    /// Enabled servers marked `keep_connected`, by name.
    pub fn kept_connected(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| s.enabled && s.keep_connected)
            .map(|s| s.name.clone())
            .collect()
    }

    /// What is wrong with the server list, as `(text to find in the file, message)`.
    pub(super) fn problem(&self) -> Option<(String, String)> {
        let mut seen = std::collections::HashSet::new();
        for s in &self.servers {
            if let Some(why) = skald_mcp::validate_name(&s.name) {
                return Some((s.name.clone(), format!("mcp.servers: {why}")));
            }
            if !seen.insert(s.name.as_str()) {
                let msg = format!("mcp.servers: the server name `{}` is used twice", s.name);
                return Some((s.name.clone(), msg));
            }
            let at = |field: &str| format!("mcp.servers[{}].{field}", s.name);
            match (&s.command, &s.url) {
                (Some(_), Some(_)) | (None, None) => {
                    let msg = format!(
                        "{}: give either `command` (a local server) or `url` (an HTTP server)",
                        format_args!("mcp.servers[{}]", s.name)
                    );
                    return Some((s.name.clone(), msg));
                }
                (Some(c), None) if c.trim().is_empty() => {
                    return Some((
                        "command:".into(),
                        format!("{}: must not be empty", at("command")),
                    ));
                }
                (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                    return Some((
                        u.clone(),
                        format!("{}: `{u}` is not an http(s) URL", at("url")),
                    ));
                }
                _ => {}
            }
            if s.timeout_secs.is_some_and(|t| t == 0 || t > MAX_TIMEOUT_SECS) {
                let msg = format!("{}: from 1 to {MAX_TIMEOUT_SECS} seconds", at("timeout_secs"));
                return Some(("timeout_secs".into(), msg));
            }
            if let Some(oauth) = &s.oauth {
                let why = if s.command.is_some() {
                    Some("only HTTP servers authorize with OAuth")
                } else if s.api_key_env.is_some() {
                    Some("give either `api_key_env` or `oauth`, not both")
                } else if oauth.client_credentials && oauth.client_id.is_none() {
                    Some("`client_credentials` needs `client_id`")
                } else if oauth.client_credentials
                    && oauth.client_secret_env.is_none()
                    && oauth.private_key_env.is_none()
                {
                    Some("`client_credentials` needs `client_secret_env` or `private_key_env`")
                } else if oauth
                    .client_metadata_url
                    .as_deref()
                    .is_some_and(|u| !u.starts_with("https://"))
                {
                    Some("`client_metadata_url` must be an https URL")
                } else {
                    None
                };
                if let Some(why) = why {
                    return Some(("oauth:".into(), format!("{}: {why}", at("oauth"))));
                }
            }
            if s.command.is_some() && s.api_key_env.is_some() {
                let msg = format!(
                    "{}: only HTTP servers take a key; pass it in `env`",
                    at("api_key_env")
                );
                return Some(("api_key_env".into(), msg));
            }
        }
        None
    }

    /// The servers as the manager takes them; `lookup` reads Skald's environment.
    pub fn server_configs(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<skald_mcp::ServerConfig> {
        self.servers
            .iter()
            .map(|s| {
                let transport = match (&s.command, &s.url) {
                    (Some(command), _) => skald_mcp::Transport::Stdio {
                        command: command.clone(),
                        args: s.args.clone(),
                        env: s
                            .env
                            .iter()
                            .map(|(k, v)| (k.clone(), interpolate(v, lookup)))
                            .collect(),
                        cwd: s.cwd.as_ref().map(std::path::PathBuf::from),
                    },
                    (None, url) => skald_mcp::Transport::Http {
                        url: url.clone().unwrap_or_default(),
                        api_key: s.api_key_env.as_deref().and_then(lookup),
                        oauth: s.oauth.as_ref().map(|o| o.settings(lookup)).unwrap_or_default(),
                    },
                };
                skald_mcp::ServerConfig {
                    name: s.name.clone(),
                    transport,
                    description: s.description.clone(),
                    enabled: s.enabled,
                    call_timeout: s.timeout_secs.map(std::time::Duration::from_secs),
                    trusted: s.trusted,
                }
            })
            .collect()
    }
}

impl McpOAuthEntry {
    /// As the manager takes it, secrets read from the environment.
    fn settings(&self, lookup: &dyn Fn(&str) -> Option<String>) -> skald_mcp::OAuthSettings {
        skald_mcp::OAuthSettings {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret_env.as_deref().and_then(lookup),
            scopes: self.scopes.clone(),
            client_metadata_url: self.client_metadata_url.clone(),
            client_credentials: self.client_credentials,
            private_key_pem: self.private_key_env.as_deref().and_then(lookup),
            signing_algorithm: self.signing_algorithm.clone(),
        }
    }
}

/// `${VAR}` → the value of `VAR` (empty when unset); anything else is kept as written.
fn interpolate(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else { break };
        out.push_str(&rest[..start]);
        let var = &rest[start + 2..start + 2 + len];
        out.push_str(&lookup(var).unwrap_or_default());
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{McpConfig, interpolate};

    fn parse(yaml: &str) -> McpConfig {
        yaml_serde::from_str(yaml).unwrap()
    }

    #[test]
    fn an_oauth_block_is_read_with_its_secrets_from_the_environment() {
        let config = parse(
            "servers:\n  - name: corp\n    url: https://mcp.corp.example/mcp\n    oauth:\n      \
             client_id: skald\n      client_secret_env: CORP_SECRET\n      scopes: [read]\n",
        );
        assert_eq!(config.problem(), None);
        let lookup = |k: &str| (k == "CORP_SECRET").then(|| "s3cret".to_string());
        let servers = config.server_configs(&lookup);
        let skald_mcp::Transport::Http { oauth, api_key, .. } = &servers[0].transport else {
            panic!("an HTTP server")
        };
        assert_eq!(api_key, &None);
        assert_eq!(oauth.client_id.as_deref(), Some("skald"));
        assert_eq!(oauth.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(oauth.scopes, ["read"]);
        // The secret itself is never written back: only the variable's name is in the file.
        let written = yaml_serde::to_string(&config).unwrap();
        assert!(written.contains("client_secret_env: CORP_SECRET") && !written.contains("s3cret"));
    }

    #[test]
    fn oauth_that_cannot_work_is_refused_naming_why() {
        let refused = [
            ("command: x\n    oauth: {}", "only HTTP servers"),
            ("url: https://a.example/mcp\n    api_key_env: K\n    oauth: {}", "not both"),
            (
                "url: https://a.example/mcp\n    oauth: { client_credentials: true }",
                "needs `client_id`",
            ),
            (
                "url: https://a.example/mcp\n    oauth: { client_credentials: true, client_id: c }",
                "needs `client_secret_env` or `private_key_env`",
            ),
            (
                "url: https://a.example/mcp\n    oauth: { client_metadata_url: http://a.example/c.json }",
                "must be an https URL",
            ),
        ];
        for (entry, why) in refused {
            let config = parse(&format!("servers:\n  - name: s\n    {entry}\n"));
            let (_, message) = config.problem().unwrap_or_else(|| panic!("{entry} accepted"));
            assert!(message.contains("mcp.servers[s].oauth") && message.contains(why), "{message}");
        }
        let unknown: Result<McpConfig, _> = yaml_serde::from_str(
            "servers:\n  - name: s\n    url: https://a.example/mcp\n    oauth: { token: abc }\n",
        );
        assert!(unknown.is_err(), "a token in config.yml was accepted");
    }

    #[test]
    fn env_values_take_variables_from_skalds_environment() {
        let lookup = |k: &str| (k == "TOKEN").then(|| "s3cret".to_string());
        assert_eq!(interpolate("Bearer ${TOKEN}", &lookup), "Bearer s3cret");
        assert_eq!(interpolate("${MISSING}x", &lookup), "x");
        assert_eq!(interpolate("plain ${unclosed", &lookup), "plain ${unclosed");
    }
}
