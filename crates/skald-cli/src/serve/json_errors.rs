//! Every error under `/api` answers the `ApiError` JSON, also those axum writes as plain text
//! itself (a body over the limit, a wrong method, a refused WebSocket upgrade).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use skald_protocol::ErrorCode;

use super::body_limit;
use super::errors::HttpError;

/// How much of a plain-text error body is read to carry over as the message.
const MAX_PLAIN_BYTES: usize = 4096;

/// Middleware: an error response under `/api` that is not JSON yet is rewritten as the
/// `{"code", "message"}` the README promises, with the same status. The UI, scripts and curl
/// users then parse one shape whatever went wrong.
pub(crate) async fn as_json(request: Request, next: Next) -> Response {
    let api = request.uri().path() == "/api" || request.uri().path().starts_with("/api/");
    let response = next.run(request).await;
    let status = response.status();
    if !api || !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    // A body found too large while read gets the answer a declared one gets.
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return body_limit::too_large().into_response();
    }
    let (parts, body) = response.into_parts();
    let plain = axum::body::to_bytes(body, MAX_PLAIN_BYTES).await;
    let plain = plain.map(|b| String::from_utf8_lossy(&b).trim().to_string()).unwrap_or_default();
    let mut json = HttpError::new(code_for(status), message_for(status, &plain))
        .with_status(status)
        .into_response();
    // What the answer said besides its body still holds (a 405's `Allow`).
    for (name, value) in &parts.headers {
        if !json.headers().contains_key(name) && name != header::CONTENT_LENGTH {
            json.headers_mut().append(name, value.clone());
        }
    }
    json
}

fn is_json(response: &Response<Body>) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// The error code a status stands for (the inverse of `errors::status_for`, every other client
/// error being the caller's bad input).
fn code_for(status: StatusCode) -> ErrorCode {
    match status {
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::CONFLICT => ErrorCode::Conflict,
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ErrorCode::Unauthorized,
        s if s.is_client_error() => ErrorCode::InvalidInput,
        _ => ErrorCode::Internal,
    }
}

fn message_for(status: StatusCode, plain: &str) -> String {
    if plain.is_empty() {
        return status.canonical_reason().unwrap_or("error").to_string();
    }
    plain.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_the_codes_the_readme_lists() {
        assert_eq!(code_for(StatusCode::NOT_FOUND), ErrorCode::NotFound);
        assert_eq!(code_for(StatusCode::PAYLOAD_TOO_LARGE), ErrorCode::InvalidInput);
        assert_eq!(code_for(StatusCode::METHOD_NOT_ALLOWED), ErrorCode::InvalidInput);
        assert_eq!(code_for(StatusCode::FORBIDDEN), ErrorCode::Unauthorized);
        assert_eq!(code_for(StatusCode::BAD_GATEWAY), ErrorCode::Internal);
    }

    #[test]
    fn an_empty_body_gets_the_status_reason() {
        assert_eq!(message_for(StatusCode::METHOD_NOT_ALLOWED, ""), "Method Not Allowed");
        assert_eq!(message_for(StatusCode::BAD_REQUEST, "bad header"), "bad header");
    }
}
