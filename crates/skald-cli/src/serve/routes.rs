//! Every route of `skald serve`, declared in one place; each handler calls one `Engine` method.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{OriginalUri, Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::routing::{get, post, put};
use axum::{Json, Router, middleware};
use serde::{Deserialize, Serialize};
use skald_core::engine::ChatOptions;
use skald_core::session::run_context::RunContext;
use skald_protocol::{
    ApprovalRuleInput, ApprovalRuleView, ConnectionTest, LlmClientInput, SettingsView,
};
use skald_protocol::{
    BypassView, CompactResult, DEFAULT_PER_PAGE, Decision, DecisionInput, ErrorCode, Inbox, Page,
    SendResult, SessionDetail, SessionListQuery, SessionSummary, SessionUsage,
};

use super::errors::HttpError;
use super::{ServeState, auth, static_ui, ws};

/// The source a new session gets when the client names none (the web chat's own source).
const DEFAULT_SOURCE: &str = "web";

pub(crate) fn app(state: ServeState) -> Router {
    // Routes here need the bearer header. Add new REST endpoints to this list.
    let api = Router::new()
        .route("/sessions", get(list_sessions).post(new_session))
        .route("/sessions/{id}", get(session_detail))
        .route("/sessions/{id}/stop", post(stop_turn))
        .route("/sessions/{id}/running", get(turn_running))
        .route("/sessions/{id}/usage", get(session_usage))
        .route("/sessions/{id}/compact", post(compact_session))
        .route("/sessions/{id}/resettools", post(reset_tool_groups))
        .route("/sources/{source}/session", get(active_session))
        .route("/sources/{source}/messages", post(send_message))
        .route("/inbox", get(inbox))
        .route("/tools/{id}/decision", post(decide))
        .route("/bypasses", get(active_bypasses))
        .route("/bypasses/{id}/revoke", post(revoke_bypass))
        .route("/sessions/{id}/bypasses", get(session_bypasses))
        .route("/messages/{id}/request", get(llm_request))
        .route("/questions/{id}/answer", post(answer))
        .route("/settings", get(settings))
        .route("/settings/clients", put(save_clients))
        .route("/settings/clients/{name}/key", put(set_key))
        .route("/settings/clients/{name}/test", post(test_connection))
        .route("/approval/rules", get(rules).post(create_rule))
        .route("/approval/rules/{id}", put(update_rule).delete(delete_rule))
        .route("/sessions/{id}/run_context", get(get_run_context).post(set_run_context))
        .fallback(api_not_found)
        .method_not_allowed_fallback(api_method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), auth::require_bearer));
    Router::new()
        // Browsers cannot set headers on a WebSocket, so `/api/ws` checks `?token=` itself.
        .route("/api/ws", get(ws::upgrade))
        .nest("/api", api)
        .fallback(static_ui::serve)
        .with_state(state)
}

#[derive(Debug, Deserialize)]
struct ListParams {
    source: Option<String>,
    search: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

/// `?source=` with no value means "no filter", as an omitted parameter does.
fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

async fn list_sessions(
    State(state): State<ServeState>,
    params: Result<Query<ListParams>, QueryRejection>,
) -> Result<Json<Page<SessionSummary>>, HttpError> {
    let Query(p) = params.map_err(|e| HttpError::new(ErrorCode::InvalidInput, e.body_text()))?;
    let query = SessionListQuery {
        source: non_empty(p.source),
        search: non_empty(p.search),
        page: p.page.unwrap_or(1),
        per_page: p.per_page.unwrap_or(DEFAULT_PER_PAGE),
    };
    Ok(Json(state.engine.list_sessions(query).await?))
}

async fn session_detail(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<SessionDetail>, HttpError> {
    let Path(id) = id.map_err(|e| {
        HttpError::new(ErrorCode::InvalidInput, format!("bad session id: {}", e.body_text()))
    })?;
    Ok(Json(state.engine.session_detail(id).await?))
}

#[derive(Debug, Deserialize)]
struct NewSessionParams {
    source: Option<String>,
}

#[derive(Debug, Serialize)]
struct NewSessionReply {
    session_id: i64,
}

async fn new_session(
    State(state): State<ServeState>,
    params: Result<Query<NewSessionParams>, QueryRejection>,
) -> Result<Json<NewSessionReply>, HttpError> {
    let Query(p) = params.map_err(|e| HttpError::new(ErrorCode::InvalidInput, e.body_text()))?;
    let source = non_empty(p.source).unwrap_or_else(|| DEFAULT_SOURCE.to_string());
    let session_id = state.engine.new_session(&source).await?;
    Ok(Json(NewSessionReply { session_id }))
}

fn id_of(id: Result<Path<i64>, PathRejection>, what: &str) -> Result<i64, HttpError> {
    id.map(|Path(id)| id).map_err(|e| {
        HttpError::new(ErrorCode::InvalidInput, format!("bad {what} id: {}", e.body_text()))
    })
}

fn source_of(source: Result<Path<String>, PathRejection>) -> Result<String, HttpError> {
    source.map(|Path(s)| s).map_err(|e| {
        HttpError::new(ErrorCode::InvalidInput, format!("bad source: {}", e.body_text()))
    })
}

async fn stop_turn(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<serde_json::Value>, HttpError> {
    let stopped = state.engine.stop(id_of(id, "session")?).await?;
    Ok(Json(serde_json::json!({ "stopped": stopped })))
}

async fn session_usage(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<SessionUsage>, HttpError> {
    Ok(Json(state.engine.session_usage(id_of(id, "session")?).await?))
}

#[derive(Debug, Default, Deserialize)]
struct CompactBody {
    focus: Option<String>,
}

/// `POST /api/sessions/{id}/compact` with an optional `{"focus": "..."}` body.
async fn compact_session(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
    body: Option<Json<CompactBody>>,
) -> Result<Json<CompactResult>, HttpError> {
    let focus = body.and_then(|Json(b)| b.focus);
    Ok(Json(state.engine.compact_session(id_of(id, "session")?, focus).await?))
}

async fn reset_tool_groups(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<serde_json::Value>, HttpError> {
    let revoked = state.engine.reset_tool_groups(id_of(id, "session")?).await?;
    Ok(Json(serde_json::json!({ "revoked": revoked })))
}

async fn turn_running(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<serde_json::Value>, HttpError> {
    let running = state.engine.is_running(id_of(id, "session")?).await?;
    Ok(Json(serde_json::json!({ "running": running })))
}

async fn active_session(
    State(state): State<ServeState>,
    source: Result<Path<String>, PathRejection>,
) -> Result<Json<NewSessionReply>, HttpError> {
    let session_id =
        state.engine.active_session(&source_of(source)?, &ChatOptions::default()).await?;
    Ok(Json(NewSessionReply { session_id }))
}

#[derive(Debug, Deserialize)]
struct SendBody {
    text: String,
}

/// Starts a turn (detached: a closed connection never cancels it) or stores a steer.
async fn send_message(
    State(state): State<ServeState>,
    source: Result<Path<String>, PathRejection>,
    body: Result<Json<SendBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<SendResult>, HttpError> {
    let Json(body) = body.map_err(|e| HttpError::new(ErrorCode::InvalidInput, e.body_text()))?;
    let receipt =
        state.engine.send_message(&source_of(source)?, &body.text, ChatOptions::default()).await?;
    Ok(Json(receipt.result()))
}

async fn inbox(State(state): State<ServeState>) -> Result<Json<Inbox>, HttpError> {
    Ok(Json(state.engine.inbox().await?))
}

async fn decide(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
    body: Result<Json<DecisionInput>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<Decision>, HttpError> {
    let Json(mut input) =
        body.map_err(|e| HttpError::new(ErrorCode::InvalidInput, e.body_text()))?;
    if input.decided_by.trim().is_empty() {
        input.decided_by = "web".into();
    }
    Ok(Json(state.engine.decide(id_of(id, "tool call")?, input).await?))
}

async fn active_bypasses(
    State(state): State<ServeState>,
) -> Result<Json<Vec<BypassView>>, HttpError> {
    Ok(Json(state.engine.active_bypasses().await?))
}

async fn session_bypasses(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<Vec<BypassView>>, HttpError> {
    Ok(Json(state.engine.session_bypasses(id_of(id, "session")?).await?))
}

async fn revoke_bypass(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<BypassView>, HttpError> {
    Ok(Json(state.engine.revoke_bypass(id_of(id, "bypass")?, "web").await?))
}

type JsonBody<T> = Result<Json<T>, axum::extract::rejection::JsonRejection>;

fn body<T>(b: JsonBody<T>) -> Result<T, HttpError> {
    b.map(|Json(v)| v).map_err(|e| HttpError::new(ErrorCode::InvalidInput, e.body_text()))
}

#[derive(Debug, Deserialize)]
struct AnswerBody {
    answer: String,
}

async fn answer(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
    b: JsonBody<AnswerBody>,
) -> Result<Json<skald_protocol::Answer>, HttpError> {
    let id = id_of(id, "question")?;
    Ok(Json(state.engine.answer(id, &body(b)?.answer, "web").await?))
}

async fn llm_request(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<serde_json::Value>, HttpError> {
    Ok(Json(state.engine.llm_request(id_of(id, "message")?).await?))
}

async fn settings(State(state): State<ServeState>) -> Result<Json<SettingsView>, HttpError> {
    Ok(Json(state.engine.settings().await?))
}

#[derive(Debug, Deserialize)]
struct ClientsBody {
    clients: Vec<LlmClientInput>,
    fallback: Vec<String>,
}

async fn save_clients(
    State(state): State<ServeState>,
    b: JsonBody<ClientsBody>,
) -> Result<Json<SettingsView>, HttpError> {
    let b = body(b)?;
    Ok(Json(state.engine.save_llm_clients(b.clients, b.fallback).await?))
}

#[derive(Debug, Deserialize)]
struct KeyBody {
    key: Option<String>,
}

async fn set_key(
    State(state): State<ServeState>,
    name: Result<Path<String>, PathRejection>,
    b: JsonBody<KeyBody>,
) -> Result<Json<serde_json::Value>, HttpError> {
    state.engine.set_api_key(&source_of(name)?, body(b)?.key).await?;
    Ok(Json(serde_json::json!({ "ok": true })))
}

async fn test_connection(
    State(state): State<ServeState>,
    name: Result<Path<String>, PathRejection>,
) -> Result<Json<ConnectionTest>, HttpError> {
    Ok(Json(state.engine.test_connection(&source_of(name)?).await?))
}

async fn rules(State(state): State<ServeState>) -> Result<Json<Vec<ApprovalRuleView>>, HttpError> {
    Ok(Json(state.engine.approval_rules().await?))
}

async fn create_rule(
    State(state): State<ServeState>,
    b: JsonBody<ApprovalRuleInput>,
) -> Result<Json<ApprovalRuleView>, HttpError> {
    Ok(Json(state.engine.save_approval_rule(None, body(b)?).await?))
}

async fn update_rule(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
    b: JsonBody<ApprovalRuleInput>,
) -> Result<Json<ApprovalRuleView>, HttpError> {
    let id = id_of(id, "rule")?;
    Ok(Json(state.engine.save_approval_rule(Some(id), body(b)?).await?))
}

async fn delete_rule(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<serde_json::Value>, HttpError> {
    state.engine.delete_approval_rule(id_of(id, "rule")?).await?;
    Ok(Json(serde_json::json!({ "ok": true })))
}

async fn get_run_context(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<RunContext>, HttpError> {
    Ok(Json(state.engine.run_context(id_of(id, "session")?).await?))
}

async fn set_run_context(
    State(state): State<ServeState>,
    id: Result<Path<i64>, PathRejection>,
    b: JsonBody<Option<RunContext>>,
) -> Result<Json<serde_json::Value>, HttpError> {
    state.engine.set_run_context(id_of(id, "session")?, body(b)?).await?;
    Ok(Json(serde_json::json!({ "ok": true })))
}

/// Unknown `/api/*` paths answer in the API's own error shape, never with the UI's HTML.
async fn api_not_found(OriginalUri(uri): OriginalUri) -> HttpError {
    HttpError::new(ErrorCode::NotFound, format!("no API endpoint {}", uri.path()))
}

async fn api_method_not_allowed(method: Method, OriginalUri(uri): OriginalUri) -> HttpError {
    HttpError::new(ErrorCode::InvalidInput, format!("{method} is not supported on {}", uri.path()))
        .with_status(StatusCode::METHOD_NOT_ALLOWED)
}
