//! The name of a memory file as an agent or a person gives it: a relative path of Markdown
//! file inside `memory/`, checked before anything touches the disk.

use std::fmt;
use std::path::{Component, Path};

use super::{MEMORY_DIR, MemoryError};

/// Longest path accepted, in bytes.
const MAX_PATH_BYTES: usize = 512;
/// Deepest folder nesting accepted.
const MAX_DEPTH: usize = 8;

/// A checked memory path: relative, `/`-separated, no `.`/`..`, no hidden or empty component,
/// no control character, ending in `.md`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemoryPath(String);

impl MemoryPath {
    /// Checks `raw`. A leading `memory/` (how `<memory_file>` blocks name these files) is
    /// dropped, so `memory/notes.md` and `notes.md` are the same file.
    pub fn parse(raw: &str) -> Result<Self, MemoryError> {
        let bad = |why: &str| {
            MemoryError::InvalidPath(format!(
                "`{}` is not a memory file path: {why}. Use a relative path inside the memory \
                 directory ending in .md, such as `notes.md` or `projects/skald.md`.",
                raw.escape_debug()
            ))
        };
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(bad("it is empty"));
        }
        if trimmed.len() > MAX_PATH_BYTES {
            return Err(bad("it is too long"));
        }
        if trimmed.chars().any(char::is_control) {
            return Err(bad("it contains a control character"));
        }
        if trimmed.contains('\\') {
            return Err(bad("use `/` between folders"));
        }
        if Path::new(trimmed).is_absolute() || trimmed.starts_with('~') {
            return Err(bad("absolute paths are not accepted"));
        }
        let rel = trimmed.strip_prefix(&format!("{MEMORY_DIR}/")).unwrap_or(trimmed);
        let mut parts = Vec::new();
        for c in Path::new(rel).components() {
            match c {
                Component::Normal(name) => {
                    let name = name.to_str().ok_or_else(|| bad("it is not valid UTF-8"))?;
                    if name.starts_with('.') {
                        return Err(bad("hidden names (starting with `.`) are not accepted"));
                    }
                    parts.push(name);
                }
                Component::ParentDir => return Err(bad("`..` is not accepted")),
                Component::CurDir => return Err(bad("`.` components are not accepted")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(bad("absolute paths are not accepted"));
                }
            }
        }
        if rel.split('/').any(str::is_empty) {
            return Err(bad("it has an empty folder name"));
        }
        if parts.len() > MAX_DEPTH {
            return Err(bad("it is nested too deeply"));
        }
        let joined = parts.join("/");
        if !joined.ends_with(".md") || joined.ends_with("/.md") || joined == ".md" {
            return Err(bad("memory files are Markdown files ending in .md"));
        }
        Ok(Self(joined))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MemoryPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn plain_and_nested_paths_are_accepted_and_memory_prefix_is_dropped() {
        assert_eq!(MemoryPath::parse("notes.md").unwrap().as_str(), "notes.md");
        assert_eq!(MemoryPath::parse("a/b.md").unwrap().as_str(), "a/b.md");
        assert_eq!(MemoryPath::parse("memory/a/b.md").unwrap().as_str(), "a/b.md");
    }

    #[test]
    fn hostile_paths_are_refused() {
        for raw in [
            "",
            "../config.yml",
            "a/../../x.md",
            "/etc/passwd.md",
            "~/x.md",
            "./x.md",
            "a//b.md",
            ".hidden.md",
            "a/.git/x.md",
            "x\u{1b}[31m.md",
            "x\0.md",
            "a\\b.md",
            "notes.txt",
            "dir/",
            "memory/",
            &"a/".repeat(9).replace("a/a/a/a/a/a/a/a/a/", "a/a/a/a/a/a/a/a/a/x.md"),
            &"x".repeat(600),
        ] {
            assert!(
                matches!(MemoryPath::parse(raw), Err(MemoryError::InvalidPath(_))),
                "accepted {raw:?}"
            );
        }
    }
}
