//! Build script: embeds the Tauri config, the UI and the capability ACL into the binary.

// The commands the page may call: `api` carries every engine operation (the table in
// crates/skald-api), `subscribe_events` the event channel. Declaring them switches Tauri from "all
// app commands allowed" to "only what a capability grants", so a window without the capability
// cannot reach the engine.
const COMMANDS: &[&str] = &["api", "subscribe_events"];

fn main() {
    // The engine embeds the migrations; rebuild the shell when they change.
    println!("cargo:rerun-if-changed=../migrations");
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        // A build script reports failure by exiting non-zero; there is no caller to return to.
        eprintln!("tauri build setup failed: {error:#}");
        std::process::exit(1);
    }
}
