//! Atomic file writes: a temp file in the same directory, renamed over the target.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::ToolError;
use super::text::io_error;

/// Writes `content` to `path` so readers see the old or the new file, never a partial one.
/// Parent directories are created; an existing file keeps its permissions. Returns whether the
/// file was created.
pub(crate) fn write_atomic(path: &Path, content: &[u8]) -> Result<bool, ToolError> {
    let shown = path.display();
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ToolError::Failed(format!("{shown} is not a file path")));
    };
    fs::create_dir_all(dir).map_err(|e| io_error("create the directory", dir, e))?;
    let existing = match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::Failed(format!("{shown} is a directory, not a file")));
        }
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error("write", path, e)),
    };
    let before = fs::canonicalize(dir).map_err(|e| io_error("write", path, e))?;
    let (tmp_path, mut file) = create_temp(dir, &name.to_string_lossy())?;
    // The folder must still be the one it was: a link swapped in for it (or for a parent) now
    // would put the file somewhere nobody approved. The rename itself replaces a link at the
    // file's own name instead of following it.
    if fs::canonicalize(dir).ok().as_ref() != Some(&before) {
        let _ = fs::remove_file(&tmp_path);
        return Err(ToolError::Failed(format!(
            "{shown}: its folder changed while it was being written (a link was swapped in), so \
             nothing was written"
        )));
    }
    let written = (|| {
        file.write_all(content)?;
        file.sync_all()?;
        drop(file);
        if let Some(meta) = &existing {
            fs::set_permissions(&tmp_path, meta.permissions())?;
        }
        fs::rename(&tmp_path, path)
    })();
    if let Err(e) = written {
        // Best effort: a stray temp file is worse than the original error being lost.
        let _ = fs::remove_file(&tmp_path);
        return Err(io_error("write", path, e));
    }
    Ok(existing.is_none())
}

/// A new file next to the target. `create_new` makes the name collision-safe without a global
/// counter; a new file gets the process's default mode (umask applied), as a plain write would.
fn create_temp(dir: &Path, name: &str) -> Result<(PathBuf, fs::File), ToolError> {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut last_error = None;
    for attempt in 0..16u32 {
        let candidate =
            dir.join(format!(".{name}.skald-{}-{nanos}-{attempt}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => return Err(io_error("create a temporary file in", dir, e)),
        }
    }
    let e = last_error.unwrap_or_else(|| io::Error::other("no free temporary name"));
    Err(io_error("create a temporary file in", dir, e))
}
