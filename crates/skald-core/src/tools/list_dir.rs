//! `list_dir`: the entries of a directory, optionally a few levels deep.
//!
//! Output: the listed directory on the first line, then one entry per line as a path relative
//! to it, sorted by name; directories end in `/`, files show their size, symlinks their target
//! (never followed, so link cycles cannot loop). `secrets` directories are skipped entirely, and so
//! is every entry the session's read filter hides (a deny rule or a protected place).

use std::fs;
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::args::Args;
use super::blocking::run_blocking;
use super::text::io_error;
use super::{
    ReadFilter, Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names,
    paths,
};

const MAX_DEPTH: u64 = 3;
/// Most entries one call returns.
pub(crate) const MAX_ENTRIES: usize = 1000;
/// Never listed nor entered: credentials must not reach the model by browsing.
const SKIPPED_DIR: &str = "secrets";

pub(crate) struct ListDir {
    def: ToolDef,
}

impl ListDir {
    pub(crate) fn new() -> Self {
        Self {
            def: ToolDef {
                name: names::LIST_DIR,
                description: "List a directory: entries sorted by name, directories ending in `/`, \
                    files with their size. depth 1 (default) lists direct entries, up to 3 walks \
                    subdirectories. Defaults to the working directory.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Directory (default: the working directory)"},
                        "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "description": "Levels to list (1-3, default 1)"}
                    },
                    "additionalProperties": false
                }),
                category: ToolCategory::Filesystem,
                read_only: true,
            },
        }
    }
}

struct Listing {
    lines: Vec<String>,
    truncated: bool,
    /// The session's read filter: an entry it hides is neither listed nor entered.
    filter: ReadFilter,
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

fn walk(dir: &Path, prefix: &str, depth_left: u64, out: &mut Listing) -> Result<(), ToolError> {
    let mut entries: Vec<fs::DirEntry> =
        fs::read_dir(dir).map_err(|e| io_error("list", dir, e))?.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.lines.len() >= MAX_ENTRIES {
            out.truncated = true;
            return Ok(());
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else { continue };
        if !out.filter.allows(&entry.path()) {
            continue;
        }
        if kind.is_dir() {
            if name == SKIPPED_DIR {
                continue;
            }
            out.lines.push(format!("{prefix}{name}/"));
            if depth_left > 1 {
                let child = entry.path();
                let child_prefix = format!("{prefix}{name}/");
                // An unreadable subdirectory is noted, not fatal for the whole listing.
                if let Err(e) = walk(&child, &child_prefix, depth_left - 1, out) {
                    out.lines.push(format!("{child_prefix} [{e}]"));
                }
            }
        } else if kind.is_symlink() {
            let target = fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            out.lines.push(format!("{prefix}{name} -> {target}"));
        } else {
            let size = entry.metadata().map(|m| human_size(m.len())).unwrap_or_else(|_| "?".into());
            out.lines.push(format!("{prefix}{name}  ({size})"));
        }
    }
    Ok(())
}

fn list(path: &Path, depth: u64, filter: ReadFilter) -> Result<String, ToolError> {
    let meta = fs::metadata(path).map_err(|e| io_error("list", path, e))?;
    if !meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{} is a file, not a directory; use read_file to read it",
            path.display()
        )));
    }
    let mut listing = Listing { lines: Vec::new(), truncated: false, filter };
    walk(path, "", depth, &mut listing)?;
    let mut out = format!("{}/\n", path.display().to_string().trim_end_matches('/'));
    if listing.lines.is_empty() {
        out.push_str("(empty directory)\n");
    }
    for line in &listing.lines {
        out.push_str(line);
        out.push('\n');
    }
    if listing.truncated {
        out.push_str(&format!(
            "[… truncated: showing the first {MAX_ENTRIES} entries; list a subdirectory or use a \
             smaller depth]\n"
        ));
    }
    Ok(out)
}

impl Tool for ListDir {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a = Args::new(args)?;
            let raw = a.opt_string("path")?.filter(|p| !p.is_empty()).unwrap_or(".");
            let depth = a.opt_positive("depth")?.unwrap_or(1);
            if depth > MAX_DEPTH {
                return Err(ToolError::InvalidArguments(format!(
                    "`depth` must be between 1 and {MAX_DEPTH}"
                )));
            }
            let path: PathBuf = paths::resolve_path(&ctx.workdir, raw)?;
            let filter = ctx.read_filter.clone();
            run_blocking(&ctx.cancel, "listing", move || list(&path, depth, filter)).await
        })
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        let path = label::path_arg(args);
        label::label(self.def.name, if path.is_empty() { "." } else { path }, full)
    }
}
