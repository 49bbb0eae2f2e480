//! The largest request body `POST /api/<op>` reads, and its refusal from the declared length.

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use skald_protocol::ErrorCode;

use super::errors::HttpError;

/// axum's default, named so the refusal can say it.
pub(crate) const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// What a body over the limit is told (declared so or found so while read).
pub(crate) fn too_large() -> HttpError {
    HttpError::new(
        ErrorCode::InvalidInput,
        format!(
            "the request body is larger than the {} MiB `skald serve` reads",
            MAX_BODY_BYTES / (1024 * 1024)
        ),
    )
    .with_status(StatusCode::PAYLOAD_TOO_LARGE)
}

/// Middleware: a body whose `Content-Length` is over the limit is refused before any of it is
/// read. A client that waits for `100 Continue` (curl does, for a large body) then never sends
/// it, and none is left unread when the connection closes (which would reset it under the
/// answer).
pub(crate) async fn refuse_declared(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > MAX_BODY_BYTES as u64) {
        return too_large().into_response();
    }
    next.run(request).await
}
