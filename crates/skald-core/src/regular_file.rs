//! Reading a file whose path a model, a working directory or the data dir can choose: only a
//! regular file is read, and opening never blocks (a FIFO, a terminal or a device is refused).
//!
//! The path is checked before it is opened (so a device is never even opened), then opened
//! with `O_NONBLOCK | O_NOCTTY` and checked again on the opened handle: a path swapped for a FIFO
//! between the two cannot block the open, and what is read is what was checked.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// What a path that is not a regular file turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRegular {
    Directory,
    Fifo,
    CharDevice,
    BlockDevice,
    Socket,
    /// Seen only where links are not followed ([`read_unlinked`]).
    Symlink,
    Other,
}

impl NotRegular {
    /// `None` for a regular file.
    fn of(meta: &Metadata) -> Option<Self> {
        let kind = meta.file_type();
        if kind.is_file() {
            return None;
        }
        if kind.is_dir() {
            return Some(Self::Directory);
        }
        if kind.is_symlink() {
            return Some(Self::Symlink);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_fifo() {
                return Some(Self::Fifo);
            }
            if kind.is_char_device() {
                return Some(Self::CharDevice);
            }
            if kind.is_block_device() {
                return Some(Self::BlockDevice);
            }
            if kind.is_socket() {
                return Some(Self::Socket);
            }
        }
        Some(Self::Other)
    }

    /// The kind with its article: "a FIFO (named pipe)".
    pub fn describe(self) -> &'static str {
        match self {
            Self::Directory => "a directory",
            Self::Fifo => "a FIFO (named pipe)",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Socket => "a socket",
            Self::Symlink => "a symbolic link",
            Self::Other => "a special file",
        }
    }
}

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{} is {}, not a regular file", path.display(), kind.describe())]
    NotRegular { path: PathBuf, kind: NotRegular },
    /// Larger than the caller's cap (`len` is at least `max + 1` when the file grew while read).
    #[error("{} is {len} bytes, more than the {max} read here", path.display())]
    TooLarge { path: PathBuf, len: u64, max: u64 },
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl ReadError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// The reason without the path, for messages that name the path already.
    pub fn reason(&self) -> String {
        match self {
            Self::NotRegular { kind, .. } => {
                format!("it is {}, not a regular file", kind.describe())
            }
            Self::TooLarge { len, max, .. } => format!("it is {len} bytes, more than {max}"),
            Self::Io { source, .. } => source.to_string(),
        }
    }
}

/// Opens `path` for reading if it is a regular file (symlinks followed), with its metadata as
/// opened.
pub fn open(path: &Path) -> Result<(File, Metadata), ReadError> {
    open_checked(path, true)
}

/// [`open`], with `follow` false refusing `path` when it is itself a symbolic link (checked on
/// the name, and again by the open itself with `O_NOFOLLOW`).
fn open_checked(path: &Path, follow: bool) -> Result<(File, Metadata), ReadError> {
    let io = |source| ReadError::Io { path: path.to_path_buf(), source };
    let refuse = |kind| ReadError::NotRegular { path: path.to_path_buf(), kind };
    let before = if follow { std::fs::metadata(path) } else { std::fs::symlink_metadata(path) }
        .map_err(io)?;
    if let Some(kind) = NotRegular::of(&before) {
        return Err(refuse(kind));
    }
    let file = match open_nonblocking(path, follow) {
        Ok(file) => file,
        // A link put in its place after the check: O_NOFOLLOW fails with ELOOP.
        #[cfg(unix)]
        Err(e) if !follow && e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(refuse(NotRegular::Symlink));
        }
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if let Some(kind) = NotRegular::of(&meta) {
        return Err(refuse(kind));
    }
    blocking_again(&file).map_err(io)?;
    Ok((file, meta))
}

/// The whole file, refused unread when it is larger than `max` (when given) and cut off with
/// the same error if it grows past `max` while read.
pub fn read(path: &Path, max: Option<u64>) -> Result<Vec<u8>, ReadError> {
    read_opened(path, open(path)?, max)
}

/// [`read`] without following a symbolic link at `path` itself: a link is refused (its
/// directories are trusted; the caller checks them).
pub fn read_unlinked(path: &Path, max: Option<u64>) -> Result<Vec<u8>, ReadError> {
    read_opened(path, open_checked(path, false)?, max)
}

fn read_opened(
    path: &Path,
    (file, meta): (File, Metadata),
    max: Option<u64>,
) -> Result<Vec<u8>, ReadError> {
    let too_large =
        |len| ReadError::TooLarge { path: path.to_path_buf(), len, max: max.unwrap_or(0) };
    if let Some(max) = max
        && meta.len() > max
    {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    let limit = max.map_or(u64::MAX, |m| m.saturating_add(1));
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io { path: path.to_path_buf(), source })?;
    if max.is_some_and(|m| bytes.len() as u64 > m) {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text; invalid UTF-8 is an `InvalidData` error.
pub fn read_to_string(path: &Path, max: Option<u64>) -> Result<String, ReadError> {
    String::from_utf8(read(path, max)?).map_err(|_| ReadError::Io {
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"),
    })
}

/// `O_NONBLOCK`: opening a FIFO without a writer (or a device that waits) returns at once, so
/// the check on the opened handle runs. `O_NOCTTY`: a terminal never becomes ours.
/// `O_NOFOLLOW` when `follow` is false: a link at `path` fails the open.
#[cfg(unix)]
fn open_nonblocking(path: &Path, follow: bool) -> io::Result<File> {
    use nix::fcntl::OFlag;
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    if !follow {
        flags |= OFlag::O_NOFOLLOW;
    }
    std::fs::OpenOptions::new().read(true).custom_flags(flags.bits()).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path, _follow: bool) -> io::Result<File> {
    File::open(path)
}

/// A regular file reads the same either way, but a network or FUSE file system may honour
/// `O_NONBLOCK` with spurious `EAGAIN`s; the reads themselves are plain blocking reads.
#[cfg(unix)]
fn blocking_again(file: &File) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))?;
    Ok(())
}

#[cfg(not(unix))]
fn blocking_again(_file: &File) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn reads_a_regular_file_and_through_a_link_to_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "hello\n").unwrap();
        assert_eq!(read_to_string(&file, None).unwrap(), "hello\n");
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert_eq!(read_to_string(&link, Some(6)).unwrap(), "hello\n");
        }
    }

    #[cfg(unix)]
    #[test]
    fn read_unlinked_refuses_a_link_and_reads_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "hello\n").unwrap();
        assert_eq!(read_unlinked(&file, Some(6)).unwrap(), b"hello\n");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let err = read_unlinked(&link, None).unwrap_err();
        assert!(matches!(err, ReadError::NotRegular { kind: NotRegular::Symlink, .. }), "{err}");
        assert_eq!(err.reason(), "it is a symbolic link, not a regular file");
    }

    #[test]
    fn a_directory_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(dir.path(), None).unwrap_err();
        assert!(matches!(err, ReadError::NotRegular { kind: NotRegular::Directory, .. }));
        assert_eq!(
            err.to_string(),
            format!("{} is a directory, not a regular file", dir.path().display())
        );
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(&dir.path().join("gone"), None).unwrap_err();
        assert!(err.is_not_found(), "{err}");
    }

    #[test]
    fn a_file_over_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big");
        std::fs::write(&file, "0123456789").unwrap();
        let err = read(&file, Some(9)).unwrap_err();
        assert!(matches!(err, ReadError::TooLarge { len: 10, max: 9, .. }), "{err}");
        assert_eq!(read(&file, Some(10)).unwrap().len(), 10);
    }

    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
        assert!(status.success());
    }

    /// Runs `f` on another thread and fails the test if it blocks: the bug is a hang.
    #[cfg(unix)]
    fn within_a_second<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(5)).expect("the read blocked")
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        mkfifo(&fifo);
        let path = fifo.clone();
        let err = within_a_second(move || read(&path, None).unwrap_err());
        assert!(matches!(err, ReadError::NotRegular { kind: NotRegular::Fifo, .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!("{} is a FIFO (named pipe), not a regular file", fifo.display())
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        mkfifo(&fifo);
        let link = dir.path().join("notes.txt");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let err = within_a_second(move || read(&link, None).unwrap_err());
        assert!(matches!(err, ReadError::NotRegular { kind: NotRegular::Fifo, .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_character_device_is_refused() {
        // /dev/zero never ends: reading it would fill memory, not block.
        let err = within_a_second(|| read(Path::new("/dev/zero"), None).unwrap_err());
        assert!(matches!(err, ReadError::NotRegular { kind: NotRegular::CharDevice, .. }), "{err}");
        assert_eq!(err.reason(), "it is a character device, not a regular file");
    }

    #[cfg(unix)]
    #[test]
    fn a_socket_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let err = read(&path, None).unwrap_err();
        assert!(matches!(err, ReadError::NotRegular { kind: NotRegular::Socket, .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn the_opened_file_reads_normally_after_the_nonblocking_open() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x".repeat(100_000)).unwrap();
        let (mut f, meta) = open(&file).unwrap();
        assert_eq!(meta.len(), 100_000);
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        assert_eq!(s.len(), 100_000);
    }
}
