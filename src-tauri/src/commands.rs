//! The Tauri commands the UI calls; each forwards to one `Engine` method and nothing more.

use skald_core::Engine;
use skald_core::engine::ChatOptions;
use skald_protocol::{
    Answer, ApprovalRuleInput, ApprovalRuleView, ConnectionTest, LlmClientInput, SettingsView,
};
use skald_protocol::{
    ApiError, BypassView, CompactResult, Decision, DecisionInput, EventEnvelope, Inbox, Page,
    SendResult, SessionDetail, SessionListQuery, SessionSummary, SessionUsage,
};
use tauri::{State, Webview, ipc::Channel};

use crate::events::Subscriptions;

/// The surfaces of the desktop shell that may name themselves in a decision; anything else the
/// page sends is recorded as `app`, so the page cannot pretend to be the CLI or another user.
const SHELL_SURFACES: &[&str] = &["tray", "notification"];

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

/// The source's active session id, created on first use.
#[tauri::command]
pub async fn active_session(engine: State<'_, Engine>, source: String) -> Result<i64, ApiError> {
    engine.active_session(&source, &ChatOptions::default()).await
}

/// Sends a user message; the turn runs detached (its progress arrives as events), and calls
/// that need a human keep it waiting for a decision from the inbox, tray or a notification.
#[tauri::command]
pub async fn send_message(
    engine: State<'_, Engine>,
    source: String,
    text: String,
) -> Result<SendResult, ApiError> {
    let receipt = engine.send_message(&source, &text, ChatOptions::default()).await?;
    // Dropping the JoinHandle detaches the turn: it must outlive this command and the window.
    let result = receipt.result();
    drop(receipt.turn);
    Ok(result)
}

/// The last request's size against the model's window, and the session's spend.
#[tauri::command]
pub async fn session_usage(
    engine: State<'_, Engine>,
    session_id: i64,
) -> Result<SessionUsage, ApiError> {
    engine.session_usage(session_id).await
}

/// Summarises the session's older history now (`/compact [focus]`).
#[tauri::command]
pub async fn compact_session(
    engine: State<'_, Engine>,
    session_id: i64,
    focus: Option<String>,
) -> Result<CompactResult, ApiError> {
    engine.compact_session(session_id, focus).await
}

/// Revokes the tool groups the session's agents activated (`/resettools`); how many.
#[tauri::command]
pub async fn reset_tool_groups(
    engine: State<'_, Engine>,
    session_id: i64,
) -> Result<u64, ApiError> {
    engine.reset_tool_groups(session_id).await
}

/// Every active bypass across sessions (the inbox lists them).
#[tauri::command]
pub async fn active_bypasses(engine: State<'_, Engine>) -> Result<Vec<BypassView>, ApiError> {
    engine.active_bypasses().await
}

/// The session's active bypasses (the chat shows them).
#[tauri::command]
pub async fn session_bypasses(
    engine: State<'_, Engine>,
    session_id: i64,
) -> Result<Vec<BypassView>, ApiError> {
    engine.session_bypasses(session_id).await
}

/// Ends a bypass now; recorded as revoked by the app.
#[tauri::command]
pub async fn revoke_bypass(engine: State<'_, Engine>, id: i64) -> Result<BypassView, ApiError> {
    engine.revoke_bypass(id, "app").await
}

/// Stops the session's running turn; false when none was running.
#[tauri::command]
pub async fn stop_turn(engine: State<'_, Engine>, session_id: i64) -> Result<bool, ApiError> {
    engine.stop(session_id).await
}

/// Whether a turn is running for the session (here or in another process).
#[tauri::command]
pub async fn turn_running(engine: State<'_, Engine>, session_id: i64) -> Result<bool, ApiError> {
    engine.is_running(session_id).await
}

/// Starts a fresh session for the source and makes it the active one.
#[tauri::command]
pub async fn new_session(engine: State<'_, Engine>, source: String) -> Result<i64, ApiError> {
    engine.new_session(&source).await
}

/// Every approval waiting for a human.
#[tauri::command]
pub async fn inbox(engine: State<'_, Engine>) -> Result<Inbox, ApiError> {
    engine.inbox().await
}

/// Records the user's decision about a waiting call.
#[tauri::command]
pub async fn decide(
    engine: State<'_, Engine>,
    tool_call_id: i64,
    input: DecisionInput,
) -> Result<Decision, ApiError> {
    engine.decide(tool_call_id, from_the_window(input)).await
}

/// Settings: clients in fallback order (never a key), data dir and config path.
#[tauri::command]
pub async fn settings(engine: State<'_, Engine>) -> Result<SettingsView, ApiError> {
    engine.settings().await
}

#[tauri::command]
pub async fn save_llm_clients(
    engine: State<'_, Engine>,
    clients: Vec<LlmClientInput>,
    fallback: Vec<String>,
) -> Result<SettingsView, ApiError> {
    engine.save_llm_clients(clients, fallback).await
}

/// Stores (or with `null` removes) a client's API key in the OS keychain.
#[tauri::command]
pub async fn set_api_key(
    engine: State<'_, Engine>,
    client: String,
    key: Option<String>,
) -> Result<(), ApiError> {
    engine.set_api_key(&client, key).await
}

#[tauri::command]
pub async fn test_connection(
    engine: State<'_, Engine>,
    client: String,
) -> Result<ConnectionTest, ApiError> {
    engine.test_connection(&client).await
}

#[tauri::command]
pub async fn approval_rules(engine: State<'_, Engine>) -> Result<Vec<ApprovalRuleView>, ApiError> {
    engine.approval_rules().await
}

#[tauri::command]
pub async fn save_approval_rule(
    engine: State<'_, Engine>,
    id: Option<i64>,
    input: ApprovalRuleInput,
) -> Result<ApprovalRuleView, ApiError> {
    engine.save_approval_rule(id, input).await
}

#[tauri::command]
pub async fn delete_approval_rule(engine: State<'_, Engine>, id: i64) -> Result<(), ApiError> {
    engine.delete_approval_rule(id).await
}

/// The exact request behind an assistant row (when the request log is on).
#[tauri::command]
pub async fn llm_request(
    engine: State<'_, Engine>,
    message_id: i64,
) -> Result<serde_json::Value, ApiError> {
    engine.llm_request(message_id).await
}

/// Answers a clarification question.
#[tauri::command]
pub async fn answer_question(
    engine: State<'_, Engine>,
    tool_call_id: i64,
    answer: String,
) -> Result<Answer, ApiError> {
    engine.answer(tool_call_id, &answer, "app").await
}

/// A decision sent by the page is the app's, unless it names one of the shell's own surfaces.
fn from_the_window(mut input: DecisionInput) -> DecisionInput {
    if !SHELL_SURFACES.contains(&input.decided_by.as_str()) {
        input.decided_by = "app".to_owned();
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(decided_by: &str) -> DecisionInput {
        DecisionInput {
            approved: true,
            note: None,
            decided_by: decided_by.to_owned(),
            bypass: None,
        }
    }

    #[test]
    fn a_decision_from_the_page_is_recorded_as_the_app_unless_it_names_a_shell_surface() {
        assert_eq!(from_the_window(input("cli")).decided_by, "app");
        assert_eq!(from_the_window(input("")).decided_by, "app");
        assert_eq!(from_the_window(input("TRAY")).decided_by, "app");
        assert_eq!(from_the_window(input("tray")).decided_by, "tray");
        assert_eq!(from_the_window(input("notification")).decided_by, "notification");
    }
}
