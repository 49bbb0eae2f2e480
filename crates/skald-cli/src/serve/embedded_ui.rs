//! The web UI built into the binary by `build.rs`: its files and their responses.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;

/// One embedded file: URL path without the leading `/`, contents, ETag.
pub type EmbeddedFile = (&'static str, &'static [u8], &'static str);

/// Empty when `ui/dist` did not exist at build time.
pub static FILES: &[EmbeddedFile] = include!(concat!(env!("OUT_DIR"), "/embedded_ui.rs"));

/// The file at `relative` (`index.html`, `assets/app.js`), if embedded.
pub fn find(files: &'static [EmbeddedFile], relative: &str) -> Option<&'static EmbeddedFile> {
    files.iter().find(|(path, _, _)| *path == relative)
}

/// The response for `file`: the content type `ServeDir` would give it, an ETag (so a reload costs
/// a 304, as with the folder's `Last-Modified`), and no body for HEAD.
pub fn respond(file: &'static EmbeddedFile, method: &Method, request: &HeaderMap) -> Response {
    let (path, bytes, etag) = *file;
    let content_type =
        mime_guess::from_path(path).first_raw().unwrap_or("application/octet-stream");
    let unchanged = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag || tag.trim() == "*"));
    let (status, body) = if unchanged {
        (StatusCode::NOT_MODIFIED, Body::empty())
    } else if method == Method::HEAD {
        (StatusCode::OK, Body::empty())
    } else {
        (StatusCode::OK, Body::from(bytes))
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::ETAG, HeaderValue::from_static(etag));
    if status == StatusCode::OK {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    static SET: &[EmbeddedFile] = &[
        ("index.html", b"<title>Skald</title>", "\"1\""),
        ("assets/app-abc.js", b"let a", "\"2\""),
    ];

    #[test]
    fn serves_content_types_etags_and_head_without_a_body() {
        let index = find(SET, "index.html").unwrap();
        let get = respond(index, &Method::GET, &HeaderMap::new());
        assert_eq!(get.status(), StatusCode::OK);
        assert_eq!(get.headers()[header::CONTENT_TYPE], "text/html");
        assert_eq!(get.headers()[header::CONTENT_LENGTH], "20");
        let js = respond(find(SET, "assets/app-abc.js").unwrap(), &Method::HEAD, &HeaderMap::new());
        assert!(js.headers()[header::CONTENT_TYPE].to_str().unwrap().contains("javascript"));
        assert!(find(SET, "assets/missing.js").is_none());

        let mut conditional = HeaderMap::new();
        conditional.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"1\""));
        assert_eq!(respond(index, &Method::GET, &conditional).status(), StatusCode::NOT_MODIFIED);
    }
}
