//! The `skald-desktop` binary: opens the engine and shows it in a Tauri window, with a tray,
//! native notifications, `skald://` links and a life in the background.

// Release builds on Windows must not open a console next to the window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod alerts;
mod commands;
mod desktop_settings;
mod error;
mod events;
mod external_links;
mod lifecycle;
mod link_handler;
mod navigation;
mod routing;
mod startup;
mod startup_error_page;
mod tray;
mod watcher;
mod webview_env;

use anyhow::Context as _;
use tauri::{Manager as _, WindowEvent, webview::PageLoadEvent};
use tauri_plugin_window_state::StateFlags;
use tracing_subscriber::EnvFilter;

use crate::events::Subscriptions;
use crate::lifecycle::Quitting;
use crate::navigation::Navigator;
use crate::startup::MAIN_WINDOW;

fn main() -> anyhow::Result<()> {
    // Before anything else: it changes the environment, which is only sound single-threaded.
    webview_env::tune_for_this_machine();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    // Tauri's own runtime would have Tokio's default thread stacks; the engine needs more.
    let runtime = skald_core::async_runtime::build()?;
    tauri::async_runtime::set(runtime.handle().clone());

    let ran = tauri::Builder::default()
        // First, so that a second launch hands its arguments over before anything else starts.
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            routing::second_instance(app, &args);
        }))
        .plugin(tauri_plugin_deep_link::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(
            tauri_plugin_window_state::Builder::default()
                // Never "visible": a window hidden to the tray must come back on the next start.
                .with_state_flags(StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED)
                .build(),
        )
        .manage(Subscriptions::default())
        .manage(Navigator::default())
        .manage(Quitting::default())
        // Every engine operation goes through `api`; events through `subscribe_events`.
        .invoke_handler(tauri::generate_handler![commands::api, commands::subscribe_events])
        // A channel belongs to the page that created it: a reload or navigation orphans it.
        .on_page_load(|webview, payload| match payload.event() {
            PageLoadEvent::Started => {
                if webview.label() == MAIN_WINDOW {
                    webview.state::<Navigator>().page_started();
                }
                let closed = webview.state::<Subscriptions>().close_all(webview.label());
                if closed > 0 {
                    let url = payload.url().as_str();
                    tracing::info!(closed, url, "page changed; its event streams stopped");
                }
            }
            PageLoadEvent::Finished => {
                if webview.label() == MAIN_WINDOW {
                    webview.state::<Navigator>().page_finished(webview);
                }
            }
        })
        .on_window_event(|window, event| match event {
            // Closing the window keeps Skald running in the tray: turns go on, approvals notify.
            WindowEvent::CloseRequested { api, .. } if window.label() == MAIN_WINDOW => {
                api.prevent_close();
                if let Err(error) = window.hide() {
                    tracing::warn!(%error, "cannot hide the window");
                }
            }
            WindowEvent::Destroyed => {
                window.state::<Subscriptions>().close_all(window.label());
            }
            _ => {}
        })
        .setup(|app| {
            // Tauri panics on a setup error; without a window there is nothing to show, so say
            // why on stderr and leave with a failure code instead.
            if let Err(error) = startup::open_main_window(app) {
                tracing::error!("Skald could not create its window: {error}");
                app.handle().exit(1);
                return Ok(());
            }
            startup::start_background(app);
            Ok(())
        })
        .run(tauri::generate_context!())
        .context("the Skald desktop app stopped with an error");
    // A blocking task stuck in a read must not hold the exit.
    runtime.shutdown_background();
    ran
}
