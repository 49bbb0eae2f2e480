//! `write_file`: create or overwrite a whole file.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::args::Args;
use super::text;
use super::write_plan::{self, WritePlan};
use super::{Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names, paths};
use crate::regular_file;

pub(crate) struct WriteFile {
    def: ToolDef,
}

impl WriteFile {
    pub(crate) fn new() -> Self {
        Self {
            def: ToolDef {
                name: names::WRITE_FILE,
                description: "Create a file or replace its whole content. Parent directories are \
                    created. Relative paths are resolved against the working directory. Prefer \
                    edit_file for changing part of an existing file.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File to write"},
                        "content": {"type": "string", "description": "The complete new content"}
                    },
                    "required": ["path", "content"],
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
    let content = a.string("content")?;
    let path = paths::resolve_path(workdir, raw)?;
    // Only a regular file is replaced: a directory, a FIFO or a device is refused (and reading
    // one for the diff cannot block).
    let old = match regular_file::read(&path, None) {
        // Overwriting a binary file is allowed; the diff then shows it approximately.
        Ok(bytes) => Some(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(text::refused(e, names::WRITE_FILE)),
    };
    let summary = match &old {
        None => format!("Created {} ({} bytes written)", path.display(), content.len()),
        Some(before) => format!(
            "Overwrote {} ({} bytes written; it had {} bytes)",
            path.display(),
            content.len(),
            before.len()
        ),
    };
    Ok(WritePlan { path, old, new: content.to_string(), summary })
}

impl Tool for WriteFile {
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
        label::label(self.def.name, label::path_arg(args), full)
    }

    fn predict_write(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Option<Result<(Option<String>, String), ToolError>> {
        write_plan::predict(plan, args, ctx)
    }
}
