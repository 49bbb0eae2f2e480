//! Where a server's OAuth tokens live: a [`TokenVault`] (the OS keychain in the product, memory
//! in tests), one entry per server holding its tokens, its client registration and the URL they
//! were issued for — never config.yml or the database.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// A store of secrets by name (the engine hands its keychain in).
pub trait TokenVault: Send + Sync {
    fn get(&self, key: &str) -> Result<Option<String>, String>;
    fn set(&self, key: &str, value: &str) -> Result<(), String>;
    fn delete(&self, key: &str) -> Result<(), String>;
}

/// Secrets in memory (tests, and a manager nobody gave a keychain).
#[derive(Debug, Default)]
pub struct MemoryVault(Mutex<HashMap<String, String>>);

impl TokenVault for MemoryVault {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        Ok(self.0.lock().unwrap_or_else(|p| p.into_inner()).get(key).cloned())
    }

    fn set(&self, key: &str, value: &str) -> Result<(), String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(key.into(), value.into());
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        Ok(())
    }
}

/// The vault entry of `server`'s OAuth tokens.
pub fn vault_key(server: &str) -> String {
    format!("mcp-oauth:{server}")
}

/// One server's entry, as JSON in the vault.
#[derive(Clone, Serialize, Deserialize)]
struct Entry {
    /// The server URL the tokens were issued for: a server whose URL changed starts over, so a
    /// token never reaches another resource.
    resource: String,
    /// A dynamically registered client's secret (rmcp keeps only the client id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    credentials: StoredCredentials,
}

/// rmcp's credential store on a vault entry.
#[derive(Clone)]
pub(crate) struct VaultStore {
    vault: Arc<dyn TokenVault>,
    key: String,
    resource: String,
    /// Written with the tokens (set before an authorization that registered a client).
    client_secret: Arc<Mutex<Option<String>>>,
    /// The entry as last read or written: rmcp loads the credentials before every request, and
    /// the keychain is not asked each time (nor, on macOS, the user).
    cache: Arc<Mutex<Option<Option<Entry>>>>,
}

fn store_error(e: String) -> AuthError {
    AuthError::CredentialStoreError(e)
}

impl VaultStore {
    pub(crate) fn new(vault: Arc<dyn TokenVault>, server: &str, resource: &str) -> Self {
        Self {
            vault,
            key: vault_key(server),
            resource: resource.to_string(),
            client_secret: Arc::default(),
            cache: Arc::default(),
        }
    }

    fn cached(&self) -> std::sync::MutexGuard<'_, Option<Option<Entry>>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn set_client_secret(&self, secret: Option<String>) {
        *self.client_secret.lock().unwrap_or_else(|p| p.into_inner()) = secret;
    }

    pub(crate) fn client_secret(&self) -> Option<String> {
        self.client_secret.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    async fn read(&self) -> Result<Option<Entry>, AuthError> {
        if let Some(entry) = self.cached().clone() {
            return Ok(entry);
        }
        let (vault, key) = (self.vault.clone(), self.key.clone());
        let text = tokio::task::spawn_blocking(move || vault.get(&key))
            .await
            .map_err(|e| store_error(e.to_string()))?
            .map_err(store_error)?;
        // An entry that does not parse (another version's, or damaged) is as good as none:
        // the user authorizes again.
        let entry = text.and_then(|t| serde_json::from_str::<Entry>(&t).ok());
        let entry = entry.filter(|e| e.resource == self.resource);
        *self.cached() = Some(entry.clone());
        Ok(entry)
    }

    /// Tokens are stored for this server and URL (whether or not they still work).
    pub(crate) async fn has_tokens(&self) -> bool {
        matches!(self.read().await, Ok(Some(e)) if e.credentials.token_response.is_some())
    }

    /// Reads the registered client's secret from the entry (for refreshing after a restart).
    pub(crate) async fn load_client_secret(&self) {
        if let Ok(Some(entry)) = self.read().await {
            self.set_client_secret(entry.client_secret);
        }
    }

    pub(crate) async fn forget(&self) -> Result<(), String> {
        *self.cached() = Some(None);
        let (vault, key) = (self.vault.clone(), self.key.clone());
        tokio::task::spawn_blocking(move || vault.delete(&key)).await.map_err(|e| e.to_string())?
    }
}

#[async_trait::async_trait]
impl CredentialStore for VaultStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read().await?.map(|e| e.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let entry = Entry {
            resource: self.resource.clone(),
            client_secret: self.client_secret(),
            credentials,
        };
        let text = serde_json::to_string(&entry).map_err(|e| store_error(e.to_string()))?;
        *self.cached() = Some(Some(entry));
        let (vault, key) = (self.vault.clone(), self.key.clone());
        tokio::task::spawn_blocking(move || vault.set(&key, &text))
            .await
            .map_err(|e| store_error(e.to_string()))?
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.forget().await.map_err(store_error)
    }

    /// A refresh token the authorization server rejected (revoked, expired) is dropped, so the
    /// server shows as needing authorization until the user authorizes again.
    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.forget().await.map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use rmcp::transport::auth::{CredentialStore, StoredCredentials};

    use super::{MemoryVault, TokenVault, VaultStore, vault_key};

    #[tokio::test]
    async fn tokens_issued_for_one_url_are_not_loaded_for_another() {
        let vault: Arc<dyn TokenVault> = Arc::new(MemoryVault::default());
        let first = VaultStore::new(vault.clone(), "tracker", "https://a.example/mcp");
        first.set_client_secret(Some("s3cret".into()));
        first.save(StoredCredentials::new("client-1".into(), None, vec![], Some(1))).await.unwrap();
        let saved = vault.get(&vault_key("tracker")).unwrap().unwrap();
        assert!(saved.contains("s3cret") && saved.contains("https://a.example/mcp"), "{saved}");
        assert_eq!(first.load().await.unwrap().unwrap().client_id, "client-1");
        // The same server name pointed at another URL starts over.
        let moved = VaultStore::new(vault.clone(), "tracker", "https://b.example/mcp");
        assert!(moved.load().await.unwrap().is_none());
        moved.clear().await.unwrap();
        assert!(vault.get(&vault_key("tracker")).unwrap().is_none());
    }
}
