//! Where Skald keeps its files (`--data-dir`, then `SKALD_DATA_DIR`, then the OS data dir) and
//! keeping that folder private to the user: it holds every conversation, the serve token and the
//! configuration.

use std::io;
use std::path::{Path, PathBuf};

use crate::config;

/// Environment variable naming the data dir.
pub const DATA_DIR_ENV: &str = "SKALD_DATA_DIR";

/// Target of the log lines about the data dir's state (the CLI prints them on stderr).
pub const LOG_TARGET: &str = skald_store::db_file::LOG_TARGET;

/// Resolves the data dir without creating it.
pub fn resolve(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit
        .or_else(|| std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from))
        .or_else(|| dirs::data_dir().map(|d| d.join("Skald")))
}

/// Creates the data dir (mode 0700 on Unix) and the commented `config.yml` (0600) when missing.
/// A data dir others can read is narrowed to its owner: silently when it holds no database yet,
/// with a log line when it does (an install from before this was done).
pub(crate) fn prepare(dir: &Path) -> io::Result<()> {
    let created = create_private_dir(dir)?;
    if !created {
        narrow(dir)?;
    }
    let cfg = dir.join(config::CONFIG_FILE_NAME);
    // `symlink_metadata`: a dangling link (a config kept elsewhere) is the person's, not missing.
    if std::fs::symlink_metadata(&cfg).is_err() {
        match create_private_file(&cfg) {
            Ok(mut file) => {
                io::Write::write_all(&mut file, config::default_config_text().as_bytes())?
            }
            // Another process wrote it first.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Creates `dir` (its parents with the default mode); whether it was created.
fn create_private_dir(dir: &Path) -> io::Result<bool> {
    if dir.is_dir() {
        return Ok(false);
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(false),
        Err(e) => Err(e),
    }
}

/// A new file only its owner can read and write (on Unix; elsewhere the profile folder's ACL
/// is what keeps it private).
pub fn create_private_file(path: &Path) -> io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}

/// Files whose presence says a folder is a Skald data dir (narrowing it is then ours to do).
#[cfg(unix)]
const OURS: &[&str] = &[config::CONFIG_FILE_NAME, skald_store::DB_FILE_NAME];

/// Takes group and other permissions off an existing data dir. Only a folder that is clearly a
/// Skald data dir (empty, or holding its config or database) and not a shared one (sticky, like
/// `/tmp`; the home folder; a file system root) is touched.
#[cfg(unix)]
fn narrow(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 == 0 {
        return Ok(());
    }
    let shown = dir.display();
    let ours = OURS.iter().any(|f| dir.join(f).exists());
    // With a database, the folder holds conversations: narrowing it is news worth a line.
    let installed = dir.join(skald_store::DB_FILE_NAME).exists();
    let empty = std::fs::read_dir(dir)?.next().is_none();
    let shared = mode & 0o1000 != 0
        || dir.parent().is_none()
        || dirs::home_dir().is_some_and(|home| same_dir(&home, dir));
    if shared || !(ours || empty) {
        tracing::warn!(
            target: LOG_TARGET,
            "the data dir {shown} can be read by others (mode {:04o}) but does not look like \
             Skald's own folder, so its mode was left as it is; use a folder of its own",
            mode & 0o7777
        );
        return Ok(());
    }
    let narrowed = mode & !0o077;
    if let Err(e) = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(narrowed)) {
        // A read-only mount, a folder of another user: say so, and still open what is there.
        tracing::warn!(
            target: LOG_TARGET,
            "the data dir {shown} can be read by others (mode {:04o}) and could not be made \
             private: {e}",
            mode & 0o7777
        );
        return Ok(());
    }
    if installed {
        tracing::warn!(
            target: LOG_TARGET,
            "made the data dir {shown} private to you (mode {:04o} → {:04o}): it holds your \
             conversations",
            mode & 0o7777,
            narrowed & 0o7777
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn narrow(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_new_data_dir_and_its_config_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        set_mode(tmp.path(), 0o755);
        let dir = tmp.path().join("a/b/Skald");
        prepare(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("config.yml")), 0o600);
        // Parents are ordinary folders.
        assert_eq!(mode(&tmp.path().join("a")) & 0o700, 0o700);
        assert_eq!(
            std::fs::read_to_string(dir.join("config.yml")).unwrap(),
            config::default_config_text()
        );
    }

    #[test]
    fn an_existing_install_open_to_others_is_narrowed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("Skald");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("skald.db"), "").unwrap();
        set_mode(&dir, 0o755);
        prepare(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        // An empty folder made for Skald is narrowed too.
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        set_mode(&empty, 0o775);
        prepare(&empty).unwrap();
        assert_eq!(mode(&empty), 0o700);
    }

    #[test]
    fn a_folder_that_is_not_skalds_own_keeps_its_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir(&project).unwrap();
        std::fs::write(project.join("README"), "mine").unwrap();
        set_mode(&project, 0o755);
        prepare(&project).unwrap();
        assert_eq!(mode(&project), 0o755);
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        set_mode(&shared, 0o1777);
        prepare(&shared).unwrap();
        assert_eq!(mode(&shared), 0o1777);
    }

    #[test]
    fn a_config_kept_elsewhere_through_a_link_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("Skald");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("dotfiles/config.yml"), dir.join("config.yml"))
            .unwrap();
        prepare(&dir).unwrap();
        assert!(std::fs::symlink_metadata(dir.join("config.yml")).unwrap().is_symlink());
    }
}
