//! The database file on disk: private to its owner, and what SQLite's failures to write it mean
//! for the person (a read-only file, folder or mount; a full disk).

use std::path::Path;

/// Target of the log lines about the data dir's files (the CLI prints them on stderr).
pub const LOG_TARGET: &str = "skald::data_dir";

/// Why the database cannot be written, as far as the person can do something about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskProblem {
    /// The file, its folder or its file system refuses writes.
    ReadOnly,
    /// No space left (or the user's quota is used up).
    Full,
}

/// SQLite's primary result codes that say so (extended codes carry them in the low byte).
const SQLITE_PERM: i64 = 3;
const SQLITE_READONLY: i64 = 8;
const SQLITE_FULL: i64 = 13;

/// The problem an error of SQLite (or of opening its files) stands for, if it is one.
pub fn problem_of(e: &sqlx::Error) -> Option<DiskProblem> {
    match e {
        sqlx::Error::Database(db) => {
            let code: i64 = db.code()?.parse().ok()?;
            match code & 0xff {
                SQLITE_READONLY | SQLITE_PERM => Some(DiskProblem::ReadOnly),
                SQLITE_FULL => Some(DiskProblem::Full),
                _ => None,
            }
        }
        sqlx::Error::Io(io) => problem_of_io(io),
        _ => None,
    }
}

/// EACCES/EPERM/EROFS and ENOSPC/EDQUOT, by kind where the standard library names them.
pub fn problem_of_io(e: &std::io::Error) -> Option<DiskProblem> {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Some(DiskProblem::ReadOnly),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Some(DiskProblem::Full),
        _ => None,
    }
}

/// Why opening the database for writing failed, found by trying what SQLite tried: SQLite's
/// own codes for this (`SQLITE_CANTOPEN`, a read-only connection it fell back to) do not say.
pub(crate) fn probe_write(path: &Path) -> Option<DiskProblem> {
    let opened = if path.exists() {
        std::fs::OpenOptions::new().read(true).write(true).open(path).map(drop)
    } else {
        // A new database is created in the folder: try a file of our own there.
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let probe = dir.join(format!(".skald-write-probe-{}", std::process::id()));
        let made = std::fs::OpenOptions::new().write(true).create_new(true).open(&probe);
        let _ = std::fs::remove_file(&probe);
        made.map(drop)
    };
    opened.err().as_ref().and_then(problem_of_io)
}

/// What a path SQLite would open is, when it is not a regular file: SQLite would open a FIFO
/// read-write and then wait on it forever for the database's header.
pub(crate) fn not_regular(path: &Path) -> Option<&'static str> {
    let kind = std::fs::metadata(path).ok()?.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Some("a device");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some("a special file")
}

/// The database and the files SQLite keeps next to it.
pub(crate) fn with_companions(path: &Path) -> [std::path::PathBuf; 3] {
    let named = |suffix: &str| std::path::PathBuf::from(format!("{}{suffix}", path.display()));
    [path.to_path_buf(), named("-wal"), named("-shm")]
}

/// The message for a database that cannot be written, naming the file and its folder.
pub(crate) fn read_only_message(path: &Path) -> String {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    format!(
        "{file} is read-only (or its folder is): Skald needs to write it; check the owner and \
         mode of both (ls -ld {dir} {file}), and that the disk is not mounted read-only",
        file = path.display(),
        dir = folder.display()
    )
}

/// Makes the database private to its owner before SQLite opens it: a new file is created 0600
/// (SQLite gives its `-wal` and `-shm` the database's mode); an existing one others can read is
/// narrowed, with a log line. Failures are left for SQLite to report when it opens the file.
#[cfg(unix)]
pub(crate) fn make_private(path: &Path) {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let created =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).is_ok();
    if created {
        return;
    }
    let mut narrowed = Vec::new();
    for file in with_companions(path) {
        let Ok(meta) = std::fs::metadata(&file) else { continue };
        let mode = meta.permissions().mode();
        if !meta.is_file() || mode & 0o077 == 0 {
            continue;
        }
        let private = std::fs::Permissions::from_mode(mode & !0o077);
        match std::fs::set_permissions(&file, private) {
            Ok(()) => narrowed.push(format!(
                "{} ({:04o} → {:04o})",
                file.display(),
                mode & 0o7777,
                mode & 0o7700
            )),
            Err(e) => tracing::warn!(
                target: LOG_TARGET,
                "{} can be read by others (mode {:04o}) and could not be made private: {e}",
                file.display(),
                mode & 0o7777
            ),
        }
    }
    if !narrowed.is_empty() {
        tracing::warn!(
            target: LOG_TARGET,
            "made the database private to you: {}",
            narrowed.join(", ")
        );
    }
}

#[cfg(not(unix))]
pub(crate) fn make_private(_path: &Path) {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn io_errors_that_the_person_can_fix_are_classified() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(problem_of_io(&denied), Some(DiskProblem::ReadOnly));
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert_eq!(problem_of_io(&full), Some(DiskProblem::Full));
        assert_eq!(problem_of_io(&std::io::Error::other("x")), None);
    }

    #[test]
    fn the_read_only_message_names_the_file_and_its_folder() {
        let msg = read_only_message(Path::new("/home/me/.local/share/Skald/skald.db"));
        assert!(
            msg.starts_with("/home/me/.local/share/Skald/skald.db is read-only (or its folder is)")
        );
        assert!(
            msg.contains("ls -ld /home/me/.local/share/Skald /home/me/.local/share/Skald/skald.db")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_new_database_is_private_and_an_old_one_is_narrowed() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("skald.db");
        make_private(&db);
        assert_eq!(mode(&db), 0o600);
        let wal = dir.path().join("skald.db-wal");
        std::fs::write(&wal, "").unwrap();
        for p in [&db, &wal] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        make_private(&db);
        assert_eq!((mode(&db), mode(&wal)), (0o600, 0o600));
        // The owner's own bits are kept: a file they made read-only stays read-only.
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
        make_private(&db);
        assert_eq!(mode(&db), 0o400);
    }
}
