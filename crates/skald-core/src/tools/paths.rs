//! Path resolution for tool arguments: workdir-relative, `..` and symlinks resolved before checks.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// Same bound as Linux's ELOOP limit; a cycle of links fails instead of recursing forever.
const MAX_SYMLINK_HOPS: usize = 40;

/// Resolve a user/model-given path against `workdir`, then canonicalise: `..` and symlinks of the
/// longest existing ancestor are resolved, the non-existing tail appended lexically (no `..` left).
///
/// A dangling symlink is followed too (its target is resolved the same way), so a write through
/// it cannot land outside the path a policy check saw.
pub fn resolve_path(workdir: &Path, raw: &str) -> Result<PathBuf, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::InvalidArguments("`path` must not be empty".into()));
    }
    if raw.contains('\0') {
        return Err(ToolError::InvalidArguments("`path` must not contain a NUL byte".into()));
    }
    let given = Path::new(raw);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else if workdir.is_absolute() {
        workdir.join(given)
    } else {
        return Err(ToolError::Failed(format!(
            "the working directory {} is not an absolute path",
            workdir.display()
        )));
    };
    let mut hops = 0;
    resolve_absolute(&joined, &mut hops)
}

/// Walks component by component so that `..` applies to the already-resolved prefix (as the
/// kernel does), not to the lexical text before a symlink.
fn resolve_absolute(path: &Path, hops: &mut usize) -> Result<PathBuf, ToolError> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                // `out` never contains a symlink, so popping is the true parent.
                out.pop();
            }
            Component::Normal(name) => {
                let candidate = out.join(name);
                let is_link = fs::symlink_metadata(&candidate)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
                if !is_link {
                    out = candidate;
                    continue;
                }
                *hops += 1;
                if *hops > MAX_SYMLINK_HOPS {
                    return Err(ToolError::Failed(format!(
                        "too many levels of symbolic links while resolving {}",
                        path.display()
                    )));
                }
                let target = fs::read_link(&candidate).map_err(|e| {
                    ToolError::Failed(format!("cannot read the link {}: {e}", candidate.display()))
                })?;
                let next = if target.is_absolute() { target } else { out.join(target) };
                out = resolve_absolute(&next, hops)?;
            }
        }
    }
    Ok(out)
}

/// The error for a call whose path no longer resolves where it did when it was judged: a link
/// was planted (or moved) in between, and following it would act on a place nobody cleared.
pub fn moved_since_cleared(cleared: Option<&Path>, now: Option<&Path>) -> Option<ToolError> {
    let cleared = cleared?;
    if now == Some(cleared) {
        return None;
    }
    let now = now.map_or_else(|| "nowhere".to_string(), |p| p.display().to_string());
    Some(ToolError::Failed(format!(
        "{} now resolves to {now} (a link changed after this call was cleared), so nothing was \
         done. Check the path and call again.",
        cleared.display()
    )))
}

/// Component-wise prefix test on canonical paths (`/a/b` is inside `/a`, `/a-b` is not).
pub fn is_within(path: &Path, root: &Path) -> bool {
    // `Path::starts_with` compares whole components, never string prefixes.
    path.starts_with(root)
}

/// The resolved `path` argument of a single-file tool (its `target_path`).
pub(crate) fn resolve_path_arg(args: &serde_json::Value, workdir: &Path) -> Option<PathBuf> {
    let raw = args.get("path")?.as_str()?;
    resolve_path(workdir, raw).ok()
}
