//! The bearer token in `DIR/serve.token`: created once (owner-only), reused across restarts.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rand::RngCore;
use skald_core::regular_file::ReadError;

pub const TOKEN_FILE_NAME: &str = "serve.token";

/// 32 random bytes, hex: 64 characters.
const TOKEN_BYTES: usize = 32;
/// A token file longer than this is not ours; it is replaced unread.
const MAX_TOKEN_FILE_BYTES: u64 = 4096;

pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join(TOKEN_FILE_NAME)
}

/// Reads the token, creating the file when it is missing or does not hold a valid token.
///
/// The file is created with mode 0600; an existing file readable by others is narrowed back to
/// 0600, since anyone who can read it can drive the engine.
pub fn load_or_create(data_dir: &Path) -> io::Result<String> {
    let path = token_path(data_dir);
    // Only a regular file is read: a FIFO in its place must not hang `serve` at start.
    match skald_core::regular_file::read_to_string(&path, Some(MAX_TOKEN_FILE_BYTES)) {
        Ok(text) => {
            restrict_permissions(&path)?;
            let token = text.trim();
            if is_valid(token) {
                return Ok(token.to_string());
            }
            // A damaged file: replace it rather than serve with a guessable or empty token.
            std::fs::remove_file(&path)?;
        }
        Err(e) if e.is_not_found() => {}
        // Too long, or not UTF-8: damaged like a short token.
        Err(ReadError::TooLarge { .. }) => std::fs::remove_file(&path)?,
        Err(ReadError::Io { source, .. }) if source.kind() == io::ErrorKind::InvalidData => {
            std::fs::remove_file(&path)?;
        }
        Err(e) => return Err(io::Error::other(e.reason())),
    }
    let token = generate();
    // The mode is set at creation, so the token is never readable by others, not even briefly.
    let mut file = skald_core::data_dir::create_private_file(&path)?;
    file.write_all(token.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    Ok(token)
}

fn generate() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn is_valid(token: &str) -> bool {
    token.len() == TOKEN_BYTES * 2 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(unix)]
fn restrict_permissions(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict_permissions(_path: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn creates_once_and_reuses() {
        let tmp = tempfile::tempdir().unwrap();
        let first = load_or_create(tmp.path()).unwrap();
        assert!(is_valid(&first), "{first}");
        assert_eq!(load_or_create(tmp.path()).unwrap(), first);
    }

    #[test]
    fn replaces_a_damaged_file() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(token_path(tmp.path()), "short").unwrap();
        let token = load_or_create(tmp.path()).unwrap();
        assert!(is_valid(&token));
        assert_eq!(std::fs::read_to_string(token_path(tmp.path())).unwrap().trim(), token);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_in_place_of_the_token_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let path = token_path(tmp.path());
        assert!(std::process::Command::new("mkfifo").arg(&path).status().unwrap().success());
        let dir = tmp.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(load_or_create(&dir).map_err(|e| e.to_string()));
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
        assert_eq!(got, Err("it is a FIFO (named pipe), not a regular file".to_string()));
    }

    #[cfg(unix)]
    #[test]
    fn narrows_a_world_readable_file_to_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let path = token_path(tmp.path());
        let token = "ab".repeat(TOKEN_BYTES);
        std::fs::write(&path, &token).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(load_or_create(tmp.path()).unwrap(), token);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
