//! `insert_at_line`: insert text before or after a 1-based line.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::args::{Args, to_usize};
use super::text::{self, LineEnding};
use super::write_plan::{self, WritePlan};
use super::{Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names, paths};

pub(crate) struct InsertAtLine {
    def: ToolDef,
}

impl InsertAtLine {
    pub(crate) fn new() -> Self {
        Self {
            def: ToolDef {
                name: names::INSERT_AT_LINE,
                description: "Insert text before or after a line (1-based, as numbered by \
                    read_file) of an existing file. To append, use the last line with placement \
                    \"after\". The result shows the changed region.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File to change"},
                        "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
                        "content": {"type": "string", "description": "Text to insert"},
                        "placement": {
                            "type": "string",
                            "enum": ["before", "after"],
                            "description": "Insert before (default) or after the line"
                        }
                    },
                    "required": ["path", "line", "content"],
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
    let line = to_usize(a.positive("line")?);
    let insert = a.non_empty("content")?;
    let after = match a.opt_string("placement")?.unwrap_or("before") {
        "before" => false,
        "after" => true,
        _ => {
            return Err(ToolError::InvalidArguments(
                "`placement` must be \"before\" or \"after\"".into(),
            ));
        }
    };
    let path = paths::resolve_path(workdir, raw)?;
    let content = text::read_text_for_edit(&path, names::INSERT_AT_LINE)?;
    let lines = text::lines_inclusive(&content);
    let total = lines.len();
    // Inserting before line total+1 is appending; an empty file accepts line 1 either way.
    let index = if after && total > 0 { line } else { line - 1 };
    if index > total {
        return Err(ToolError::Failed(format!(
            "line {line} is past the end of {} ({total} lines); use line {} with placement \
             \"after\" to append",
            path.display(),
            total.max(1)
        )));
    }
    let eol = LineEnding::detect(&content);
    let mut block = eol.apply(insert).into_owned();
    if !block.ends_with('\n') {
        block.push_str(eol.as_str());
    }
    let mut updated = lines[..index].concat();
    if index == total && !updated.is_empty() && !updated.ends_with('\n') {
        updated.push_str(eol.as_str());
    }
    updated.push_str(&block);
    updated.push_str(&lines[index..].concat());
    let added = text::line_count(&block);
    let summary = format!(
        "Inserted {added} line{} {} line {line} of {}:\n{}",
        if added == 1 { "" } else { "s" },
        if after { "after" } else { "before" },
        path.display(),
        text::numbered_excerpt(&updated, index + 1, index + added, 2)
    );
    Ok(WritePlan { path, old: Some(content), new: updated, summary })
}

impl Tool for InsertAtLine {
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
        let line = args.get("line").map(|v| v.to_string()).unwrap_or_default();
        let detail = format!("{}:{}", label::path_arg(args), line.trim_matches('"'));
        label::label(self.def.name, &detail, full)
    }

    fn predict_write(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Option<Result<(Option<String>, String), ToolError>> {
        write_plan::predict(plan, args, ctx)
    }
}
