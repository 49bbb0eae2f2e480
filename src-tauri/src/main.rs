//! The `skald-desktop` binary: opens the engine and shows it in a Tauri window.

// Release builds on Windows must not open a console next to the window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod error;
mod events;
mod startup;
mod startup_error_page;

use anyhow::Context as _;
use tauri::{Manager as _, WindowEvent, webview::PageLoadEvent};
use tracing_subscriber::EnvFilter;

use crate::events::Subscriptions;

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();

    tauri::Builder::default()
        .manage(Subscriptions::default())
        .invoke_handler(tauri::generate_handler![
            commands::list_sessions,
            commands::session_detail,
            commands::subscribe_events,
        ])
        // A channel belongs to the page that created it: a reload or navigation orphans it.
        .on_page_load(|webview, payload| {
            if payload.event() == PageLoadEvent::Started {
                let closed = webview.state::<Subscriptions>().close_all(webview.label());
                if closed > 0 {
                    let url = payload.url().as_str();
                    tracing::info!(closed, url, "page changed; its event streams stopped");
                }
            }
        })
        .on_window_event(|window, event| {
            if matches!(event, WindowEvent::Destroyed) {
                window.state::<Subscriptions>().close_all(window.label());
            }
        })
        .setup(|app| {
            // Tauri panics on a setup error; without a window there is nothing to show, so say
            // why on stderr and leave with a failure code instead.
            if let Err(error) = startup::open_main_window(app) {
                tracing::error!("Skald could not create its window: {error}");
                app.handle().exit(1);
            }
            Ok(())
        })
        .run(tauri::generate_context!())
        .context("the Skald desktop app stopped with an error")
}
