//! Agent memory for the person: the files of the data dir's `memory/`, their content, the
//! recorded writes with diffs, a save from the Memory page and the undo of an edit.

use skald_protocol::{MemoryEdit, MemoryFileContent, MemoryFileInfo};

use super::Engine;
use crate::error::EngineError;

/// History entries returned when no limit is given, and at most.
const DEFAULT_HISTORY: u32 = 100;
const MAX_HISTORY: u32 = 1_000;

impl Engine {
    /// Every memory file, by path.
    pub async fn list_memory(&self) -> Result<Vec<MemoryFileInfo>, EngineError> {
        Ok(self.inner.memory.list().await?)
    }

    /// One memory file's content.
    pub async fn read_memory(&self, path: &str) -> Result<MemoryFileContent, EngineError> {
        Ok(self.inner.memory.read(path).await?)
    }

    /// The recorded writes (agents' and the person's), newest first; of one file when `path`
    /// is given.
    pub async fn memory_history(
        &self,
        path: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Vec<MemoryEdit>, EngineError> {
        let limit = limit.unwrap_or(DEFAULT_HISTORY).clamp(1, MAX_HISTORY);
        self.inner.memory.history(path.filter(|p| !p.trim().is_empty()), limit).await
    }

    /// Saves the person's edit of a memory file (creating it when new), within the size limit;
    /// recorded like an agent's write. Returns the file as saved.
    pub async fn save_memory(
        &self,
        path: &str,
        content: &str,
    ) -> Result<MemoryFileContent, EngineError> {
        let written = self.inner.memory.write(path, content, false, None).await?;
        Ok(MemoryFileContent {
            path: written.path.to_string(),
            content: written.new,
            max_bytes: self.inner.memory.max_bytes(),
        })
    }

    /// Undoes a recorded edit: its file gets back the content from before it (a file it
    /// created is deleted). `conflict` when the file changed since the edit or it was undone.
    pub async fn undo_memory_edit(&self, edit_id: i64) -> Result<MemoryEdit, EngineError> {
        self.inner.memory.undo(edit_id).await
    }
}
