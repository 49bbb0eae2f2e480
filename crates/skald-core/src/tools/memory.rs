//! `memory_search` and `memory_write`: an agent's own notes in the data dir's `memory/`, through
//! the memory manager (size limit, record of each write). `memory_write` is a write tool like
//! `write_file`: the seeded `memory-write-allow` rule lets it through without asking, and
//! without that rule a person approves its diff.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::json;

use super::args::Args;
use super::{
    FileChange, Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names,
};
use crate::memory::{AgentWrite, MemoryError, MemoryManager};

impl From<MemoryError> for ToolError {
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::InvalidPath(m) => ToolError::InvalidArguments(m),
            other => ToolError::Failed(other.to_string()),
        }
    }
}

pub(crate) struct MemorySearch {
    def: ToolDef,
    memory: Arc<MemoryManager>,
}

impl MemorySearch {
    pub(crate) fn new(memory: Arc<MemoryManager>) -> Self {
        Self {
            def: ToolDef {
                name: names::MEMORY_SEARCH,
                description: "Search your long-term memory (notes kept across sessions): \
                    `query` gives matching lines, `path` one whole file, neither the file list.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string"},
                        "path": {"type": "string"}
                    },
                    "additionalProperties": false
                }),
                category: ToolCategory::Filesystem,
                read_only: true,
            },
            memory,
        }
    }
}

impl Tool for MemorySearch {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            let a = Args::new(args)?;
            if let Some(path) = a.opt_string("path")?.filter(|p| !p.trim().is_empty()) {
                let file = self.memory.read(path).await?;
                return Ok(ToolOutput::text(format!(
                    "{} ({} bytes):\n{}",
                    file.path,
                    file.content.len(),
                    file.content
                )));
            }
            let query = a.opt_string("query")?.unwrap_or("");
            Ok(ToolOutput::text(self.memory.search(query).await?))
        })
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        let detail = args
            .get("query")
            .and_then(|v| v.as_str())
            .filter(|q| !q.is_empty())
            .or_else(|| args.get("path").and_then(|v| v.as_str()))
            .unwrap_or("");
        label::label(self.def.name, detail, full)
    }
}

pub(crate) struct MemoryWrite {
    def: ToolDef,
    memory: Arc<MemoryManager>,
}

impl MemoryWrite {
    pub(crate) fn new(memory: Arc<MemoryManager>) -> Self {
        Self {
            def: ToolDef {
                name: names::MEMORY_WRITE,
                description: "Write a long-term memory note (kept across sessions; the \
                    person can review and undo it). `path` ends in .md, relative to the memory \
                    directory (`notes.md`). Files have a size limit: replace stale lines rather \
                    than piling up.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"},
                        "mode": {"type": "string", "enum": ["replace", "append"], "description": "replace (default) the whole file, or append"}
                    },
                    "required": ["path", "content"],
                    "additionalProperties": false
                }),
                category: ToolCategory::Filesystem,
                read_only: false,
            },
            memory,
        }
    }
}

/// The call's path, text and mode.
fn call_args(args: &serde_json::Value) -> Result<(&str, &str, bool), ToolError> {
    let a = Args::new(args)?;
    let path = a.non_empty("path")?;
    let content = a.string("content")?;
    let append = match a.opt_string("mode")?.map(str::trim) {
        None | Some("replace") => false,
        Some("append") => true,
        Some(other) => {
            return Err(ToolError::InvalidArguments(format!(
                "`mode` is `replace` or `append`, not `{other}`"
            )));
        }
    };
    Ok((path, content, append))
}

impl Tool for MemoryWrite {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            let (path, content, append) = call_args(args)?;
            let who = AgentWrite {
                tool_call_id: ctx.tool_call_id,
                expected: ctx.expected_target.clone(),
                approved: ctx.approved_diff.clone(),
            };
            let w = self.memory.write(path, content, append, Some(who)).await?;
            if w.edit_id.is_none() {
                return Ok(ToolOutput::text(format!(
                    "memory/{} already holds exactly that; nothing changed",
                    w.path
                )));
            }
            let text = match &w.old {
                None => format!("Created memory/{} ({} bytes)", w.path, w.new.len()),
                Some(before) => format!(
                    "Wrote memory/{} ({} bytes; it had {} bytes)",
                    w.path,
                    w.new.len(),
                    before.len()
                ),
            };
            let change = FileChange { path: w.file, old: w.old, new: w.new };
            Ok(ToolOutput { change: Some(change), ..ToolOutput::text(text) })
        })
    }

    fn target_path(&self, args: &serde_json::Value, _workdir: &Path) -> Option<PathBuf> {
        let raw = args.get("path")?.as_str()?;
        self.memory.locate(raw).ok()
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        label::label(self.def.name, label::path_arg(args), full)
    }

    fn predict_write(
        &self,
        args: &serde_json::Value,
        _ctx: &ToolContext,
    ) -> Option<Result<(Option<String>, String), ToolError>> {
        Some(call_args(args).and_then(|(path, content, append)| {
            Ok(self.memory.predict_blocking(path, content, append)?)
        }))
    }
}
