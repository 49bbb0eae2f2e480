//! The walk both search tools share: ripgrep's defaults (`.gitignore` respected, hidden entries
//! skipped), no link followed, and the session's read filter applied to every entry.

use std::path::{Path, PathBuf};

use ignore::overrides::Override;
use ignore::{Walk, WalkBuilder};

use crate::tools::{ReadFilter, ToolError, paths};

/// Where a search runs, resolved like `read_file`'s path (links and `..` resolved first, so the
/// gate judged the place the walk starts from), and the base its results are shown relative to.
pub(super) struct Scope {
    pub root: PathBuf,
    base: PathBuf,
}

impl Scope {
    /// `raw` (default: the working directory) resolved against `workdir`; it must exist.
    pub fn resolve(workdir: &Path, raw: Option<&str>) -> Result<Self, ToolError> {
        let root = root_of(workdir, raw)?;
        if !root.exists() {
            return Err(ToolError::Failed(format!("{} does not exist", root.display())));
        }
        let base = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf());
        Ok(Self { root, base })
    }

    /// A found path as the model should quote it back: relative to the working directory when
    /// inside it, absolute otherwise.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.base) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
    }

    /// The root as results show it (`.` for the working directory itself).
    pub fn shown_root(&self) -> String {
        if self.root == self.base { ".".to_string() } else { self.shown(&self.root) }
    }

    /// The walker: sorted by name (the same results in the same order every time), links listed
    /// but never followed (a link out of the allowed roots leads nowhere), and every entry below
    /// the root passed through `filter` (a hidden directory is not entered).
    pub fn walker(
        &self,
        filter: &ReadFilter,
        overrides: Option<Override>,
    ) -> Result<Walk, ToolError> {
        if !filter.allows(&self.root) {
            return Err(ToolError::Failed(format!(
                "{} is not searched: the approval policy keeps it from the model",
                self.root.display()
            )));
        }
        let filter = filter.clone();
        let mut builder = WalkBuilder::new(&self.root);
        builder
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| filter.allows(entry.path()));
        if let Some(o) = overrides {
            builder.overrides(o);
        }
        Ok(builder.build())
    }
}

/// The resolved root a call names: its `target_path`, which the gate judges.
pub(super) fn target(args: &serde_json::Value, workdir: &Path) -> Option<PathBuf> {
    root_of(workdir, args.get("path").and_then(serde_json::Value::as_str)).ok()
}

/// The place a label names: the `path` argument as given, `.` without one.
pub(super) fn shown_place(args: &serde_json::Value) -> &str {
    let path = crate::tools::label::path_arg(args);
    if path.is_empty() { "." } else { path }
}

/// The resolved root a call names.
pub(super) fn root_of(workdir: &Path, raw: Option<&str>) -> Result<PathBuf, ToolError> {
    paths::resolve_path(workdir, raw.filter(|p| !p.is_empty()).unwrap_or("."))
}
