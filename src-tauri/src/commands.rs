//! The page's two commands: `api` forwards any operation of the table (`skald_api`) to the
//! engine as the app's window, and `subscribe_events` streams the engine's events.

use skald_api::Caller;
use skald_core::Engine;
use skald_protocol::{ApiError, EventEnvelope};
use tauri::{State, Webview, ipc::Channel};

use crate::events::Subscriptions;

/// Runs operation `op` with `params` (its params object) and answers its result. The caller is
/// the app's window, so a decision made here is recorded as the app's.
#[tauri::command]
pub async fn api(
    engine: State<'_, Engine>,
    op: String,
    params: serde_json::Value,
) -> Result<serde_json::Value, ApiError> {
    skald_api::call(&engine, &Caller::App, &op, params).await
}

/// Streams the events of every process on the data dir into `channel` until the page that
/// created it goes away. `since`: the last event sequence the page saw, to replay what came
/// after it first (`null`: from now on). The first event says where the stream starts.
///
/// The feed is subscribed before the command returns, so the UI misses nothing that is
/// committed after its `invoke` resolves.
#[tauri::command]
pub async fn subscribe_events(
    webview: Webview,
    engine: State<'_, Engine>,
    subscriptions: State<'_, Subscriptions>,
    channel: Channel<EventEnvelope>,
    since: Option<i64>,
) -> Result<(), ApiError> {
    let feed = engine.subscribe_feed(since).await?;
    subscriptions.add(webview.label(), feed, channel);
    Ok(())
}
