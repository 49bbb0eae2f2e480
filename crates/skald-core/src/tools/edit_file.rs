//! `edit_file`: replace an exact text snippet (unique unless `replace_all`).

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::args::Args;
use super::text::{self, LineEnding};
use super::write_plan::{self, WritePlan};
use super::{Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names, paths};

pub(crate) struct EditFile {
    def: ToolDef,
}

impl EditFile {
    pub(crate) fn new() -> Self {
        Self {
            def: ToolDef {
                name: names::EDIT_FILE,
                description: "Replace the exact text `old` with `new` in a file. `old` must occur \
                    exactly once (include surrounding lines to make it unique) unless \
                    replace_all is true. Whitespace matters. A file's CRLF line endings are kept.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File to edit"},
                        "old": {"type": "string", "description": "Exact text to find"},
                        "new": {"type": "string", "description": "Replacement text"},
                        "replace_all": {
                            "type": "boolean",
                            "description": "Replace every occurrence (default false)"
                        }
                    },
                    "required": ["path", "old", "new"],
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
    let old = a.string("old")?;
    let new = a.string("new")?;
    let replace_all = a.opt_bool("replace_all")?.unwrap_or(false);
    if old.is_empty() {
        return Err(ToolError::InvalidArguments(
            "`old` must not be empty; use insert_at_line or write_file to add text".into(),
        ));
    }
    if old == new {
        return Err(ToolError::InvalidArguments(
            "`old` and `new` are identical; the edit would change nothing".into(),
        ));
    }
    let path = paths::resolve_path(workdir, raw)?;
    let content = text::read_text_for_edit(&path, names::EDIT_FILE)?;
    let eol = LineEnding::detect(&content);
    let (mut find, mut put) = (eol.apply(old), eol.apply(new));
    let mut count = content.matches(find.as_ref()).count();
    if count == 0 && find.as_ref() != old {
        // A file with mixed endings may hold the snippet with plain `\n`.
        (find, put) = (old.into(), new.into());
        count = content.matches(old).count();
    }
    let shown = path.display();
    let updated = match count {
        0 => {
            return Err(ToolError::Failed(format!(
                "`old` was not found in {shown}; read the file again and copy the exact text \
                 (whitespace and indentation matter)"
            )));
        }
        1 => content.replacen(find.as_ref(), &put, 1),
        _ if replace_all => content.replace(find.as_ref(), &put),
        n => {
            return Err(ToolError::Failed(format!(
                "`old` occurs {n} times in {shown}; include more surrounding text to make it \
                 unique, or set replace_all to true"
            )));
        }
    };
    let summary =
        format!("Edited {shown}: replaced {count} occurrence{}", if count == 1 { "" } else { "s" });
    Ok(WritePlan { path, old: Some(content), new: updated, summary })
}

impl Tool for EditFile {
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
