//! The Tauri commands the UI calls; each forwards to one `Engine` method and nothing more.

use skald_core::Engine;
use skald_protocol::{
    ApiError, EventEnvelope, Page, SessionDetail, SessionListQuery, SessionSummary,
};
use tauri::{State, Webview, ipc::Channel};

use crate::events::Subscriptions;

/// One page of the session list, filtered as the query says.
#[tauri::command]
pub async fn list_sessions(
    engine: State<'_, Engine>,
    query: SessionListQuery,
) -> Result<Page<SessionSummary>, ApiError> {
    engine.list_sessions(query).await
}

/// The whole debug tree of one session.
#[tauri::command]
pub async fn session_detail(engine: State<'_, Engine>, id: i64) -> Result<SessionDetail, ApiError> {
    engine.session_detail(id).await
}

/// Streams every engine event into `channel` until the page that created it goes away.
///
/// The broadcast receiver is taken before the command returns, so the UI misses nothing that is
/// committed after its `invoke` resolves.
#[tauri::command]
pub fn subscribe_events(
    webview: Webview,
    engine: State<'_, Engine>,
    subscriptions: State<'_, Subscriptions>,
    channel: Channel<EventEnvelope>,
) {
    subscriptions.add(webview.label(), engine.subscribe(), channel);
}
