//! `replace_lines`: replace an inclusive 1-based line range with new text.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::args::{Args, to_usize};
use super::text::{self, LineEnding};
use super::write_plan::{self, WritePlan};
use super::{Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names, paths};

pub(crate) struct ReplaceLines {
    def: ToolDef,
}

impl ReplaceLines {
    pub(crate) fn new() -> Self {
        Self {
            def: ToolDef {
                name: names::REPLACE_LINES,
                description: "Replace lines from_line..=to_line (1-based, inclusive, as numbered \
                    by read_file) of an existing file with `new`. An empty `new` deletes the \
                    lines. The result shows the changed region.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File to change"},
                        "from_line": {"type": "integer", "minimum": 1},
                        "to_line": {"type": "integer", "minimum": 1, "description": "Inclusive"},
                        "new": {"type": "string", "description": "Replacement text"}
                    },
                    "required": ["path", "from_line", "to_line", "new"],
                    "additionalProperties": false
                }),
                category: ToolCategory::Filesystem,
                read_only: false,
            },
        }
    }
}

fn plan(args: &serde_json::Value, workdir: &Path) -> Result<WritePlan, ToolError> {
    let a = Args::new(args)?;
    let raw = a.non_empty("path")?;
    let from = to_usize(a.positive("from_line")?);
    let to = to_usize(a.positive("to_line")?);
    let replacement = a.string("new")?;
    if to < from {
        return Err(ToolError::InvalidArguments(format!(
            "`to_line` ({to}) is before `from_line` ({from})"
        )));
    }
    let path = paths::resolve_path(workdir, raw)?;
    let content = text::read_text_for_edit(&path, names::REPLACE_LINES)?;
    let lines = text::lines_inclusive(&content);
    let total = lines.len();
    if to > total {
        return Err(ToolError::Failed(format!(
            "`to_line` {to} is past the end of {} ({total} lines)",
            path.display()
        )));
    }
    let eol = LineEnding::detect(&content);
    let mut block = eol.apply(replacement).into_owned();
    // Keep the line structure: the replaced range ended with a newline unless it was the
    // file's unterminated last line.
    if !block.is_empty() && !block.ends_with('\n') && lines[to - 1].ends_with('\n') {
        block.push_str(eol.as_str());
    }
    let mut updated = lines[..from - 1].concat();
    updated.push_str(&block);
    updated.push_str(&lines[to..].concat());
    let added = text::line_count(&block);
    let removed = to - from + 1;
    let excerpt = text::numbered_excerpt(&updated, from, (from + added).saturating_sub(1), 2);
    let summary = format!(
        "Replaced lines {from}-{to} of {} ({removed} removed, {added} inserted):\n{excerpt}",
        path.display()
    );
    Ok(WritePlan { path, old: Some(content), new: updated, summary })
}

impl Tool for ReplaceLines {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(write_plan::run(plan, args, ctx))
    }

    fn target_path(&self, args: &serde_json::Value, workdir: &Path) -> Option<PathBuf> {
        paths::resolve_path_arg(args, workdir)
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        let n = |k: &str| args.get(k).map(|v| v.to_string().trim_matches('"').to_string());
        let range = match (n("from_line"), n("to_line")) {
            (Some(f), Some(t)) => format!(":{f}-{t}"),
            _ => String::new(),
        };
        label::label(self.def.name, &format!("{}{range}", label::path_arg(args)), full)
    }

    fn predict_write(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Option<Result<(Option<String>, String), ToolError>> {
        write_plan::predict(plan, args, ctx)
    }
}
