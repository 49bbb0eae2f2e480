//! The engine's background services: named loops (the worker that claims queued work, the
//! reclaim of work dead engines left; next TIC ticks, cron runs, MCP push intake), each stopped
//! by its own token under the engine's, each with a health record `Engine::services` reports.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use super::Engine;

/// How one service is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceHealth {
    pub name: &'static str,
    /// Its loop runs (false once shutdown stopped it).
    pub running: bool,
    /// Passes it has made.
    pub passes: u64,
    /// What its last failed pass said (cleared by a pass that succeeds).
    pub last_error: Option<String>,
}

/// Every service this engine started.
#[derive(Debug, Default)]
pub(super) struct Services {
    health: Mutex<BTreeMap<&'static str, ServiceHealth>>,
}

impl Services {
    fn update(&self, name: &'static str, f: impl FnOnce(&mut ServiceHealth)) {
        let mut map = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let entry = map.entry(name).or_insert_with(|| ServiceHealth {
            name,
            running: false,
            passes: 0,
            last_error: None,
        });
        f(entry);
    }

    pub(super) fn started(&self, name: &'static str) {
        self.update(name, |h| h.running = true);
    }

    pub(super) fn passed(&self, name: &'static str, outcome: Result<(), String>) {
        self.update(name, |h| {
            h.passes += 1;
            match outcome {
                Ok(()) => h.last_error = None,
                Err(e) => h.last_error = Some(e),
            }
        });
    }

    pub(super) fn stopped(&self, name: &'static str) {
        self.update(name, |h| h.running = false);
    }
}

impl Engine {
    /// The background services this engine started and how each is doing, by name.
    pub fn services(&self) -> Vec<ServiceHealth> {
        let map = self.inner.services.health.lock().unwrap_or_else(|p| p.into_inner());
        map.values().cloned().collect()
    }

    /// Runs `step` every `period` until shutdown, as one of the engine's tasks, recording its
    /// health under `name`.
    pub(super) fn spawn_service<F, Fut>(&self, name: &'static str, period: Duration, step: F)
    where
        F: Fn(Engine) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), String>> + Send,
    {
        // Weak: the loop ends with the engine, it does not keep it alive.
        let weak = std::sync::Arc::downgrade(&self.inner);
        let stop = self.inner.lifecycle.stop_token().child_token();
        self.inner.services.started(name);
        self.inner.lifecycle.spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(period) => {}
                }
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                let outcome = step(engine.clone()).await;
                if let Err(e) = &outcome {
                    tracing::warn!(service = name, "background service pass failed: {e}");
                }
                engine.inner.services.passed(name, outcome);
            }
            if let Some(inner) = weak.upgrade() {
                inner.services.stopped(name);
            }
        });
    }
}
