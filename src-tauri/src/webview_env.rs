//! WebKitGTK settings that must be in the environment before the first webview starts.

/// Without a GPU render node WebKitGTK composites pages with software OpenGL: on such machines
/// (VMs, remote desktops, CI) the first paint took ~2.6 s instead of ~0.9 s and the web process
/// held ~100 MB more (measured with `scripts/desktop-perf.sh`). Skald's UI needs no GPU effects,
/// so compositing is turned off there. A value the user set is left alone.
#[cfg(target_os = "linux")]
pub fn tune_for_this_machine() {
    const VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if std::env::var_os(VAR).is_some() || has_render_node() {
        return;
    }
    // SAFETY: called first thing in `main`, before any other thread exists, so nothing can read
    // the environment concurrently.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(VAR, "1");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn tune_for_this_machine() {}

#[cfg(target_os = "linux")]
fn has_render_node() -> bool {
    std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}
