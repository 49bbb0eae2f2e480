//! The bearer-token guard for `/api/*`, and the constant-time token comparison it relies on.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use skald_protocol::ErrorCode;
use subtle::ConstantTimeEq;

use super::ServeState;
use super::errors::HttpError;

/// Middleware: lets the request through only with `Authorization: Bearer <token>`.
pub(crate) async fn require_bearer(
    State(state): State<ServeState>,
    request: Request,
    next: Next,
) -> Response {
    match bearer(request.headers()) {
        Some(presented) if state.token_matches(presented) => next.run(request).await,
        Some(_) => unauthorized("invalid token").into_response(),
        None => unauthorized("missing `Authorization: Bearer <token>` header").into_response(),
    }
}

pub(crate) fn unauthorized(message: &str) -> HttpError {
    HttpError::new(
        ErrorCode::Unauthorized,
        format!("{message}; open the URL `skald serve` printed (it carries ?token=)"),
    )
}

/// The token from an `Authorization: Bearer ...` header, if there is one.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

impl ServeState {
    /// Constant time in the token's content, so response timing reveals nothing about a guess.
    pub(crate) fn token_matches(&self, presented: &str) -> bool {
        self.token.as_bytes().ct_eq(presented.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use axum::http::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn bearer_accepts_any_scheme_case_and_rejects_other_schemes() {
        assert_eq!(bearer(&headers("Bearer abc")), Some("abc"));
        assert_eq!(bearer(&headers("bearer abc")), Some("abc"));
        assert_eq!(bearer(&headers("Basic abc")), None);
        assert_eq!(bearer(&headers("Bearerabc")), None);
        assert_eq!(bearer(&HeaderMap::new()), None);
    }
}
