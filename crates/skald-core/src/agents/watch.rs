//! Announces changes under the data dir's `agents/` (a hand edit, another window, a deleted
//! folder) so open agent lists refresh; the registry itself re-reads on its next use.

use std::path::Path;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

/// How long a burst of file events (an editor's save, a copied folder) is gathered into one.
const SETTLE: Duration = Duration::from_millis(150);

/// Keeps the OS watcher alive; dropping it stops watching.
pub struct AgentsWatcher {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for AgentsWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentsWatcher")
    }
}

impl AgentsWatcher {
    /// Watches `agents_dir` (created when missing, so a first agent added by hand is seen) and
    /// calls `on_change` once per burst of changes under it.
    pub fn start(
        agents_dir: &Path,
        on_change: impl Fn() + Send + 'static,
    ) -> Result<Self, notify::Error> {
        std::fs::create_dir_all(agents_dir).map_err(notify::Error::io)?;
        let (tx, mut rx) = mpsc::unbounded_channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                // Reads (access events) change nothing a list shows.
                if res.is_ok_and(|ev| !ev.kind.is_access()) {
                    let _ = tx.send(());
                }
            })?;
        watcher.watch(agents_dir, RecursiveMode::Recursive)?;
        tokio::spawn(async move {
            while rx.recv().await.is_some() {
                tokio::time::sleep(SETTLE).await;
                while rx.try_recv().is_ok() {}
                on_change();
            }
        });
        Ok(Self { _watcher: watcher })
    }
}
