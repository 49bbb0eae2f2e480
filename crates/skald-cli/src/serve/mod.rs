//! `skald serve`: the `Engine` over HTTP + WebSocket on loopback, plus the built web UI.
//!
//! Layout: `routes` is the one place routes are declared (`POST /api/<op>` for every operation of
//! the `skald_api` table, `/api/ws`, the UI); `auth` guards `/api/*` with the bearer token; `ws`
//! streams engine events; `static_ui` serves the web UI (`SKALD_UI_DIR`, else the build
//! `embedded_ui` holds, else the checkout's `ui/dist`); `errors` maps `ApiError` to HTTP and
//! `json_errors` gives axum's own errors under `/api` the same JSON shape; `body_limit` caps a
//! request body. No engine logic lives here.

mod auth;
mod body_limit;
mod embedded_ui;
mod errors;
mod json_errors;
mod routes;
mod static_ui;
pub mod token;
mod ws;

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::serve::ListenerExt;
use skald_core::Engine;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use static_ui::UiDir;

/// How long open HTTP connections get to finish after a shutdown signal before we exit anyway.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything needed to build the router.
#[derive(Debug)]
pub struct ServeOptions {
    pub engine: Engine,
    /// The bearer token every `/api/*` request must present.
    pub token: String,
    /// The port actually bound; WebSocket `Origin` checks accept only this port on loopback.
    pub port: u16,
    pub ui: UiDir,
    /// Cancelled on shutdown; open WebSockets close with "going away" when it fires.
    pub shutdown: CancellationToken,
}

/// Shared by every handler. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct ServeState {
    pub(crate) engine: Engine,
    token: Arc<str>,
    allowed_origins: Arc<[String]>,
    ui: Arc<UiDir>,
    shutdown: CancellationToken,
}

impl ServeState {
    fn new(opts: ServeOptions) -> Self {
        let allowed_origins =
            [format!("http://127.0.0.1:{}", opts.port), format!("http://localhost:{}", opts.port)];
        Self {
            engine: opts.engine,
            token: opts.token.into(),
            allowed_origins: Arc::new(allowed_origins),
            ui: Arc::new(opts.ui),
            shutdown: opts.shutdown,
        }
    }
}

/// The complete application: `/api/*` (token required), `/api/ws`, and the UI for everything else.
pub fn router(opts: ServeOptions) -> Router {
    routes::app(ServeState::new(opts))
}

/// Serves `app` on `listener` until `shutdown` is cancelled, then drains for a bounded time.
///
/// Every accepted socket gets TCP_NODELAY: responses are written whole, so Nagle would only add
/// latency to small JSON replies and WebSocket frames.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let listener = listener.tap_io(|tcp| {
        // Failing to set the option only costs latency; the connection itself is fine.
        let _ = tcp.set_nodelay(true);
    });
    let signal = shutdown.clone();
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(async move { signal.cancelled().await })
        .into_future();
    tokio::select! {
        result = server => result,
        () = async {
            shutdown.cancelled().await;
            tokio::time::sleep(DRAIN_TIMEOUT).await;
        } => Ok(()),
    }
}
