//! `ApiError` as an HTTP response: a status chosen from the error code and the error as JSON.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use skald_protocol::{ApiError, ErrorCode};

/// The HTTP status each error code stands for.
pub(crate) fn status_for(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::InvalidInput => StatusCode::BAD_REQUEST,
        ErrorCode::Conflict | ErrorCode::Cancelled => StatusCode::CONFLICT,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Config | ErrorCode::Storage | ErrorCode::Llm | ErrorCode::Internal => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
    }
}

/// An error leaving a handler. The body is always the `ApiError` JSON the UI parses.
#[derive(Debug)]
pub(crate) struct HttpError {
    status: StatusCode,
    error: ApiError,
}

impl HttpError {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError::new(code, message).into()
    }

    /// Same body, different status (a refused `Origin` is `unauthorized` but 403, not 401).
    pub(crate) fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }
}

impl From<ApiError> for HttpError {
    fn from(error: ApiError) -> Self {
        Self { status: status_for(error.code), error }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let mut response = (self.status, Json(self.error)).into_response();
        if unauthorized {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_the_documented_status() {
        let cases = [
            (ErrorCode::NotFound, 404),
            (ErrorCode::InvalidInput, 400),
            (ErrorCode::Conflict, 409),
            (ErrorCode::Cancelled, 409),
            (ErrorCode::Unauthorized, 401),
            (ErrorCode::Config, 500),
            (ErrorCode::Storage, 500),
            (ErrorCode::Llm, 500),
            (ErrorCode::Internal, 500),
        ];
        for (code, status) in cases {
            assert_eq!(status_for(code).as_u16(), status, "{code:?}");
        }
    }
}
