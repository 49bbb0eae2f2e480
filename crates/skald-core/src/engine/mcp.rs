//! The configured MCP servers as Settings and `skald mcp` show and change them.

use std::sync::Arc;

use skald_mcp::{McpError, ServerState};
use skald_protocol::{
    McpAuthorization, McpServerInfo, McpServerInput, McpServerState, McpToolInfo,
};

use super::Engine;
use super::settings::{io_err, write_atomically};
use crate::config::{self, McpEdit, McpServerEntry, MergeError, SecretStore};
use crate::error::EngineError;
use crate::tools::names;
use crate::turn::McpEditor;

impl Engine {
    /// Every server of `mcp.servers` (or only `only`) and where it stands; with `start`, the
    /// enabled ones that are not running are started first (again, after a failure), so their
    /// tools are listed.
    pub async fn list_mcp_servers(
        &self,
        start: bool,
        only: Option<&str>,
    ) -> Result<Vec<McpServerInfo>, EngineError> {
        let mcp = self.mcp();
        if let Some(name) = only
            && !mcp.names().iter().any(|n| n == name)
        {
            let known = mcp.names().join(", ");
            return Err(EngineError::NotFound(format!(
                "no MCP server named `{name}` in mcp.servers (configured: {})",
                if known.is_empty() { "none" } else { &known }
            )));
        }
        let wanted = |name: &str| only.is_none_or(|o| o == name);
        if start {
            let starts = mcp
                .enabled()
                .into_iter()
                .filter(|(name, _)| wanted(name))
                .map(|(name, _)| {
                    let mcp = mcp.clone();
                    async move { mcp.connect(&name, true).await }
                })
                .collect::<Vec<_>>();
            // A server that fails says so in its status; the others are listed all the same.
            let _ = futures::future::join_all(starts).await;
        }
        let kept = self.config().mcp.kept_connected();
        Ok(mcp
            .statuses()
            .into_iter()
            .filter(|s| wanted(&s.name))
            .map(|s| {
                let (state, error) = match s.state {
                    ServerState::Disabled => (McpServerState::Disabled, None),
                    ServerState::NotStarted => (McpServerState::NotStarted, None),
                    ServerState::Ready => (McpServerState::Ready, None),
                    ServerState::Failed(e) => (McpServerState::Failed, Some(e)),
                    ServerState::NeedsAuthorization(e) => {
                        (McpServerState::NeedsAuthorization, Some(e))
                    }
                    ServerState::Authorizing => (McpServerState::Authorizing, None),
                };
                let tools = s
                    .tools
                    .iter()
                    .map(|t| McpToolInfo {
                        name: names::mcp_tool_name(&s.name, &t.name),
                        description: t.description.clone(),
                        read_only: t.read_only,
                    })
                    .collect();
                McpServerInfo {
                    keep_connected: kept.contains(&s.name),
                    name: s.name,
                    description: s.description,
                    endpoint: s.endpoint,
                    state,
                    error,
                    tools,
                    log_path: s.log.map(|p| p.display().to_string()),
                    log_lines: s.log_lines,
                }
            })
            .collect())
    }

    /// Starts the OAuth authorization of an HTTP server: returns the page the user opens to
    /// consent. The browser comes back to a listener on 127.0.0.1 (one answer, five minutes);
    /// the tokens go to the OS keychain and the server connects at its next use. Starting again
    /// replaces an authorization in progress.
    pub async fn authorize_mcp_server(&self, name: &str) -> Result<McpAuthorization, EngineError> {
        let url = self.mcp().authorize(name).await.map_err(mcp_error)?;
        Ok(McpAuthorization { server: name.to_string(), url })
    }

    /// Waits for the authorization `authorize_mcp_server` started to end, then starts the server
    /// and lists it (with its tools, or why it still cannot start).
    pub async fn wait_mcp_authorization(
        &self,
        name: &str,
    ) -> Result<Vec<McpServerInfo>, EngineError> {
        self.mcp().wait_authorized(name).await.map_err(mcp_error)?;
        self.list_mcp_servers(true, Some(name)).await
    }

    /// Forgets an HTTP server's OAuth tokens (removed from the keychain): it asks for
    /// authorization again at its next start.
    pub async fn forget_mcp_authorization(
        &self,
        name: &str,
    ) -> Result<Vec<McpServerInfo>, EngineError> {
        self.mcp().forget_authorization(name).await.map_err(mcp_error)?;
        self.list_mcp_servers(false, Some(name)).await
    }

    /// Adds a server to `mcp.servers` in config.yml (in place: comments and other settings stay),
    /// validated like a hand edit; it starts when an agent first activates it.
    pub async fn add_mcp_server(
        &self,
        server: McpServerInput,
    ) -> Result<Vec<McpServerInfo>, EngineError> {
        let entry = McpServerEntry {
            name: server.name.trim().to_string(),
            description: server.description.filter(|d| !d.trim().is_empty()),
            command: server.command.filter(|c| !c.trim().is_empty()),
            args: server.args,
            env: server.env,
            cwd: server.cwd.filter(|c| !c.trim().is_empty()),
            url: server.url.filter(|u| !u.trim().is_empty()),
            api_key_env: server.api_key_env.filter(|k| !k.trim().is_empty()),
            oauth: None,
            enabled: true,
            timeout_secs: None,
            trusted: server.trusted,
            keep_connected: server.keep_connected,
        };
        self.edit_mcp(McpEdit::Add(entry)).await
    }

    /// Removes a server from `mcp.servers` (its connection closes at the next turn or listing).
    pub async fn remove_mcp_server(&self, name: &str) -> Result<Vec<McpServerInfo>, EngineError> {
        self.edit_mcp(McpEdit::Remove(name.to_string())).await
    }

    /// Enables or disables a server: a disabled one is listed but never started, and agents are
    /// not offered it.
    pub async fn set_mcp_server_enabled(
        &self,
        name: &str,
        enabled: bool,
    ) -> Result<Vec<McpServerInfo>, EngineError> {
        self.edit_mcp(McpEdit::SetEnabled { name: name.to_string(), enabled }).await
    }

    async fn edit_mcp(&self, edit: McpEdit) -> Result<Vec<McpServerInfo>, EngineError> {
        self.apply_mcp_edit(edit)?;
        self.list_mcp_servers(false, None).await
    }

    /// How a turn's `config` tools change `mcp.servers`: through the engine, which owns the
    /// configuration (the file, the reloaded copy and the manager stay in step).
    pub(super) fn mcp_editor(&self) -> McpEditor {
        let weak = std::sync::Arc::downgrade(&self.inner);
        std::sync::Arc::new(move |edit| match weak.upgrade() {
            Some(inner) => Engine { inner }.apply_mcp_edit(edit),
            None => Err(EngineError::ShuttingDown),
        })
    }

    /// Writes `edit` into config.yml, reloads the configuration and brings the manager in line.
    fn apply_mcp_edit(&self, edit: McpEdit) -> Result<(), EngineError> {
        let path = self.data_dir().join(config::CONFIG_FILE_NAME);
        let text = config::read_text(&path).map_err(EngineError::from)?.unwrap_or_default();
        // The file as it is must be valid: an edit never builds on a broken file.
        let current = config::parse_text(&path, &text)?;
        let edited =
            config::edit_mcp_servers(&path, &text, &current, &edit).map_err(|e| match e {
                MergeError::Input(e) => EngineError::InvalidInput(e.to_string()),
                MergeError::Layout(e) => EngineError::Config(e),
                editor @ MergeError::Editor { .. } => EngineError::Internal(editor.to_string()),
            })?;
        if edited != text {
            write_atomically(&path, &edited).map_err(io_err)?;
        }
        self.reload_config()?;
        drop(self.mcp());
        Ok(())
    }
}

/// An MCP manager's refusal as the engine reports it.
fn mcp_error(e: McpError) -> EngineError {
    match e {
        McpError::UnknownServer(_) => EngineError::NotFound(e.to_string()),
        McpError::Connect { .. } | McpError::Disabled(_) => {
            EngineError::InvalidInput(e.to_string())
        }
        other => EngineError::Conflict(other.to_string()),
    }
}

/// The OS keychain (or the test's memory) as the MCP manager's OAuth token vault. Where the
/// keychain cannot be used (no Secret Service on a headless Linux), tokens are kept in memory
/// until Skald exits, with a warning in the log: never written to a file in plain text.
pub(super) struct KeychainVault {
    keychain: Arc<dyn SecretStore>,
    memory: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

impl KeychainVault {
    pub(super) fn new(keychain: Arc<dyn SecretStore>) -> Self {
        Self { keychain, memory: std::sync::Mutex::default() }
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, String>> {
        self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl skald_mcp::TokenVault for KeychainVault {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        if let Some(value) = self.memory().get(key) {
            return Ok(Some(value.clone()));
        }
        match self.keychain.get(key) {
            Ok(value) => Ok(value),
            Err(e) => {
                tracing::warn!("OAuth tokens of MCP servers cannot be read from the keychain: {e}");
                Ok(None)
            }
        }
    }

    fn set(&self, key: &str, value: &str) -> Result<(), String> {
        match self.keychain.set(key, value) {
            Ok(()) => {
                self.memory().remove(key);
            }
            Err(e) => {
                tracing::warn!(
                    "the OS keychain cannot be used ({e}): an MCP server's OAuth tokens are kept \
                     in memory until Skald exits"
                );
                self.memory().insert(key.to_string(), value.to_string());
            }
        }
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.memory().remove(key);
        self.keychain.delete(key).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use skald_mcp::TokenVault as _;

    use super::KeychainVault;
    use crate::config::{MemorySecrets, SecretError, SecretStore};

    /// A keychain that cannot be reached (no Secret Service on a headless machine).
    #[derive(Debug)]
    struct NoKeychain;

    impl SecretStore for NoKeychain {
        fn get(&self, _: &str) -> Result<Option<String>, SecretError> {
            Err(SecretError::new("no Secret Service"))
        }
        fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
            Err(SecretError::new("no Secret Service"))
        }
        fn delete(&self, _: &str) -> Result<(), SecretError> {
            Err(SecretError::new("no Secret Service"))
        }
    }

    #[test]
    fn tokens_go_to_the_keychain_or_stay_in_memory_when_it_cannot_be_used() {
        let keychain = Arc::new(MemorySecrets::default());
        let vault = KeychainVault::new(keychain.clone());
        vault.set("mcp-oauth:a", "{tokens}").unwrap();
        assert_eq!(keychain.get("mcp-oauth:a").unwrap().as_deref(), Some("{tokens}"));
        vault.delete("mcp-oauth:a").unwrap();
        assert_eq!(keychain.get("mcp-oauth:a").unwrap(), None);

        let vault = KeychainVault::new(Arc::new(NoKeychain));
        assert_eq!(vault.get("mcp-oauth:a").unwrap(), None);
        vault.set("mcp-oauth:a", "{tokens}").unwrap();
        assert_eq!(vault.get("mcp-oauth:a").unwrap().as_deref(), Some("{tokens}"));
    }
}
