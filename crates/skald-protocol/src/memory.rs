//! Agent memory as the API shows it (the Memory page, `skald memory`): the Markdown files of the
//! data dir's `memory/` and the recorded writes to them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::FileDiff;

/// One memory file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MemoryFileInfo {
    /// Relative to `memory/`, with `/` separators (what `memory_write` takes).
    pub path: String,
    #[ts(type = "number")]
    pub size: u64,
    /// Last modification, RFC 3339 UTC (`None` when the file system does not say).
    pub modified_at: Option<String>,
}

/// A memory file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MemoryFileContent {
    pub path: String,
    pub content: String,
    /// The size limit a write must stay within (`memory.max_file_bytes`).
    #[ts(type = "number")]
    pub max_bytes: u64,
}

/// Who wrote a memory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MemoryAuthor {
    Agent,
    User,
}

/// One recorded write of a memory file, with its diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MemoryEdit {
    #[ts(type = "number")]
    pub id: i64,
    pub path: String,
    pub author: MemoryAuthor,
    /// The agent's session and call (agent edits).
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    #[ts(type = "number | null")]
    pub tool_call_id: Option<i64>,
    pub agent_id: Option<String>,
    /// The file did not exist before this write.
    pub created_file: bool,
    pub diff: FileDiff,
    pub created_at: String,
    /// When it was undone, if it was.
    pub undone_at: Option<String>,
}
