//! The built web UI: choosing where it comes from (override folder, embedded, checkout), and
//! serving its files without ever leaving it.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt as _;
use tower_http::services::ServeDir;

use super::ServeState;
use super::embedded_ui::{self, EmbeddedFile};

/// How to build the UI; the README, the "not built" page and the stderr note all give this one.
pub const BUILD_COMMAND: &str = "npm --prefix ui ci && npm --prefix ui run build";

/// Where the web UI comes from. A folder is looked up per request, so building the UI while the
/// server runs works without a restart.
#[derive(Debug, Clone)]
pub struct UiDir {
    source: Source,
}

#[derive(Debug, Clone)]
enum Source {
    Folder(PathBuf),
    Embedded(&'static [EmbeddedFile]),
}

impl UiDir {
    /// `override_dir` (from `SKALD_UI_DIR`) wins, then the UI built into this binary, then (a
    /// binary built before the UI) the first `ui/dist` with an `index.html` above the executable,
    /// else the checkout this binary was built from.
    pub fn locate(override_dir: Option<PathBuf>, exe: Option<PathBuf>) -> Self {
        Self::choose(override_dir, embedded_ui::FILES, exe)
    }

    fn choose(
        override_dir: Option<PathBuf>,
        embedded: &'static [EmbeddedFile],
        exe: Option<PathBuf>,
    ) -> Self {
        if let Some(root) = override_dir {
            return Self { source: Source::Folder(root) };
        }
        if !embedded.is_empty() {
            return Self { source: Source::Embedded(embedded) };
        }
        let from_exe = exe.as_deref().and_then(|exe| {
            exe.ancestors().skip(1).map(|a| a.join("ui").join("dist")).find(|d| is_built(d))
        });
        let root = from_exe.unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..").join("ui").join("dist")
        });
        Self { source: Source::Folder(root) }
    }

    /// The folder served, or `None` for the embedded UI.
    pub fn folder(&self) -> Option<&Path> {
        match &self.source {
            Source::Folder(root) => Some(root),
            Source::Embedded(_) => None,
        }
    }

    /// The line for stderr when there is no UI to serve (yet).
    pub fn not_built_note(&self) -> Option<String> {
        let root = self.folder().filter(|root| !is_built(root))?;
        Some(format!(
            "no built web UI in {} (build it with `{BUILD_COMMAND}` in the Skald checkout, or set \
             SKALD_UI_DIR); the API works anyway",
            root.display()
        ))
    }
}

fn is_built(dir: &Path) -> bool {
    dir.join("index.html").is_file()
}

/// The page served while the folder has no UI build.
fn not_built_page(root: &Path) -> String {
    format!(
        "The Skald web UI is not built.\n\n\
         Build it with `{BUILD_COMMAND}` in the Skald checkout, then reload this page.\n\
         Looked in: {}\n\
         (Set SKALD_UI_DIR to serve a UI build from another folder.)\n",
        root.display()
    )
}

/// The router's fallback: any path outside `/api` is a UI file, served from the embedded set or
/// by `ServeDir` (content types, `Last-Modified` with conditional requests, ranges, HEAD). No
/// token is needed here, because the page has to load before it can read `?token=` from its own
/// address. The UI routes with the address's hash, so an unknown path is a plain 404, never
/// `index.html`.
pub(crate) async fn serve(State(state): State<ServeState>, request: Request) -> Response {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "Only GET and HEAD are served here.\n");
    }
    let mut response = match &state.ui.source {
        Source::Embedded(files) => {
            let found = relative_path(request.uri().path())
                .and_then(|relative| embedded_ui::find(files, &relative));
            let Some(file) = found else { return not_found() };
            embedded_ui::respond(file, request.method(), request.headers())
        }
        Source::Folder(root) => match serve_folder(root, request).await {
            Ok(response) => response,
            Err(response) => return response,
        },
    };
    let headers = response.headers_mut();
    // Always revalidate: a rebuilt UI must show up on the next reload (a 304 keeps that cheap).
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// A file of the folder as `ServeDir` answers it; `Err` is a finished answer (not built, 404).
async fn serve_folder(root: &Path, request: Request) -> Result<Response, Response> {
    if !is_built(root) {
        return Err(text(StatusCode::SERVICE_UNAVAILABLE, &not_built_page(root)));
    }
    // ServeDir refuses `..` but follows symlinks; `resolve` also proves that the file it will
    // open stays inside the build folder.
    if resolve(root, request.uri().path()).is_none() {
        return Err(not_found());
    }
    let Ok(response) = ServeDir::new(root).oneshot(request).await;
    if response.status() == StatusCode::NOT_FOUND {
        return Err(not_found());
    }
    Ok(response.map(Body::new))
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
/// The canonical result must still be under the canonical root, which also defeats symlinks that
/// point out of the build folder.
fn resolve(root: &Path, url_path: &str) -> Option<PathBuf> {
    let relative = relative_path(url_path)?;
    let root = root.canonicalize().ok()?;
    let file = root.join(relative).canonicalize().ok()?;
    (file.starts_with(&root) && file.is_file()).then_some(file)
}

/// The `/`-separated path a URL path names inside the UI (`index.html` for a folder), or `None`
/// unless every decoded segment is a plain name (no `.`, `..`, separators, NUL or leading dot).
fn relative_path(url_path: &str) -> Option<String> {
    let decoded = percent_decode(url_path)?;
    let mut segments = Vec::new();
    for segment in decoded.split('/').filter(|s| !s.is_empty()) {
        let plain = segment != "."
            && segment != ".."
            && !segment.contains(['\\', '\0', ':'])
            && !segment.starts_with('.');
        if !plain {
            return None;
        }
        segments.push(segment);
    }
    if decoded.ends_with('/') || segments.is_empty() {
        segments.push("index.html");
    }
    Some(segments.join("/"))
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

    static EMBEDDED: &[EmbeddedFile] = &[("index.html", b"<title>Skald</title>", "\"1\"")];

    #[test]
    fn override_beats_embedded_beats_the_checkout() {
        let (_tmp, root) = tree();
        let exe = root.parent().unwrap().join("bin").join("skald");
        let forced = PathBuf::from("/somewhere/dist");
        let chosen = UiDir::choose(Some(forced.clone()), EMBEDDED, Some(exe.clone()));
        assert_eq!(chosen.folder(), Some(forced.as_path()), "SKALD_UI_DIR wins");
        assert!(UiDir::choose(None, EMBEDDED, Some(exe.clone())).folder().is_none(), "embedded");
        // Nothing embedded: a `ui/dist` above the executable, as for `target/debug/skald`.
        let tmp = root.parent().unwrap();
        std::fs::create_dir_all(tmp.join("ui")).unwrap();
        std::fs::rename(&root, tmp.join("ui").join("dist")).unwrap();
        let chosen = UiDir::choose(None, &[], Some(exe));
        assert_eq!(chosen.folder(), Some(tmp.join("ui").join("dist").as_path()));
        // Else the checkout this binary was built from.
        let elsewhere = UiDir::choose(None, &[], Some(PathBuf::from("/opt/skald/skald")));
        assert!(elsewhere.folder().unwrap().ends_with("ui/dist"));
    }

    #[test]
    fn the_not_built_page_and_the_stderr_note_give_the_same_command() {
        let tmp = tempfile::tempdir().unwrap();
        let ui = UiDir::choose(Some(tmp.path().to_path_buf()), &[], None);
        let note = ui.not_built_note().unwrap();
        let page = not_built_page(tmp.path());
        let quoted = format!("`{BUILD_COMMAND}`");
        assert!(note.contains(&quoted) && page.contains(&quoted), "{note}\n{page}");
        assert!(note.contains(&tmp.path().display().to_string()));
        assert!(UiDir::choose(None, EMBEDDED, None).not_built_note().is_none());
    }

    #[test]
    fn embedded_lookups_use_the_same_path_rules() {
        assert_eq!(relative_path("/").unwrap(), "index.html");
        assert_eq!(relative_path("/assets/%61pp.js").unwrap(), "assets/app.js");
        assert_eq!(relative_path("/sub/").unwrap(), "sub/index.html");
        for path in ["/../x", "/%2e%2e/x", "/.hidden", "/a%5cb", "/%00"] {
            assert!(relative_path(path).is_none(), "{path}");
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
