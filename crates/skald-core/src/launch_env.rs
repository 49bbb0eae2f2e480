//! Where Skald was started from, and the environment its tool commands inherit, when a bundle
//! launcher (the AppImage's `AppRun`) changed both for the app itself.
//!
//! `AppRun` must start the app from inside the image (WebKit finds its helper processes relative
//! to that directory) and sets GTK/GIO variables that only make sense for the bundled libraries.
//! It records the user's directory in `SKALD_LAUNCH_DIR`, the variables it changed in
//! `SKALD_APPIMAGE_ENV` and their host values in `SKALD_HOST_<NAME>`. A command the agent runs
//! must see the user's machine, not the bundle: this module undoes those changes for it.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Set by `AppRun`: the directory the user launched Skald from.
pub const LAUNCH_DIR_VAR: &str = "SKALD_LAUNCH_DIR";
/// Set by `AppRun`: space-separated names of the variables it changed for the app.
pub const CHANGED_VARS_VAR: &str = "SKALD_APPIMAGE_ENV";
/// Prefix of the variables holding the host's values of the changed ones.
pub const HOST_VALUE_PREFIX: &str = "SKALD_HOST_";
/// Set by the AppImage runtime for the app; meaningless (or misleading) to other programs.
const RUNTIME_VARS: [&str; 4] = ["APPDIR", "APPIMAGE", "ARGV0", "OWD"];

/// One change to a child's environment: set `name` to the value, or remove it.
pub type EnvChange = (OsString, Option<OsString>);

/// The directory a turn's tools work in when the session names none: where the user launched
/// Skald (`SKALD_LAUNCH_DIR` when absolute and a directory), else this process's directory.
pub fn launch_dir() -> Option<PathBuf> {
    std::env::var_os(LAUNCH_DIR_VAR)
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
        .or_else(|| std::env::current_dir().ok())
}

/// The changes that give a child process the host's environment back (none outside a bundle).
/// Read once: the process environment does not change after start-up.
pub fn host_env_changes() -> &'static [EnvChange] {
    static CHANGES: OnceLock<Vec<EnvChange>> = OnceLock::new();
    CHANGES.get_or_init(|| {
        let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        changes_for(&vars)
    })
}

/// [`host_env_changes`] for a given environment.
pub fn changes_for(vars: &[(OsString, OsString)]) -> Vec<EnvChange> {
    let get = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let Some(changed) = get(CHANGED_VARS_VAR) else { return Vec::new() };
    let mut changes: Vec<EnvChange> = changed
        .to_string_lossy()
        .split_whitespace()
        .map(|name| (OsString::from(name), get(&format!("{HOST_VALUE_PREFIX}{name}"))))
        .collect();
    // The launcher's own bookkeeping goes too.
    let bookkeeping = vars
        .iter()
        .map(|(k, _)| k.as_os_str())
        .filter(|k| k.to_string_lossy().starts_with(HOST_VALUE_PREFIX))
        .chain([OsStr::new(CHANGED_VARS_VAR), OsStr::new(LAUNCH_DIR_VAR)])
        .chain(RUNTIME_VARS.iter().map(OsStr::new));
    for name in bookkeeping {
        if !changes.iter().any(|(k, _)| k == name) {
            changes.push((name.to_os_string(), None));
        }
    }
    changes
}

/// Applies [`host_env_changes`] to a command about to be spawned.
pub fn restore_host_env(cmd: &mut tokio::process::Command) {
    apply(cmd.as_std_mut(), host_env_changes());
}

/// Applies `changes` to `cmd`'s environment.
pub fn apply(cmd: &mut std::process::Command, changes: &[EnvChange]) {
    for (name, value) in changes {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    fn change(name: &str, value: Option<&str>) -> EnvChange {
        (OsString::from(name), value.map(OsString::from))
    }

    #[test]
    fn outside_a_bundle_nothing_changes() {
        let vars = env(&[("XDG_DATA_DIRS", "/usr/share"), ("APPDIR", "/mine"), ("HOME", "/h")]);
        assert!(changes_for(&vars).is_empty());
    }

    #[test]
    fn inside_the_appimage_host_values_come_back_and_bundle_variables_go() {
        let vars = env(&[
            ("SKALD_APPIMAGE_ENV", "XDG_DATA_DIRS GIO_MODULE_DIR"),
            ("XDG_DATA_DIRS", "/tmp/.mount_x/usr/share:/usr/share"),
            ("SKALD_HOST_XDG_DATA_DIRS", "/usr/share"),
            ("GIO_MODULE_DIR", "/tmp/.mount_x/usr/lib/gio/modules"),
            ("SKALD_LAUNCH_DIR", "/home/me/project"),
            ("APPIMAGE", "/home/me/Skald.AppImage"),
            ("APPDIR", "/tmp/.mount_x"),
            ("HOME", "/home/me"),
        ]);
        let changes = changes_for(&vars);
        // The host had XDG_DATA_DIRS and no GIO_MODULE_DIR.
        assert_eq!(changes[0], change("XDG_DATA_DIRS", Some("/usr/share")));
        assert_eq!(changes[1], change("GIO_MODULE_DIR", None));
        for gone in [
            "SKALD_HOST_XDG_DATA_DIRS",
            "SKALD_APPIMAGE_ENV",
            "SKALD_LAUNCH_DIR",
            "APPDIR",
            "APPIMAGE",
            "ARGV0",
            "OWD",
        ] {
            assert!(changes.contains(&change(gone, None)), "{gone} should be removed: {changes:?}");
        }
        assert!(!changes.iter().any(|(k, _)| k == "HOME"), "HOME is the host's own");
    }

    #[cfg(unix)]
    #[test]
    fn a_spawned_command_sees_the_host_environment() {
        let vars = env(&[
            ("PATH", "/usr/bin:/bin"),
            ("SKALD_APPIMAGE_ENV", "XDG_DATA_DIRS GIO_MODULE_DIR"),
            ("XDG_DATA_DIRS", "/bundle/share"),
            ("SKALD_HOST_XDG_DATA_DIRS", "/usr/share"),
            ("GIO_MODULE_DIR", "/bundle/gio"),
            ("APPIMAGE", "/home/me/Skald.AppImage"),
        ]);
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "env | sort"]).env_clear().envs(vars.iter().cloned());
        apply(&mut cmd, &changes_for(&vars));
        let out = cmd.output().expect("sh runs");
        let seen = String::from_utf8_lossy(&out.stdout);
        assert!(seen.contains("XDG_DATA_DIRS=/usr/share\n"), "{seen}");
        for gone in ["GIO_MODULE_DIR", "APPIMAGE", "SKALD_HOST_", "SKALD_APPIMAGE_ENV"] {
            assert!(!seen.contains(gone), "{gone} leaked into the command: {seen}");
        }
        assert!(seen.contains("PATH=/usr/bin:/bin"), "{seen}");
    }
}
