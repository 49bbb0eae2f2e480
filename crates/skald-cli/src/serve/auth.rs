//! The guard for `/api/*`: the bearer token (compared in constant time) and, for requests a
//! browser sends, the page they come from.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use skald_protocol::ErrorCode;
use subtle::ConstantTimeEq;

use super::ServeState;
use super::errors::HttpError;

/// Middleware: lets the request through only with `Authorization: Bearer <token>`, and only from
/// the served UI's own origin when a browser names one.
pub(crate) async fn require_bearer(
    State(state): State<ServeState>,
    request: Request,
    next: Next,
) -> Response {
    match bearer(request.headers()) {
        Some(presented) if state.token_matches(presented) => {}
        Some(_) => return unauthorized("invalid token").into_response(),
        // Never checked, so a token in a URL (logs, history, Referer) never opens the API.
        None if has_query_token(request.uri().query()) => {
            return HttpError::new(
                ErrorCode::Unauthorized,
                "the API takes the token in the `Authorization: Bearer <token>` header, not in \
                 `?token=` (only the page and `/api/ws` read it from the URL); the token is in \
                 DIR/serve.token",
            )
            .into_response();
        }
        None => {
            return unauthorized("missing `Authorization: Bearer <token>` header").into_response();
        }
    }
    if let Some(refused) = foreign_origin(&state, request.headers()) {
        return refused.into_response();
    }
    next.run(request).await
}

/// Refuses a request a browser sent from another page than the UI `skald serve` serves (its
/// `Origin` is not this server's loopback origin): such a page cannot read the token, and a
/// token that leaked to it must not let it act, so the `Origin` header, which a page cannot
/// forge, decides. Requests without one (curl, scripts) are judged by the token alone.
pub(crate) fn foreign_origin(state: &ServeState, headers: &HeaderMap) -> Option<HttpError> {
    let origin = headers.get(header::ORIGIN)?;
    let allowed = origin
        .to_str()
        .is_ok_and(|o| state.allowed_origins.iter().any(|a| a.eq_ignore_ascii_case(o)));
    let shown = String::from_utf8_lossy(origin.as_bytes()).chars().take(100).collect::<String>();
    (!allowed).then(|| {
        HttpError::new(
            ErrorCode::Unauthorized,
            format!(
                "origin `{shown}` not allowed: only the page `skald serve` serves may use its API"
            ),
        )
        .with_status(StatusCode::FORBIDDEN)
    })
}

pub(crate) fn unauthorized(message: &str) -> HttpError {
    HttpError::new(
        ErrorCode::Unauthorized,
        format!("{message}; open the URL `skald serve` printed (it carries ?token=)"),
    )
}

/// Whether the query string carries a `token` parameter (with or without a value).
fn has_query_token(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|pair| pair.split('=').next() == Some("token")))
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

    #[test]
    fn a_query_token_is_found_by_its_name_only() {
        assert!(has_query_token(Some("token=abc")));
        assert!(has_query_token(Some("x=1&token")));
        assert!(!has_query_token(Some("tokens=abc&x=token")));
        assert!(!has_query_token(None));
    }
}
