//! `skald serve`: opens the engine, prepares the token, binds loopback and serves until a signal.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use skald_core::{Engine, EngineOptions};
use skald_protocol::{ApiError, ErrorCode};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::exit;
use crate::output::Output;
use crate::serve::{self, ServeOptions, UiDir, token};

/// Environment variable naming a UI build folder to serve instead of the embedded or checkout UI
/// (for UI development: a rebuild shows on reload, no Rust rebuild).
const UI_DIR_ENV: &str = "SKALD_UI_DIR";

/// How long running turns get to record that they were stopped, on SIGTERM or Ctrl-C (the
/// desktop's Quit gives the same).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

pub async fn run(data_dir: Option<PathBuf>, port: u16, out: &Output) -> Result<u8, ApiError> {
    let engine =
        Engine::open(EngineOptions { data_dir, watch_config: true, ..Default::default() }).await?;
    // Continues turns a dead process left, and parked turns once decided (here or by `skald
    // approve`).
    engine.start_background();
    let token = token::load_or_create(engine.data_dir()).map_err(|e| {
        ApiError::new(
            ErrorCode::Storage,
            format!("cannot prepare {}: {e}", token::token_path(engine.data_dir()).display()),
        )
    })?;
    // Loopback only: the token guards the API, and nothing else on the network should even see it.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await.map_err(|e| {
        ApiError::new(ErrorCode::Internal, format!("cannot listen on 127.0.0.1:{port}: {e}"))
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("no local address: {e}")))?
        .port();
    let ui = UiDir::locate(
        std::env::var_os(UI_DIR_ENV).map(PathBuf::from),
        std::env::current_exe().ok(),
    );
    if let Some(note) = ui.not_built_note() {
        eprintln!("skald: note: {note}");
    }
    let shutdown = CancellationToken::new();
    let app = serve::router(ServeOptions {
        engine: engine.clone(),
        token: token.clone(),
        port,
        ui,
        shutdown: shutdown.clone(),
    });
    // Listen for signals before announcing the address: a supervisor (or a test) that stops us
    // right after reading the line must get a clean shutdown, not the default "killed by signal".
    let signals = ShutdownSignals::listen();
    // Scripts and tests wait for exactly this line; stdout is line-buffered, so it is flushed.
    out.line(&format!("listening on http://127.0.0.1:{port}/?token={token}"));

    let server = serve::serve(listener, app, shutdown.clone());
    tokio::pin!(server);
    let served = tokio::select! {
        served = &mut server => served,
        () = signals.wait() => {
            // Turns first, while clients still receive their `turn_ended` events; then the
            // server drains and stops.
            let report = engine.shutdown(SHUTDOWN_GRACE).await;
            if !report.aborted.is_empty() {
                eprintln!("skald: turns that did not stop in time: {:?}", report.aborted);
            }
            shutdown.cancel();
            server.await
        }
    };
    served.map_err(|e| ApiError::new(ErrorCode::Internal, format!("server failed: {e}")))?;
    Ok(exit::OK)
}

/// SIGINT (Ctrl-C) or SIGTERM (service managers, `kill`), registered when created.
struct ShutdownSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl ShutdownSignals {
    fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    async fn wait(self) {
        #[cfg(unix)]
        if let (Some(mut term), Some(mut int)) = (self.term, self.int) {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
