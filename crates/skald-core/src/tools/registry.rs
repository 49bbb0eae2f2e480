//! The set of tools the engine can run, looked up by name, listed in a deterministic order.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::edit_file::EditFile;
use super::execute_cmd::ExecuteCmd;
use super::insert_at_line::InsertAtLine;
use super::list_dir::ListDir;
use super::read_file::ReadFile;
use super::replace_lines::ReplaceLines;
use super::search::{FindFiles, SearchFiles};
use super::write_file::WriteFile;
use super::{ProcessRegistry, Tool, ToolCategory, ToolDef, names};

/// Tools by name. A `BTreeMap` keeps `defs()` sorted, so the tool list sent to the provider is
/// byte-identical between rounds (prompt caching depends on it).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<&'static str, Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry").field("tools", &self.tools.keys()).finish()
    }
}

impl ToolRegistry {
    /// No tools.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The built-in file, search and shell tools; commands are not recorded (see `builtin_recording`).
    pub fn builtin() -> Self {
        Self::with_builtins(ExecuteCmd::new(None))
    }

    /// The built-in tools, each command's process group recorded in `processes` while it runs
    /// so a crashed engine's leftovers are killed at the next open (the engine's tool set).
    pub fn builtin_recording(processes: ProcessRegistry) -> Self {
        Self::with_builtins(ExecuteCmd::new(Some(processes)))
    }

    fn with_builtins(execute_cmd: ExecuteCmd) -> Self {
        let mut registry = Self::empty();
        let tools: [Arc<dyn Tool>; 9] = [
            Arc::new(ReadFile::new()),
            Arc::new(ListDir::new()),
            Arc::new(SearchFiles::new()),
            Arc::new(FindFiles::new()),
            Arc::new(WriteFile::new()),
            Arc::new(EditFile::new()),
            Arc::new(InsertAtLine::new()),
            Arc::new(ReplaceLines::new()),
            Arc::new(execute_cmd),
        ];
        for tool in tools {
            registry.register(tool);
        }
        registry
    }

    /// Adds the memory tools (`memory_search`, `memory_write`) over `memory`.
    pub fn register_memory(&mut self, memory: std::sync::Arc<crate::memory::MemoryManager>) {
        self.register(Arc::new(super::memory::MemorySearch::new(memory.clone())));
        self.register(Arc::new(super::memory::MemoryWrite::new(memory)));
    }

    /// Adds a tool, replacing (and returning) one with the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Option<Arc<dyn Tool>> {
        self.tools.insert(tool.def().name, tool)
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.get(name).cloned()
    }

    /// The category approvals and bypasses see for a call: the registered tool's own; none for an
    /// MCP tool (its server covers it); `session` for the tools the turn loop runs itself.
    pub fn category_of(&self, name: &str) -> Option<ToolCategory> {
        match self.tools.get(name) {
            Some(t) => Some(t.def().category),
            None if names::mcp_server(name).is_some() => None,
            None => Some(ToolCategory::Session),
        }
    }

    /// Every tool, sorted by name.
    pub fn all(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.values().cloned().collect()
    }

    /// Definitions sorted by name.
    pub fn defs(&self) -> Vec<&ToolDef> {
        self.tools.values().map(|t| t.def()).collect()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
