//! Background life: closing the window hides it, and Quit lets the engine stop its turns before
//! exiting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use skald_core::Engine;
use tauri::{AppHandle, Manager as _};

/// How long Quit gives stopped turns to record `cancelled` (`skald serve` gives the same on
/// SIGTERM).
pub const QUIT_GRACE: Duration = Duration::from_secs(5);

/// Set once Quit was chosen.
#[derive(Default)]
pub struct Quitting(AtomicBool);

impl Quitting {
    /// True once Quit was chosen: failures from here on are our own stops, not news.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Marks the app as quitting; false if it already was.
    fn begin(&self) -> bool {
        !self.0.swap(true, Ordering::SeqCst)
    }
}

/// Quits gracefully: the engine stops every running turn and waits up to `QUIT_GRACE` for them
/// to record `cancelled`, then the app exits. Choosing Quit twice does not quit twice.
pub fn quit(app: &AppHandle) {
    if !app.state::<Quitting>().begin() {
        return;
    }
    let Some(engine) = app.try_state::<Engine>().map(|engine| engine.inner().clone()) else {
        app.exit(0);
        return;
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let report = engine.shutdown(QUIT_GRACE).await;
        if report.aborted.is_empty() {
            tracing::info!("quitting");
        } else {
            tracing::warn!(aborted = ?report.aborted, "quitting; turns that did not stop in time were dropped");
        }
        app.exit(0);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quit_starts_once() {
        let quitting = Quitting::default();
        assert!(!quitting.get());
        assert!(quitting.begin());
        assert!(!quitting.begin());
        assert!(quitting.get());
    }
}
