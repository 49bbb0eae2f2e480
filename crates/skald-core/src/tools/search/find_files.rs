//! `find_files`: the files whose path matches a glob, newest first, without asking inside the
//! working directory and the roots the session may read.

use std::cmp::Reverse;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use futures::future::BoxFuture;
use globset::{GlobBuilder, GlobMatcher};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::walk::{Scope, shown_place, target};
use crate::tools::args::{Args, to_usize};
use crate::tools::blocking::run_blocking;
use crate::tools::{
    ReadFilter, Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names,
};

const DEFAULT_RESULTS: u64 = 100;
const MAX_RESULTS: u64 = 1000;

pub(crate) struct FindFiles {
    def: ToolDef,
}

impl FindFiles {
    pub(crate) fn new() -> Self {
        Self {
            def: ToolDef {
                name: names::FIND_FILES,
                description: "Find files by name: paths matching a glob (`*.rs` matches at any \
                    depth, `src/**/*.ts` from the searched directory), newest first. Respects \
                    .gitignore, skips hidden files, never follows links. Needs no approval in \
                    the working directory.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "minLength": 1, "description": "Glob; without a `/` it matches file names at any depth"},
                        "path": {"type": "string", "description": "Directory to search (default: the working directory)"},
                        "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "description": "Most paths returned (default 100)"}
                    },
                    "required": ["pattern"],
                    "additionalProperties": false
                }),
                category: ToolCategory::Filesystem,
                read_only: true,
            },
        }
    }
}

/// The glob and what it is matched against: a bare name pattern against file names (so `*.rs`
/// finds files at any depth, as people expect), one with a `/` against the path under the root.
struct NameGlob {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl NameGlob {
    fn new(pattern: &str) -> Result<Self, ToolError> {
        let glob = GlobBuilder::new(pattern).literal_separator(true).build().map_err(|e| {
            ToolError::InvalidArguments(format!("`pattern` is not a valid glob ({e})"))
        })?;
        Ok(Self { matcher: glob.compile_matcher(), whole_path: pattern.contains('/') })
    }

    fn matches(&self, path: &Path, root: &Path) -> bool {
        if self.whole_path {
            path.strip_prefix(root).is_ok_and(|rel| self.matcher.is_match(rel))
        } else {
            path.file_name().is_some_and(|name| self.matcher.is_match(name))
        }
    }
}

fn find(
    scope: &Scope,
    pattern: &str,
    max: usize,
    filter: &ReadFilter,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let glob = NameGlob::new(pattern)?;
    if !scope.root.is_dir() {
        return Err(ToolError::Failed(format!(
            "{} is a file, not a directory; give a directory as `path`",
            scope.root.display()
        )));
    }
    let mut found: Vec<(SystemTime, String)> = Vec::new();
    for entry in scope.walker(filter, None)? {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !glob.matches(entry.path(), &scope.root)
        {
            continue;
        }
        let modified =
            entry.metadata().ok().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
        found.push((modified, scope.shown(entry.path())));
    }
    if found.is_empty() {
        return Ok(format!("No files match `{pattern}` in {}.", scope.shown_root()));
    }
    // Newest first: what was just worked on is what is most likely wanted.
    found.sort_by(|a, b| (Reverse(a.0), &a.1).cmp(&(Reverse(b.0), &b.1)));
    let total = found.len();
    let mut out: String = found.iter().take(max).map(|(_, p)| format!("{p}\n")).collect();
    if total > max {
        out.push_str(&format!(
            "[… more results: {} more files match; narrow the pattern or the path, or raise \
             `max_results`]\n",
            total - max
        ));
    } else {
        out.push_str(&format!("[{total} files, newest first]\n"));
    }
    Ok(out)
}

impl Tool for FindFiles {
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
            let pattern = a.non_empty("pattern")?.to_string();
            let max = a.opt_positive("max_results")?.unwrap_or(DEFAULT_RESULTS);
            if max > MAX_RESULTS {
                return Err(ToolError::InvalidArguments(format!(
                    "`max_results` must be between 1 and {MAX_RESULTS}"
                )));
            }
            let scope = Scope::resolve(&ctx.workdir, a.opt_string("path")?)?;
            // The walk checks the same token between entries, so the thread ends soon after.
            let (filter, cancel) = (ctx.read_filter.clone(), ctx.cancel.clone());
            let job = move || find(&scope, &pattern, to_usize(max), &filter, &cancel);
            run_blocking(&ctx.cancel, "search", job).await
        })
    }

    fn target_path(&self, args: &serde_json::Value, workdir: &Path) -> Option<PathBuf> {
        target(args, workdir)
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        let pattern = args.get("pattern").and_then(serde_json::Value::as_str).unwrap_or("");
        let place = shown_place(args);
        label::label(self.def.name, &format!("{pattern} in {place}"), full)
    }
}
