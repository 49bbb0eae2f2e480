//! Context windows learned from overflow answers, per client alias and model id: stored in
//! `learned_context_windows` and mirrored here, so resolving a chain stays a read of memory. A
//! learned window caps the configured (or known) one: the server's refusal is the truth.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use skald_llm::ModelEndpoint;
use skald_store::{Store, StoreError};

/// Smallest window a guess may teach: below it no request with a system prompt fits anyway.
const MIN_GUESS: u64 = 512;

/// The engine's learned windows (cheap to clone, shared with every turn).
#[derive(Debug, Clone, Default)]
pub struct LearnedWindows {
    by_model: Arc<Mutex<HashMap<(String, String), u64>>>,
}

impl LearnedWindows {
    /// What the database holds (an unreadable table teaches nothing: configured windows stand).
    pub async fn load(store: &Store) -> Self {
        let learned = Self::default();
        match store.learned_context_windows().await {
            Ok(rows) => {
                let mut map = learned.lock();
                for r in rows {
                    let window = u64::try_from(r.window_tokens).unwrap_or(0);
                    if window > 0 {
                        map.insert((r.client, r.model), window);
                    }
                }
            }
            Err(e) => tracing::warn!("cannot read the learned context windows: {e}"),
        }
        learned
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), u64>> {
        self.by_model.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The window learned for `client`'s `model`.
    pub fn get(&self, client: &str, model: &str) -> Option<u64> {
        self.lock().get(&(client.to_string(), model.to_string())).copied()
    }

    /// The endpoint's window capped by what was learned for it.
    pub fn apply(&self, endpoint: &mut ModelEndpoint) {
        if let Some(learned) = self.get(&endpoint.name, &endpoint.model) {
            endpoint.context_window =
                Some(endpoint.context_window.map_or(learned, |w| w.min(learned)));
        }
    }

    /// Learns `endpoint`'s window from an overflow: the window the server named, or — when it
    /// named none — three quarters of the refused request's size (`requested`, else
    /// `estimated`), never below `MIN_GUESS`. Stored first, then mirrored; returns the window
    /// now in force and whether the server named it.
    pub async fn learn(
        &self,
        store: &Store,
        endpoint: &ModelEndpoint,
        named: Option<u64>,
        requested: Option<u64>,
        estimated: u64,
    ) -> Result<(u64, bool), StoreError> {
        let (window, exact) = match named {
            Some(w) => (w, true),
            None => (requested.unwrap_or(estimated).saturating_mul(3) / 4, false),
        };
        let window = if exact { window } else { window.max(MIN_GUESS) };
        let stored = store
            .learn_context_window(
                &endpoint.name,
                &endpoint.model,
                i64::try_from(window).unwrap_or(i64::MAX),
                exact,
            )
            .await?;
        let stored = u64::try_from(stored).unwrap_or(window);
        self.lock().insert((endpoint.name.clone(), endpoint.model.clone()), stored);
        Ok((stored, exact))
    }
}
