//! Startup: opens the engine, then shows the main window with the UI or with why it failed.

use skald_core::{Engine, EngineOptions, data_dir};
use skald_protocol::ApiError;
use tauri::webview::NewWindowResponse;
use tauri::{App, Manager as _, WebviewUrl, WebviewWindowBuilder};

use tauri_plugin_notification::NotificationExt as _;

use crate::error::DesktopError;
use crate::navigation::Navigator;
use crate::startup_error_page::{self, StartupFailure};
use crate::{external_links, link_handler, routing, tray, watcher};

/// The window label used by `tauri.conf.json` and by the capability that grants our commands.
pub const MAIN_WINDOW: &str = "main";

/// Opens the engine and creates the main window (declared with `"create": false` so that it is
/// never shown before we know whether the engine is there to answer it).
pub fn open_main_window(app: &mut App) -> Result<(), DesktopError> {
    // Opening is a few milliseconds of SQLite setup; blocking here keeps every command's
    // `State<Engine>` valid from the first call on. The app lives long: it follows edits of
    // config.yml (and `start_background` below continues turns by itself).
    let options = EngineOptions { watch_config: true, ..EngineOptions::default() };
    // Opened inside the runtime: the engine runs its tasks there.
    let opened = tauri::async_runtime::block_on(Engine::open(options));
    let error_page = match opened {
        Ok(engine) => {
            app.manage(engine);
            None
        }
        Err(error) => {
            let error = ApiError::from(error);
            tracing::error!(code = ?error.code, "the engine could not open: {}", error.message);
            let failure = StartupFailure {
                message: error.message,
                data_dir: data_dir::resolve(None).map(|dir| dir.display().to_string()),
            };
            Some(startup_error_page::data_url(&failure)?)
        }
    };

    let mut window = app
        .config()
        .app
        .windows
        .iter()
        .find(|window| window.label == MAIN_WINDOW)
        .cloned()
        .ok_or(DesktopError::MissingWindowConfig(MAIN_WINDOW))?;
    if let Some(page) = error_page {
        window.url = WebviewUrl::External(page);
    }
    let dev_url = app.config().build.dev_url.clone();
    WebviewWindowBuilder::from_config(app.handle(), &window)?
        .on_navigation(move |url| external_links::allow_navigation(url, dev_url.as_ref()))
        .on_new_window(|url, _features| {
            external_links::open_new_window(&url);
            NewWindowResponse::Deny
        })
        .build()?;
    Ok(())
}

/// Everything that lives beside the window: the engine's background, the tray, the engine
/// watcher (tray, notifications), notification clicks and `skald://` links. Nothing here is fatal: the window
/// works without a tray or a link handler.
pub fn start_background(app: &mut App) {
    let handle = app.handle().clone();
    if let Err(error) = tray::create(&handle) {
        tracing::warn!(%error, "no tray icon");
    }
    let clicks = handle.clone();
    let on_click = handle.notification().on_action(move |performed| {
        let route =
            performed.notification().and_then(|shown| watcher::clicked_route(shown.extra()));
        clicks.state::<Navigator>().open(&clicks, Some(route.as_deref().unwrap_or("#inbox")));
    });
    if let Err(error) = on_click {
        tracing::warn!(%error, "notification clicks will not open the app");
    }
    // `xdg-mime` and `update-desktop-database` are slow shell scripts: keep them off the path
    // to the first paint.
    let registering = handle.clone();
    tauri::async_runtime::spawn_blocking(move || link_handler::register(&registering));
    if let Some(engine) = app.try_state::<Engine>().map(|engine| engine.inner().clone()) {
        // The engine's own background: turns a dead process left, parked turns once decided.
        engine.start_background();
        tauri::async_runtime::spawn(watcher::run(handle.clone(), engine));
    }
    // macOS hands links to the running app as "open URL" events instead of a second launch.
    #[cfg(target_os = "macos")]
    {
        use tauri_plugin_deep_link::DeepLinkExt as _;
        let links = handle.clone();
        handle.deep_link().on_open_url(move |event| {
            let urls: Vec<String> = event.urls().iter().map(|url| url.to_string()).collect();
            let args = std::iter::once("").chain(urls.iter().map(String::as_str));
            routing::open_links(&links, args);
        });
    }
    // The links this process was started with; later ones come through single-instance.
    let args: Vec<String> = std::env::args().collect();
    routing::open_links(&handle, args.iter().map(String::as_str));
}
