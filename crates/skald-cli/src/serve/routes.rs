//! The routes of `skald serve`: one shape for every operation of the table (`POST /api/<op>`
//! with its params as the JSON body), the event stream, and the UI.

use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{Method, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router, middleware};
use skald_api::Caller;
use skald_protocol::ErrorCode;

use super::body_limit::{self, MAX_BODY_BYTES};
use super::errors::HttpError;
use super::{ServeState, auth, json_errors, static_ui, ws};

pub(crate) fn app(state: ServeState) -> Router {
    // Everything under /api except the WebSocket needs the bearer header.
    let api = Router::new()
        .route(
            "/{op}",
            post(operation)
                .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
                .layer(middleware::from_fn(body_limit::refuse_declared)),
        )
        .fallback(api_not_found)
        .method_not_allowed_fallback(api_method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), auth::require_bearer));
    Router::new()
        // Browsers cannot set headers on a WebSocket, so `/api/ws` checks `?token=` itself.
        .route("/api/ws", get(ws::upgrade))
        .nest("/api", api)
        .fallback(static_ui::serve)
        // Outermost, so the errors of the auth guard's neighbours (axum's own) are JSON too.
        .layer(middleware::from_fn(json_errors::as_json))
        .with_state(state)
}

/// `POST /api/<op>`: the body is the operation's params (an empty body stands for `{}`), the
/// answer its result, or an `ApiError` with the status of its code.
async fn operation(
    State(state): State<ServeState>,
    Path(op): Path<String>,
    body: Bytes,
) -> Result<Json<serde_json::Value>, HttpError> {
    let params = if body.iter().all(u8::is_ascii_whitespace) {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            HttpError::new(ErrorCode::InvalidInput, format!("the body of `{op}` is not JSON: {e}"))
        })?
    };
    Ok(Json(skald_api::call(&state.engine, &Caller::Web, &op, params).await?))
}

/// Unknown `/api/*` paths answer in the API's own error shape, never with the UI's HTML.
async fn api_not_found(OriginalUri(uri): OriginalUri) -> HttpError {
    HttpError::new(ErrorCode::NotFound, format!("no API endpoint {}", uri.path()))
}

async fn api_method_not_allowed(method: Method, OriginalUri(uri): OriginalUri) -> HttpError {
    HttpError::new(
        ErrorCode::InvalidInput,
        format!("{method} is not supported on {}: operations are POST", uri.path()),
    )
    .with_status(StatusCode::METHOD_NOT_ALLOWED)
}
