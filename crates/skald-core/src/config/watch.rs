//! Reloads `config.yml` when it changes on disk, keeping the last good configuration on errors.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::{CONFIG_FILE_NAME, Config, ConfigError, EnvOverrides, load};

/// Longest a reload may take. Reading a regular file never blocks for long, but a file system
/// that hangs (a dead network mount) must not hold the watcher, nor a runtime thread, forever.
const RELOAD_TIMEOUT: Duration = Duration::from_secs(10);

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
                let outcome = reload(&dir, &env, &file).await.map(|cfg| {
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

/// Loads the file on the blocking pool, bounded by [`RELOAD_TIMEOUT`]; on any failure the
/// caller keeps the configuration it has.
async fn reload(dir: &Path, env: &EnvOverrides, file: &Path) -> Result<Config, ConfigError> {
    let (dir, env) = (dir.to_path_buf(), env.clone());
    let job = tokio::task::spawn_blocking(move || load(&dir, &env));
    let failed = |message: String| ConfigError::Io { path: file.to_path_buf(), message };
    match tokio::time::timeout(RELOAD_TIMEOUT, job).await {
        Ok(Ok(loaded)) => loaded,
        Ok(Err(e)) => Err(failed(format!("the reload failed: {e}"))),
        Err(_) => Err(failed(format!(
            "reading it took longer than {} s; the configuration in force stays",
            RELOAD_TIMEOUT.as_secs()
        ))),
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A FIFO put in place of `config.yml` while Skald runs: the reload is refused at once with
    /// an error naming the file, and the configuration in force stays. (The scenario runs on a
    /// thread of its own: a watcher blocked on the FIFO fails the test instead of hanging it.)
    #[test]
    fn a_fifo_in_place_of_the_file_keeps_the_configuration_in_force() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE_NAME);
        std::fs::write(&file, "llm:\n  max_tool_rounds: 7\n").unwrap();
        let env = EnvOverrides::default();
        let current = Arc::new(RwLock::new(Arc::new(load(dir.path(), &env).unwrap())));
        let (tx, rx) = std::sync::mpsc::channel();
        let (path, watched) = (dir.path().to_path_buf(), current.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let _watcher = ConfigWatcher::start(&path, env, watched, move |outcome| {
                    if let Err(e) = outcome {
                        let _ = tx.send(e);
                    }
                })
                .unwrap();
                // Swapped in one step, as an editor's rename would.
                let fifo = path.join("config.fifo");
                let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
                assert!(made.success());
                std::fs::rename(&fifo, path.join(CONFIG_FILE_NAME)).unwrap();
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        });
        let reported = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("no reload reported: the watcher blocked on the FIFO");
        assert_eq!(
            reported.to_string(),
            format!(
                "cannot read {}: it is a FIFO (named pipe), not a regular file; Skald reads its \
                 configuration from a regular file only (put one back, or remove it for the \
                 defaults)",
                file.display()
            )
        );
        assert_eq!(current.read().unwrap().llm.max_tool_rounds, 7);
    }
}
