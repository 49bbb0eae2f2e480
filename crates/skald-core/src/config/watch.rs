//! Reloads `config.yml` when it changes on disk, keeping the last good configuration on errors.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::{CONFIG_FILE_NAME, Config, ConfigError, EnvOverrides, load};

/// Keeps the OS watcher alive; dropping it stops watching.
pub struct ConfigWatcher {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for ConfigWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConfigWatcher")
    }
}

impl ConfigWatcher {
    /// Watches `dir` and, on any change of `config.yml`, reloads into `current` and reports the
    /// outcome through `on_reload`. Bursts of file events (editors write several) are coalesced.
    pub fn start(
        dir: &Path,
        env: EnvOverrides,
        current: Arc<RwLock<Arc<Config>>>,
        on_reload: impl Fn(Result<(), ConfigError>) + Send + 'static,
    ) -> Result<Self, notify::Error> {
        let (tx, mut rx) = mpsc::unbounded_channel::<()>();
        let file: PathBuf = dir.join(CONFIG_FILE_NAME);
        let watched = file.clone();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                if let Ok(ev) = res
                    && ev.paths.iter().any(|p| p == &watched)
                {
                    let _ = tx.send(());
                }
            })?;
        watcher.watch(dir, RecursiveMode::NonRecursive)?;
        let dir = dir.to_path_buf();
        tokio::spawn(async move {
            while rx.recv().await.is_some() {
                // Let the writer finish, then drain the burst.
                tokio::time::sleep(Duration::from_millis(100)).await;
                while rx.try_recv().is_ok() {}
                let outcome = load(&dir, &env).map(|cfg| {
                    let mut guard = current.write().unwrap_or_else(|p| p.into_inner());
                    *guard = Arc::new(cfg);
                });
                if let Err(e) = &outcome {
                    tracing::warn!(file = %file.display(), "config reload failed: {e}");
                }
                on_reload(outcome);
            }
        });
        Ok(Self { _watcher: watcher })
    }
}
