//! Background life: closing the window hides it, and Quit stops running turns before exiting.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use skald_core::Engine;
use tauri::{AppHandle, Manager as _};

/// How long Quit waits for stopped turns to record `cancelled`.
pub const QUIT_GRACE: Duration = Duration::from_secs(5);
const QUIT_POLL: Duration = Duration::from_millis(100);

/// What the shell knows about turns, from the engine's `turn_running` events.
#[derive(Default)]
pub struct Turns {
    running: Mutex<BTreeSet<i64>>,
    quitting: AtomicBool,
}

impl Turns {
    pub fn set_running(&self, session_id: i64, running: bool) {
        let mut sessions = self.lock();
        if running {
            sessions.insert(session_id);
        } else {
            sessions.remove(&session_id);
        }
    }

    pub fn running(&self) -> Vec<i64> {
        self.lock().iter().copied().collect()
    }

    /// True once Quit was chosen: failures from here on are our own stops, not news.
    pub fn quitting(&self) -> bool {
        self.quitting.load(Ordering::SeqCst)
    }

    /// Marks the app as quitting; false if it already was.
    fn begin_quit(&self) -> bool {
        !self.quitting.swap(true, Ordering::SeqCst)
    }

    fn lock(&self) -> MutexGuard<'_, BTreeSet<i64>> {
        // A set of ids stays valid whatever panicked while it was held.
        self.running.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Quits gracefully: stops every running turn, waits up to `QUIT_GRACE` for them to end (the
/// engine records them `cancelled`), then exits. Choosing Quit twice does not quit twice.
pub fn quit(app: &AppHandle) {
    if !app.state::<Turns>().begin_quit() {
        return;
    }
    let Some(engine) = app.try_state::<Engine>().map(|engine| engine.inner().clone()) else {
        app.exit(0);
        return;
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let running = app.state::<Turns>().running();
        let left = stop_turns(&engine, &running, QUIT_GRACE).await;
        if left.is_empty() {
            tracing::info!(stopped = running.len(), "quitting");
        } else {
            tracing::warn!(?left, "quitting while turns are still stopping");
        }
        app.exit(0);
    });
}

/// Asks the engine to stop `sessions`, then waits until none runs or `grace` passed; returns
/// the sessions still running.
pub async fn stop_turns(engine: &Engine, sessions: &[i64], grace: Duration) -> Vec<i64> {
    for &session in sessions {
        if let Err(error) = engine.stop(session).await {
            tracing::warn!(session, "cannot stop the turn: {error}");
        }
    }
    let deadline = tokio::time::Instant::now() + grace;
    loop {
        let mut left = Vec::new();
        for &session in sessions {
            if engine.is_running(session).await.unwrap_or(false) {
                left.push(session);
            }
        }
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(QUIT_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Arc;

    use skald_core::EngineOptions;
    use skald_core::config::{EnvOverrides, MemorySecrets};
    use skald_core::engine::ChatOptions;
    use skald_core::turn::TurnOutcome;
    use skald_testkit::{FakeLlm, Reply};

    use super::*;

    #[tokio::test]
    async fn quitting_stops_a_running_turn_and_it_ends_cancelled() {
        let fake = FakeLlm::start().await.unwrap();
        // The model never answers: only a stop ends this turn.
        fake.push(Reply::Stall { ms: 60_000, then_hang: true });
        let dir = tempfile::tempdir().unwrap();
        let env = EnvOverrides {
            base_url: Some(fake.base_url()),
            model: Some("fake-model".into()),
            api_key: None,
        };
        let engine = Engine::open(EngineOptions {
            data_dir: Some(dir.path().join("data")),
            env: Some(env),
            secrets: Some(Arc::new(MemorySecrets::default())),
            ..Default::default()
        })
        .await
        .unwrap();
        let receipt = engine.send_message("web", "hello", ChatOptions::default()).await.unwrap();
        let session = receipt.session_id;
        // The model request has arrived: the turn surely runs (and the stall is consumed).
        fake.wait_in_flight(1).await;
        assert!(engine.is_running(session).await.unwrap(), "the turn started");

        let left = stop_turns(&engine, &[session], QUIT_GRACE).await;

        assert!(left.is_empty(), "still running after the grace period: {left:?}");
        let outcome = receipt.turn.unwrap().await.unwrap();
        assert!(matches!(outcome, TurnOutcome::Cancelled), "{outcome:?}");
        assert!(!engine.is_running(session).await.unwrap());
    }

    #[test]
    fn the_shell_follows_which_sessions_run() {
        let turns = Turns::default();
        turns.set_running(3, true);
        turns.set_running(1, true);
        turns.set_running(3, false);
        turns.set_running(9, false);
        assert_eq!(turns.running(), vec![1]);
    }

    #[test]
    fn quit_starts_once() {
        let turns = Turns::default();
        assert!(!turns.quitting());
        assert!(turns.begin_quit());
        assert!(!turns.begin_quit());
        assert!(turns.quitting());
    }
}
