//! The files an agent's `inject_memory` names, read for its static system message.
//!
//! An entry is `$WD` followed by a path inside the session's working directory, an absolute
//! path, or a path inside the data dir's `memory/` (`notes.md`). A memory entry is shown as
//! `memory/<path>` (what `memory_write` takes); a working-dir file relative to the working dir;
//! any other absolute.

use std::path::{Path, PathBuf};

use super::{MEMORY_DIR, MemoryPath};
use crate::context::MemoryFile;
use crate::regular_file::{self, ReadError};
use crate::tools::paths;

/// Largest file injected; a larger one is named with its size instead (a memory file cannot be
/// written past `memory.max_file_bytes`, but a file the person put there or a `$WD` file can).
pub const INJECT_MAX_BYTES: u64 = 256 * 1024;

/// The memory blocks of `entries`, in their order, read now. Blocking (small files).
pub fn inject(entries: &[String], data_dir: &Path, workdir: &Path) -> Vec<MemoryFile> {
    entries
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .map(|entry| one(entry, data_dir, workdir))
        .collect()
}

fn one(entry: &str, data_dir: &Path, workdir: &Path) -> MemoryFile {
    if let Some(rest) = entry.strip_prefix("$WD") {
        let rest = rest.trim_start_matches('/');
        let path = if rest.is_empty() { workdir.to_path_buf() } else { workdir.join(rest) };
        return read(&path, shown_in_workdir(&path, workdir));
    }
    if Path::new(entry).is_absolute() {
        return read(Path::new(entry), entry.to_string());
    }
    let memory = data_dir.join(MEMORY_DIR);
    let path = match MemoryPath::parse(entry) {
        Ok(p) => p,
        Err(e) => return note(entry.to_string(), &format!("not injected: {e}")),
    };
    let shown = format!("{MEMORY_DIR}/{path}");
    let root = std::fs::canonicalize(&memory).unwrap_or(memory);
    match paths::resolve_path(&root, path.as_str()) {
        Ok(file) if paths::is_within(&file, &root) => read(&file, shown),
        Ok(_) => note(shown, "not injected: it leads out of the memory directory through a link"),
        Err(e) => note(shown, &format!("not injected: {e}")),
    }
}

fn read(file: &Path, shown: String) -> MemoryFile {
    match regular_file::read(file, Some(INJECT_MAX_BYTES)) {
        Ok(bytes) => MemoryFile { shown_path: shown, content: Some(lossy(bytes)) },
        Err(e) if e.is_not_found() => MemoryFile { shown_path: shown, content: None },
        Err(ReadError::TooLarge { len, max, .. }) => note(
            shown,
            &format!("not injected: the file is {len} bytes, more than the {max} injected"),
        ),
        Err(e) => note(shown, &format!("not injected: {}", e.reason())),
    }
}

fn note(shown: String, why: &str) -> MemoryFile {
    MemoryFile { shown_path: shown, content: Some(format!("({why})")) }
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn shown_in_workdir(path: &Path, workdir: &Path) -> String {
    let rel: Option<PathBuf> = path
        .strip_prefix(workdir)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .map(Path::to_path_buf);
    rel.unwrap_or_else(|| path.to_path_buf()).display().to_string()
}
