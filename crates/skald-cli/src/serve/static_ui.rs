//! The built web UI (`ui/dist`): locating it, and serving its files (through `ServeDir`) without
//! ever leaving it.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt as _;
use tower_http::services::ServeDir;

use super::ServeState;

/// Where the built UI lives. It is looked up per request, so building the UI while the server runs
/// works without a restart.
#[derive(Debug, Clone)]
pub struct UiDir {
    root: PathBuf,
}

impl UiDir {
    /// `override_dir` (from `SKALD_UI_DIR`) wins. Otherwise the first `ui/dist` with an
    /// `index.html` above the executable (a `target/debug/skald` inside a checkout), else the
    /// checkout this binary was built from.
    pub fn locate(override_dir: Option<PathBuf>, exe: Option<PathBuf>) -> Self {
        if let Some(root) = override_dir {
            return Self { root };
        }
        let from_exe = exe.as_deref().and_then(|exe| {
            exe.ancestors().skip(1).map(|a| a.join("ui").join("dist")).find(|d| is_built(d))
        });
        let root = from_exe.unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..").join("ui").join("dist")
        });
        Self { root }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn is_built(&self) -> bool {
        is_built(&self.root)
    }
}

fn is_built(dir: &Path) -> bool {
    dir.join("index.html").is_file()
}

/// The router's fallback: any path outside `/api` is a UI file, served by `ServeDir` (content
/// types, `Last-Modified` with conditional requests, ranges, HEAD). No token is needed here,
/// because the page has to load before it can read `?token=` from its own address. The UI routes
/// with the address's hash, so an unknown path is a plain 404, never `index.html`.
pub(crate) async fn serve(State(state): State<ServeState>, request: Request) -> Response {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "Only GET and HEAD are served here.\n");
    }
    let ui = &state.ui;
    if !ui.is_built() {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "The Skald web UI is not built.\n\n\
                 Build it with `npm --prefix ui ci && npm --prefix ui run build` in the Skald \
                 checkout, then reload this page.\n\
                 Looked in: {}\n\
                 (Set SKALD_UI_DIR to serve a UI build from another folder.)\n",
                ui.path().display()
            ),
        );
    }
    // ServeDir refuses `..` but follows symlinks; `resolve` also proves that the file it will
    // open stays inside the build folder.
    if resolve(ui.path(), request.uri().path()).is_none() {
        return not_found();
    }
    let Ok(response) = ServeDir::new(ui.path()).oneshot(request).await;
    if response.status() == StatusCode::NOT_FOUND {
        return not_found();
    }
    let mut response = response.map(Body::new);
    let headers = response.headers_mut();
    // Always revalidate: a rebuilt UI must show up on the next reload (a 304 keeps that cheap).
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "Not found.\n")
}

fn text(status: StatusCode, body: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body.to_string())
        .into_response()
}

/// Maps a URL path to a regular file inside `root`, or `None`.
///
/// Every decoded segment must be a plain name (no `.`, `..`, separators or NUL), and the
/// canonical result must still be under the canonical root, which also defeats symlinks that
/// point out of the build folder.
fn resolve(root: &Path, url_path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(url_path)?;
    let mut relative = PathBuf::new();
    for segment in decoded.split('/').filter(|s| !s.is_empty()) {
        let plain = segment != "."
            && segment != ".."
            && !segment.contains(['\\', '\0', ':'])
            && !segment.starts_with('.');
        if !plain {
            return None;
        }
        relative.push(segment);
    }
    if decoded.ends_with('/') || relative.as_os_str().is_empty() {
        relative.push("index.html");
    }
    let root = root.canonicalize().ok()?;
    let file = root.join(relative).canonicalize().ok()?;
    (file.starts_with(&root) && file.is_file()).then_some(file)
}

fn percent_decode(input: &str) -> Option<String> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = input.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("dist");
        std::fs::create_dir_all(root.join("assets")).unwrap();
        std::fs::write(root.join("index.html"), "<html></html>").unwrap();
        std::fs::write(root.join("assets").join("app.js"), "1").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "secret").unwrap();
        (tmp, root)
    }

    #[test]
    fn resolves_files_inside_the_root_and_index_for_directories() {
        let (_tmp, root) = tree();
        let root_c = root.canonicalize().unwrap();
        assert_eq!(resolve(&root, "/").unwrap(), root_c.join("index.html"));
        assert_eq!(resolve(&root, "/assets/app.js").unwrap(), root_c.join("assets/app.js"));
        assert_eq!(resolve(&root, "/assets/%61pp.js").unwrap(), root_c.join("assets/app.js"));
        assert!(resolve(&root, "/missing.js").is_none());
        assert!(resolve(&root, "/assets").is_none(), "a directory without index.html");
    }

    #[test]
    fn refuses_every_way_out_of_the_root() {
        let (_tmp, root) = tree();
        for path in [
            "/../secret.txt",
            "/%2e%2e/secret.txt",
            "/assets/..%2f..%2fsecret.txt",
            "/assets/%2e%2e%5c%2e%2e%5csecret.txt",
            "/%00",
            "/%zz",
        ] {
            assert!(resolve(&root, path).is_none(), "{path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_symlink_pointing_outside() {
        let (tmp, root) = tree();
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), root.join("link.txt")).unwrap();
        assert!(resolve(&root, "/link.txt").is_none());
    }
}
