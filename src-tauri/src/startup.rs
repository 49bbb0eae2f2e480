//! Startup: opens the engine, then shows the main window with the UI or with why it failed.

use skald_core::{Engine, EngineOptions, data_dir};
use skald_protocol::ApiError;
use tauri::{App, Manager as _, WebviewUrl, WebviewWindowBuilder};

use crate::error::DesktopError;
use crate::startup_error_page::{self, StartupFailure};

/// The window label used by `tauri.conf.json` and by the capability that grants our commands.
pub const MAIN_WINDOW: &str = "main";

/// Opens the engine and creates the main window (declared with `"create": false` so that it is
/// never shown before we know whether the engine is there to answer it).
pub fn open_main_window(app: &mut App) -> Result<(), DesktopError> {
    // Opening is a few milliseconds of SQLite setup; blocking here keeps every command's
    // `State<Engine>` valid from the first call on. The app lives long, so it follows edits
    // of config.yml.
    let options = EngineOptions { watch_config: true, ..EngineOptions::default() };
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
    WebviewWindowBuilder::from_config(app.handle(), &window)?.build()?;
    Ok(())
}
