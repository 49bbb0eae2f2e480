//! Build script: embeds the Tauri config, the UI and the capability ACL into the binary.

// Every command the UI may call. Declaring them switches Tauri from "all app commands allowed" to
// "only what a capability grants", so a window without the capability cannot reach the engine.
const COMMANDS: &[&str] = &[
    "list_sessions",
    "session_detail",
    "subscribe_events",
    "active_session",
    "send_message",
    "stop_turn",
    "turn_running",
    "new_session",
    "inbox",
    "decide",
    "settings",
    "save_llm_clients",
    "set_api_key",
    "test_connection",
    "approval_rules",
    "save_approval_rule",
    "delete_approval_rule",
    "llm_request",
    "answer_question",
    "session_usage",
    "compact_session",
    "reset_tool_groups",
    "active_bypasses",
    "session_bypasses",
    "revoke_bypass",
];

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
