//! Bringing the main window forward, optionally on a UI route (deep links, tray, notifications).

use std::sync::{Mutex, MutexGuard};

use tauri::{AppHandle, Manager as _, Webview};

use crate::startup::MAIN_WINDOW;

/// Routes asked for before the page finished loading are applied once it has.
#[derive(Default)]
pub struct Navigator {
    state: Mutex<PageState>,
}

#[derive(Default)]
struct PageState {
    loaded: bool,
    pending: Option<String>,
}

impl Navigator {
    /// Shows, unminimises and focuses the main window, then routes it to `hash` if given.
    /// `hash` comes from our own route builders (`skald_links`, `alerts`, `tray`), never raw input.
    pub fn open(&self, app: &AppHandle, hash: Option<&str>) {
        let Some(window) = app.get_webview_window(MAIN_WINDOW) else {
            tracing::warn!("no main window to open");
            return;
        };
        for result in [window.show(), window.unminimize(), window.set_focus()] {
            if let Err(error) = result {
                tracing::warn!(%error, "cannot bring the window forward");
            }
        }
        let Some(hash) = hash else { return };
        let mut state = self.lock();
        if state.loaded {
            drop(state);
            set_hash(window.as_ref(), hash);
        } else {
            state.pending = Some(hash.to_owned());
        }
    }

    /// The page started loading: routes wait until it is ready.
    pub fn page_started(&self) {
        self.lock().loaded = false;
    }

    /// The page is ready: applies the route asked for while it loaded.
    pub fn page_finished(&self, webview: &Webview) {
        let pending = {
            let mut state = self.lock();
            state.loaded = true;
            state.pending.take()
        };
        if let Some(hash) = pending {
            set_hash(webview, &hash);
        }
    }

    fn lock(&self) -> MutexGuard<'_, PageState> {
        // The state is two plain fields; a panic elsewhere cannot leave it inconsistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Changes the UI's hash route; the UI router follows `hashchange` like any link click.
fn set_hash(webview: &Webview, hash: &str) {
    // JSON string syntax is valid JavaScript, so the hash cannot break out of the literal.
    let script = match serde_json::to_string(hash) {
        Ok(literal) => format!("window.location.hash = {literal};"),
        Err(error) => {
            tracing::warn!(%error, "cannot encode a route");
            return;
        }
    };
    if let Err(error) = webview.eval(script) {
        tracing::warn!(%error, "cannot route the window");
    }
}
