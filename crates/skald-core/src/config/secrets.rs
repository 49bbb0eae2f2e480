//! Where API keys come from: the OS keychain in the product, memory in tests. Never the database.

use std::collections::HashMap;
use std::sync::Mutex;

/// Service name of Skald's keychain entries; the account is the client name.
pub const KEYCHAIN_SERVICE: &str = "skald";

#[derive(Debug, thiserror::Error)]
#[error("keychain: {0}")]
pub struct SecretError(String);

impl SecretError {
    /// A keychain failure that says `why` (tests' keychains that fail).
    #[cfg(test)]
    pub(crate) fn new(why: &str) -> Self {
        Self(why.to_string())
    }
}

/// A store of API keys by client name.
pub trait SecretStore: Send + Sync + std::fmt::Debug {
    fn get(&self, client: &str) -> Result<Option<String>, SecretError>;
    fn set(&self, client: &str, key: &str) -> Result<(), SecretError>;
    fn delete(&self, client: &str) -> Result<(), SecretError>;
}

/// The OS keychain (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows).
#[derive(Debug, Default)]
pub struct KeyringSecrets;

impl SecretStore for KeyringSecrets {
    fn get(&self, client: &str) -> Result<Option<String>, SecretError> {
        let entry = keyring::Entry::new(KEYCHAIN_SERVICE, client)
            .map_err(|e| SecretError(e.to_string()))?;
        match entry.get_password() {
            Ok(k) => Ok(Some(k)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(SecretError(e.to_string())),
        }
    }

    fn set(&self, client: &str, key: &str) -> Result<(), SecretError> {
        keyring::Entry::new(KEYCHAIN_SERVICE, client)
            .and_then(|e| e.set_password(key))
            .map_err(|e| SecretError(e.to_string()))
    }

    fn delete(&self, client: &str) -> Result<(), SecretError> {
        let entry = keyring::Entry::new(KEYCHAIN_SERVICE, client)
            .map_err(|e| SecretError(e.to_string()))?;
        match entry.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(SecretError(e.to_string())),
        }
    }
}

/// In-memory keys for tests and headless runs without a keychain.
#[derive(Debug, Default)]
pub struct MemorySecrets(Mutex<HashMap<String, String>>);

impl SecretStore for MemorySecrets {
    fn get(&self, client: &str) -> Result<Option<String>, SecretError> {
        Ok(self.0.lock().unwrap_or_else(|p| p.into_inner()).get(client).cloned())
    }

    fn set(&self, client: &str, key: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(client.into(), key.into());
        Ok(())
    }

    fn delete(&self, client: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(client);
        Ok(())
    }
}
