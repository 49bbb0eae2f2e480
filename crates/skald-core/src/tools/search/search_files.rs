//! `search_files`: the lines of files matching a regex or literal text, grouped by file, without
//! asking inside the working directory and the roots the session may read.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::grep::{Case, GrepRequest, grep};
use super::walk::{Scope, shown_place, target};
use crate::tools::args::{Args, to_usize};
use crate::tools::blocking::run_blocking;
use crate::tools::{Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names};

const DEFAULT_MATCHES: u64 = 100;
const MAX_MATCHES: u64 = 1000;
const MAX_CONTEXT: u64 = 10;
/// What one call may return: a third of `execute_cmd`'s cap, since a search can be repeated
/// narrower at no cost to the person.
const MAX_BYTES: usize = 32 * 1024;

pub(crate) struct SearchFiles {
    def: ToolDef,
}

impl SearchFiles {
    pub(crate) fn new() -> Self {
        let count = |what: &str| json!({"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "description": what});
        Self {
            def: ToolDef {
                name: names::SEARCH_FILES,
                description: "Search file contents like ripgrep: lines matching a regular \
                    expression (Rust regex syntax) or, with `literal`, plain text. Results are \
                    grouped by file as `path:line:text` (context lines as `path-line-text`). \
                    Respects .gitignore, skips hidden and binary files, never follows links. \
                    Use it instead of grep in a shell: it needs no approval in the working \
                    directory.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "minLength": 1, "description": "Regular expression, or plain text with `literal`"},
                        "path": {"type": "string", "description": "File or directory to search (default: the working directory)"},
                        "glob": {"type": "string", "description": "Only paths matching this glob, e.g. `*.rs` or `src/**/*.ts`; a leading `!` excludes"},
                        "literal": {"type": "boolean", "description": "Match `pattern` as plain text (default false)"},
                        "case": {"type": "string", "enum": ["smart", "sensitive", "insensitive"], "description": "smart (default): insensitive unless the pattern has an uppercase letter"},
                        "context": count("Lines shown before and after each match (default 0)"),
                        "before": count("Lines shown before each match (overrides context)"),
                        "after": count("Lines shown after each match (overrides context)"),
                        "max_matches": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES, "description": "Most matches returned (default 100)"}
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

fn parse(args: &serde_json::Value) -> Result<(Option<&str>, GrepRequest), ToolError> {
    let a = Args::new(args)?;
    let pattern = a.non_empty("pattern")?.to_string();
    let case = match a.opt_string("case")?.unwrap_or("smart") {
        "smart" => Case::Smart,
        "sensitive" => Case::Sensitive,
        "insensitive" => Case::Insensitive,
        other => {
            return Err(ToolError::InvalidArguments(format!(
                "`case` must be smart, sensitive or insensitive, not `{other}`"
            )));
        }
    };
    let lines = |key: &str| -> Result<Option<u64>, ToolError> {
        match a.opt_count(key)? {
            Some(n) if n > MAX_CONTEXT => Err(ToolError::InvalidArguments(format!(
                "`{key}` must be between 0 and {MAX_CONTEXT}"
            ))),
            n => Ok(n),
        }
    };
    let context = lines("context")?.unwrap_or(0);
    let max_matches = a.opt_positive("max_matches")?.unwrap_or(DEFAULT_MATCHES);
    if max_matches > MAX_MATCHES {
        return Err(ToolError::InvalidArguments(format!(
            "`max_matches` must be between 1 and {MAX_MATCHES}"
        )));
    }
    let request = GrepRequest {
        pattern,
        literal: a.opt_bool("literal")?.unwrap_or(false),
        case,
        glob: a.opt_string("glob")?.filter(|g| !g.is_empty()).map(str::to_string),
        before: to_usize(lines("before")?.unwrap_or(context)),
        after: to_usize(lines("after")?.unwrap_or(context)),
        max_matches: to_usize(max_matches),
        max_bytes: MAX_BYTES,
    };
    Ok((a.opt_string("path")?, request))
}

impl Tool for SearchFiles {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let (path, request) = parse(args)?;
            let scope = Scope::resolve(&ctx.workdir, path)?;
            // The walk checks the same token between files, so the thread ends soon after.
            let (filter, cancel) = (ctx.read_filter.clone(), ctx.cancel.clone());
            run_blocking(&ctx.cancel, "search", move || grep(&scope, &request, &filter, &cancel))
                .await
        })
    }

    fn target_path(&self, args: &serde_json::Value, workdir: &Path) -> Option<PathBuf> {
        target(args, workdir)
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        let text = |k: &str| args.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
        let place = shown_place(args);
        let glob = text("glob");
        let glob = if glob.is_empty() { String::new() } else { format!(" ({glob})") };
        label::label(self.def.name, &format!("/{}/ in {place}{glob}", text("pattern")), full)
    }
}
