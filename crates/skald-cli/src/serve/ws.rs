//! `GET /api/ws`: checks the token and the `Origin`, then streams the events of every process on
//! the data dir as JSON text (the engine's feed), from `?since=SEQ` when the client resumes.

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use skald_core::events::EventFeed;
use skald_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;

use super::ServeState;
use super::auth;
use super::errors::HttpError;

/// The protocol's `?source=` is accepted and ignored for now (unknown keys are skipped): every
/// event is forwarded, because the UI's lists react to changes from any source. `since`: the
/// last event sequence the client saw; the events after it are replayed first (or `resync` is
/// sent when they are no longer kept).
#[derive(Debug, Deserialize)]
pub(crate) struct WsParams {
    token: Option<String>,
    since: Option<i64>,
}

pub(crate) async fn upgrade(
    State(state): State<ServeState>,
    headers: HeaderMap,
    params: Result<Query<WsParams>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let Ok(Query(params)) = params else {
        return HttpError::new(ErrorCode::InvalidInput, "bad query string").into_response();
    };
    let presented = params.token.as_deref().or_else(|| auth::bearer(&headers));
    match presented {
        Some(t) if state.token_matches(t) => {}
        Some(_) => return auth::unauthorized("invalid token").into_response(),
        None => return auth::unauthorized("missing ?token=").into_response(),
    }
    // A page on another site can open a socket to loopback with the user's browser.
    if let Some(refused) = auth::foreign_origin(&state, &headers) {
        return refused.into_response();
    }
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(rejection) => return rejection.into_response(),
    };
    // Subscribe before answering 101, so an event emitted right after the client sees the socket
    // open is already queued for it.
    let events = match state.engine.subscribe_feed(params.since).await {
        Ok(feed) => feed,
        Err(e) => return HttpError::from(skald_protocol::ApiError::from(e)).into_response(),
    };
    let shutdown = state.shutdown.clone();
    upgrade.on_upgrade(move |socket| pump(socket, events, shutdown))
}

/// Forwards events until the client leaves, the engine goes or the server shuts down.
async fn pump(mut socket: WebSocket, mut events: EventFeed, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                let frame = CloseFrame { code: close_code::AWAY, reason: "server shutting down".into() };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return;
            }
            // A feed that falls behind reads what it missed back from the outbox, and says
            // `resync` itself when it cannot.
            received = events.recv() => {
                let Some(envelope) = received else { return };
                // Event types are plain data; encoding cannot fail in practice, and one odd event
                // must not end the stream.
                let Ok(text) = serde_json::to_string(&envelope) else { continue };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            }
            incoming = socket.recv() => match incoming {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                // Client → server messages (chat, approvals) arrive with their own issues.
                Some(Ok(_)) => {}
            },
        }
    }
}
