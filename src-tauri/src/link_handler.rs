//! Registers `skald://` with the OS. On Linux the deep-link plugin writes a `.desktop` handler
//! whose `Exec` is a quoted absolute path, which `xdg-open` 1.1.3 cannot run; we rewrite it so
//! both `gio open` and `xdg-open` start us.

use tauri::AppHandle;

/// Registers the schemes from `tauri.conf.json` and repairs the handler the plugin wrote.
pub fn register(app: &AppHandle) {
    use tauri_plugin_deep_link::DeepLinkExt as _;
    if let Err(error) = app.deep_link().register_all() {
        tracing::warn!(%error, "cannot register skald:// links with the OS");
        return;
    }
    #[cfg(target_os = "linux")]
    linux::repair_handler(app);
}

/// The `Exec` value for `exe`: bare when it has no character the Desktop Entry spec reserves
/// (the form every launcher understands), quoted and escaped otherwise.
pub fn exec_line(exe: &str) -> String {
    let bare = !exe.is_empty()
        && exe.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._+-,@:".contains(&b));
    if bare {
        format!("{exe} %u")
    } else {
        let mut quoted = String::with_capacity(exe.len() + 2);
        for c in exe.chars() {
            if matches!(c, '"' | '`' | '$' | '\\') {
                quoted.push('\\');
            }
            quoted.push(c);
        }
        format!("\"{quoted}\" %u")
    }
}

/// `contents` with every `Exec=` line of the desktop entry replaced; `None` if nothing changed.
pub fn with_exec(contents: &str, exec: &str) -> Option<String> {
    let wanted = format!("Exec={exec}");
    let mut changed = false;
    let lines: Vec<&str> = contents
        .lines()
        .map(|line| {
            if line.starts_with("Exec=") && line != wanted {
                changed = true;
                wanted.as_str()
            } else {
                line
            }
        })
        .collect();
    changed.then(|| lines.join("\n") + "\n")
}

#[cfg(target_os = "linux")]
mod linux {
    use tauri::{AppHandle, Manager as _};

    pub fn repair_handler(app: &AppHandle) {
        let Ok(bin) = tauri::utils::platform::current_exe() else { return };
        let Some(name) = bin.file_name().map(|name| name.to_string_lossy().into_owned()) else {
            return;
        };
        // An AppImage must be started through the image, as the plugin does.
        let exe = app.env().appimage.unwrap_or_else(|| bin.into_os_string());
        let Ok(data_dir) = app.path().data_dir() else { return };
        let file = data_dir.join("applications").join(format!("{name}-handler.desktop"));
        let Ok(contents) = std::fs::read_to_string(&file) else {
            tracing::warn!(file = %file.display(), "no link handler to repair");
            return;
        };
        let exec = super::exec_line(&exe.to_string_lossy());
        if let Some(fixed) = super::with_exec(&contents, &exec) {
            match std::fs::write(&file, fixed) {
                Ok(()) => tracing::info!(file = %file.display(), %exec, "link handler repaired"),
                Err(error) => tracing::warn!(%error, "cannot repair the link handler"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_path_is_written_bare_so_xdg_open_can_run_it() {
        assert_eq!(exec_line("/opt/Skald/skald-desktop"), "/opt/Skald/skald-desktop %u");
    }

    #[test]
    fn a_path_with_reserved_characters_stays_quoted_and_escaped() {
        assert_eq!(exec_line("/home/a b/skald"), "\"/home/a b/skald\" %u");
        assert_eq!(exec_line("/x/$HOME\"q"), "\"/x/\\$HOME\\\"q\" %u");
    }

    #[test]
    fn only_the_exec_line_changes() {
        let plugin = "[Desktop Entry]\nType=Application\nName=Skald\nExec=\"/usr/bin/skald-desktop\" %u\nMimeType=x-scheme-handler/skald\n";
        let fixed = with_exec(plugin, "/usr/bin/skald-desktop %u").unwrap_or_default();
        assert_eq!(
            fixed,
            "[Desktop Entry]\nType=Application\nName=Skald\nExec=/usr/bin/skald-desktop %u\nMimeType=x-scheme-handler/skald\n"
        );
        assert_eq!(with_exec(&fixed, "/usr/bin/skald-desktop %u"), None, "already fixed");
    }
}
