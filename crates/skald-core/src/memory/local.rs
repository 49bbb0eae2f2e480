//! The local memory store: Markdown files under the data dir's `memory/`. Every path is
//! resolved with links followed and must stay inside the folder; listing never follows a link.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use skald_protocol::MemoryFileInfo;

use super::{MemoryError, MemoryPath, MemoryStore};
use crate::regular_file::{self, ReadError};
use crate::tools::paths;

/// Files listed at most (a folder with more is cut off, said in the log).
const MAX_FILES: usize = 2_000;

/// Memory files in one folder.
#[derive(Debug, Clone)]
pub struct LocalMemory {
    /// The folder as configured (`<data dir>/memory`).
    dir: PathBuf,
}

impl LocalMemory {
    /// The store over `dir`, created when missing.
    pub fn new(dir: PathBuf) -> io::Result<Self> {
        fs::create_dir_all(&dir)?;
        Ok(Self { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder resolved now (it may itself be a link the person set up).
    fn root(&self) -> Result<PathBuf, MemoryError> {
        fs::create_dir_all(&self.dir)
            .and_then(|()| fs::canonicalize(&self.dir))
            .map_err(|e| MemoryError::Io(format!("cannot open {}: {e}", self.dir.display())))
    }
}

impl MemoryStore for LocalMemory {
    fn id(&self) -> &'static str {
        "local"
    }

    /// Its files reach the model through `inject_memory` and `memory_search`, not per turn.
    fn recalls_context(&self) -> bool {
        false
    }

    fn locate(&self, path: &MemoryPath) -> Result<PathBuf, MemoryError> {
        let root = self.root()?;
        let resolved = paths::resolve_path(&root, path.as_str())
            .map_err(|e| MemoryError::Outside(format!("{path}: {e}")))?;
        if !paths::is_within(&resolved, &root) || resolved == root {
            return Err(MemoryError::Outside(format!(
                "{path} leads out of the memory directory (to {}) through a link, so it is \
                 neither read nor written",
                resolved.display()
            )));
        }
        Ok(resolved)
    }

    fn list(&self) -> Result<Vec<MemoryFileInfo>, MemoryError> {
        let root = self.root()?;
        let mut out = Vec::new();
        walk(&root, "", 0, &mut out);
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn read(&self, path: &MemoryPath, max: u64) -> Result<Option<String>, MemoryError> {
        let file = self.locate(path)?;
        match regular_file::read(&file, Some(max)) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(e) if e.is_not_found() => Ok(None),
            Err(ReadError::TooLarge { len, max, .. }) => {
                Err(MemoryError::Oversized { path: path.to_string(), len, max })
            }
            Err(e) => Err(MemoryError::Io(format!("memory file {path}: {}", e.reason()))),
        }
    }

    fn write(
        &self,
        path: &MemoryPath,
        content: &str,
        expected: Option<&Path>,
    ) -> Result<PathBuf, MemoryError> {
        let file = self.locate(path)?;
        if let Some(e) = paths::moved_since_cleared(expected, Some(&file)) {
            return Err(MemoryError::Changed(e.to_string()));
        }
        crate::tools::write_atomic(&file, content.as_bytes())
            .map_err(|e| MemoryError::Io(e.to_string()))?;
        // The folder was checked before the write; a link swapped in for a parent since would
        // have made the write land elsewhere, which `write_atomic` refuses.
        Ok(file)
    }

    fn remove(&self, path: &MemoryPath) -> Result<(), MemoryError> {
        let file = self.locate(path)?;
        match fs::remove_file(&file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(MemoryError::Io(format!("cannot delete memory file {path}: {e}"))),
        }
    }

    // `query_context` stays the default (nothing): the local files reach the model through
    // `inject_memory` (static, cached) and `memory_search` (on demand); repeating an excerpt in
    // every turn's tail would pay for the same text twice and break nothing else.
}

/// Markdown files under `dir` (named `prefix…`), links and hidden entries skipped.
fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<MemoryFileInfo>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        if out.len() >= MAX_FILES {
            tracing::warn!(dir = %dir.display(), "more than {MAX_FILES} memory files; the rest are not listed");
            return;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
        if name.starts_with('.') {
            continue;
        }
        // `DirEntry::file_type` does not follow links: a link is never listed nor entered.
        let Ok(kind) = entry.file_type() else { continue };
        let rel = format!("{prefix}{name}");
        if kind.is_dir() {
            if depth < 8 {
                walk(&entry.path(), &format!("{rel}/"), depth + 1, out);
            }
        } else if kind.is_file() && MemoryPath::parse(&rel).is_ok() {
            let meta = entry.metadata().ok();
            out.push(MemoryFileInfo {
                path: rel,
                size: meta.as_ref().map_or(0, fs::Metadata::len),
                modified_at: meta.and_then(|m| m.modified().ok()).map(|t| {
                    chrono::DateTime::<chrono::Utc>::from(t)
                        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                }),
            });
        }
    }
}
