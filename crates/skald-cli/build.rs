//! Embeds the built web UI (`ui/dist`, when present) into `skald`, so an installed binary serves
//! its page without the checkout it was built from.
//!
//! Writes `$OUT_DIR/embedded_ui.rs`: a slice of `(url path, bytes, etag)` entries, empty when the UI
//! is not built (a fresh clone or CI's first `cargo build` must still compile).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dist = manifest.join("..").join("..").join("ui").join("dist");
    // Cargo rescans a watched folder's files, so a rebuilt UI is embedded again. While `ui/dist`
    // is missing, `ui` is watched too: a build folder moved in keeps its old file times, but it
    // changes `ui` itself.
    println!("cargo:rerun-if-changed={}", dist.display());
    if !dist.is_dir() {
        println!("cargo:rerun-if-changed={}", dist.join("..").display());
    }
    println!("cargo:rerun-if-changed=build.rs");

    let mut files = Vec::new();
    // Only a complete build counts: without `index.html` the page could not load anyway.
    if dist.join("index.html").is_file() {
        collect(&dist, "", &mut files);
    }
    files.sort();

    let mut out = String::from("&[\n");
    for (url_path, file) in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let bytes = std::fs::read(file).unwrap_or_default();
        let etag = format!("\"{:016x}\"", fnv1a(&bytes));
        let _ =
            writeln!(out, "    ({url_path:?}, include_bytes!({:?}), {etag:?}),", file.display());
    }
    out.push_str("]\n");
    // Integration tests read this to tell a binary with the UI from one built without it.
    println!("cargo:rustc-env=SKALD_EMBEDDED_UI_FILES={}", files.len());

    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::write(out_dir.join("embedded_ui.rs"), out) {
        panic!("cannot write embedded_ui.rs: {e}");
    }
}

/// Every regular file under `dir`, keyed by its URL path (`assets/app.js`). Names starting with a
/// dot are left out: the server never serves them, embedded or not.
fn collect(dir: &Path, prefix: &str, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            println!("cargo:warning=ui/dist: skipped a file whose name is not UTF-8");
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let url_path = format!("{prefix}{name}");
        if path.is_dir() {
            collect(&path, &format!("{url_path}/"), files);
        } else if path.is_file() {
            files.push((url_path, path));
        }
    }
}

/// A content hash for the ETag, so a reload revalidates with a cheap 304.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
