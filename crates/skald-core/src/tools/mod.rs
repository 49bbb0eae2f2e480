//! The built-in tools the model can call (files and shell) and the contract every tool implements.

mod args;
mod atomic;
mod blocking;
mod capture;
mod edit_file;
mod execute_cmd;
mod insert_at_line;
mod label;
mod list_dir;
mod memory;
pub mod names;
pub mod paths;
mod proc_stat;
mod process_group;
pub mod process_registry;
mod read_file;
mod read_filter;
mod registry;
mod replace_lines;
mod schema_check;
mod search;
mod spawner;
mod text;
mod write_file;
mod write_plan;

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

pub(crate) use atomic::write_atomic;
pub(crate) use label::interface_label;
pub use process_registry::ProcessRegistry;
pub use read_filter::ReadFilter;
pub use registry::ToolRegistry;
pub use schema_check::{ArgsError, parse_args};

/// Access-control grouping of a tool (approval rules and agent grants refer to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCategory {
    Filesystem,
    Shell,
    Session,
}

impl ToolCategory {
    /// The name stored in rows and shown on the wire (`filesystem`, `shell`, `session`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Filesystem => "filesystem",
            Self::Shell => "shell",
            Self::Session => "session",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Filesystem, Self::Shell, Self::Session].into_iter().find(|c| c.as_str() == name)
    }
}

/// What the model is offered for one tool, plus the flags the loop and policy need.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments (always an object schema).
    pub parameters: serde_json::Value,
    pub category: ToolCategory,
    /// Safe to re-run after a crash (no side effects).
    pub read_only: bool,
}

impl ToolDef {
    /// The OpenAI function-calling shape: `{"type":"function","function":{name,description,parameters}}`.
    pub fn to_openai(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// Limits the tools enforce so one call cannot flood the context or run forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// Cap of `execute_cmd` output (head and tail kept).
    pub max_output_bytes: usize,
    /// Cap of the text `read_file` returns in one call.
    pub max_read_bytes: usize,
    pub default_cmd_timeout_secs: u64,
    pub max_cmd_timeout_secs: u64,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            max_output_bytes: 100 * 1024,
            max_read_bytes: 2 * 1024 * 1024,
            default_cmd_timeout_secs: 120,
            max_cmd_timeout_secs: 600,
        }
    }
}

/// Everything one invocation may use: where relative paths point, and when to stop.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Absolute; relative path arguments and `execute_cmd` resolve against it.
    pub workdir: PathBuf,
    /// The turn's token: when it fires, the tool returns `Err(Cancelled)` promptly.
    pub cancel: CancellationToken,
    pub limits: ToolLimits,
    /// For a write a human approved: the diff they were shown. The write goes ahead only if the
    /// change it is about to make is still exactly that diff.
    pub approved_diff: Option<skald_protocol::FileDiff>,
    /// The resolved path the gate or the human cleared: a write lands there or nowhere (a link
    /// planted since would move it).
    pub expected_target: Option<PathBuf>,
    /// The recorded call this invocation runs, if any (kept with the processes it starts).
    pub tool_call_id: Option<i64>,
    /// What the search tools may show of the trees they walk (the engine sets the session's).
    pub read_filter: ReadFilter,
}

impl ToolContext {
    /// A context with the default limits.
    pub fn new(workdir: impl Into<PathBuf>, cancel: CancellationToken) -> Self {
        Self {
            workdir: workdir.into(),
            cancel,
            limits: ToolLimits::default(),
            approved_diff: None,
            expected_target: None,
            tool_call_id: None,
            read_filter: ReadFilter::everything(),
        }
    }

    /// The same context for a write the human approved as `diff`.
    pub fn with_approved_diff(mut self, diff: Option<skald_protocol::FileDiff>) -> Self {
        self.approved_diff = diff;
        self
    }

    /// The same context for a call cleared to act on `target` (resolved).
    pub fn with_expected_target(mut self, target: Option<PathBuf>) -> Self {
        self.expected_target = target;
        self
    }

    /// The same context with the paths a walk may show limited by `filter`.
    pub fn with_read_filter(mut self, filter: ReadFilter) -> Self {
        self.read_filter = filter;
        self
    }

    /// The same context for the recorded call `id`.
    pub fn for_call(mut self, id: i64) -> Self {
        self.tool_call_id = Some(id);
        self
    }
}

/// The result text handed back to the model, and the file a write tool changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub text: String,
    /// Set by write tools so the loop can record the change and report `file_changed`.
    pub change: Option<FileChange>,
    /// The media and links an MCP call returned (already recorded with the call), for the
    /// event that ends it.
    pub media: skald_protocol::ToolResultMedia,
    /// The tool ran and says it failed (an MCP result with `isError`): `text` is its error,
    /// and the call ends failed with its media.
    pub failed: bool,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), change: None, media: Default::default(), failed: false }
    }

    /// The file the call changed, if any.
    pub fn changed_path(&self) -> Option<&Path> {
        self.change.as_ref().map(|c| c.path.as_path())
    }
}

/// A file a write tool changed: its path and its content before (None = it did not exist) and
/// after, as the tool wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub old: Option<String>,
    pub new: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The model can correct the call and try again.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error("{0}")]
    Failed(String),
    #[error("cancelled")]
    Cancelled,
}

/// Checks a call's arguments against its tool's JSON Schema (a built-in's `parameters`, an MCP
/// tool's `inputSchema`) before it is gated: a call that cannot run is answered to the model at
/// once instead of waiting for a human or reaching a server.
pub fn check_args(schema: &serde_json::Value, args: &serde_json::Value) -> Result<(), ArgsError> {
    schema_check::check(schema, args)
}

/// One tool. Implementations are stateless; all per-call state lives in `args` and the context.
pub trait Tool: Send + Sync {
    fn def(&self) -> &ToolDef;

    /// Runs one invocation; returns `Err(Cancelled)` promptly when `ctx.cancel` fires and leaves no
    /// work running (a child process is killed; dropping the future kills it too).
    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// The file the call acts on, resolved against the workdir (for labels, policy and diffs).
    fn target_path(&self, _args: &serde_json::Value, _workdir: &Path) -> Option<PathBuf> {
        None
    }

    /// UI label: short (<= 60 chars) or full (<= 120 chars), cut on a char boundary with '…'.
    fn describe(&self, args: &serde_json::Value, full: bool) -> String;

    /// For write tools: (current content, or None when the file does not exist; predicted new
    /// content), computed without writing. Errors when the edit would fail.
    fn predict_write(
        &self,
        _args: &serde_json::Value,
        _ctx: &ToolContext,
    ) -> Option<Result<(Option<String>, String), ToolError>> {
        None
    }
}
