//! An installed `skald serve` (the binary copied out of the checkout) serves the UI built into it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// How many UI files `build.rs` embedded; 0 when `ui/dist` did not exist at build time.
const EMBEDDED_FILES: &str = env!("SKALD_EMBEDDED_UI_FILES");

/// Kills the server even when an assertion fails.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_copied_binary_serves_its_embedded_page_and_assets() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin").join("skald");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_skald"), &bin).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let data = home.join("data");

    let mut child = Command::new(&bin)
        .args(["--data-dir", data.to_str().unwrap(), "serve", "--port", "0"])
        .current_dir(tmp.path())
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env_remove("SKALD_UI_DIR")
        .env_remove("SKALD_DATA_DIR")
        .env_remove("SKALD_LLM_BASE_URL")
        .env_remove("SKALD_LLM_MODEL")
        .env_remove("SKALD_LLM_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let running = Running(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on http://127.0.0.1:")
        .and_then(|rest| rest.split_once('/'))
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .0
        .to_string();
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let http = reqwest::Client::new();
    let page = http.get(url("/")).send().await.unwrap();

    if EMBEDDED_FILES == "0" {
        let message = "THIS skald WAS BUILT WITHOUT AN EMBEDDED UI (no ui/dist at build time): \
                       only the \"not built\" answer is checked; build the UI first \
                       (`npm --prefix ui ci && npm --prefix ui run build`) to test the real page";
        // scripts/test.sh builds the UI before the Rust tests and sets this, so CI never skips.
        assert!(std::env::var_os("SKALD_REQUIRE_EMBEDDED_UI").is_none(), "{message}");
        eprintln!("\n!!! {message} !!!\n");
        assert_eq!(page.status(), 503);
        return;
    }

    assert_eq!(page.status(), 200);
    // Served from the binary, not from the checkout it was built from (which still exists here):
    // only embedded files carry an ETag (`ServeDir` gives `Last-Modified`).
    assert!(page.headers().contains_key("etag"), "{:?}", page.headers());
    assert_eq!(page.headers()["cache-control"], "no-cache");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = page.text().await.unwrap();
    assert!(html.contains("<title>Skald</title>"), "{html}");

    // Vite writes `./assets/index-<hash>.js` (relative, for the desktop shell too).
    let script = html
        .split('"')
        .find_map(|s| {
            let name = s.strip_prefix("./assets/").or(s.strip_prefix("/assets/"))?;
            name.ends_with(".js").then_some(name)
        })
        .unwrap_or_else(|| panic!("no assets/*.js in the page: {html}"));
    let asset = http.get(url(&format!("/assets/{script}"))).send().await.unwrap();
    assert_eq!(asset.status(), 200, "{script}");
    assert!(asset.headers()["content-type"].to_str().unwrap().contains("javascript"));
    assert!(!asset.bytes().await.unwrap().is_empty());

    let missing = http.get(url("/assets/no-such-file.js")).send().await.unwrap();
    assert_eq!(missing.status(), 404, "an unknown path is a 404, never index.html");
    let escape = http.get(url("/assets/%2e%2e/%2e%2e/Cargo.toml")).send().await.unwrap();
    assert_eq!(escape.status(), 404);

    drop(running);
    let mut notes = String::new();
    let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut notes);
    assert!(!notes.contains("no built web UI"), "{notes}");
}
