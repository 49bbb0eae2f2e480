//! Agents: `agents/<id>/meta.json` + `AGENT.md` in the data dir over the built-ins (`main`,
//! `generalist`), picked up on the next turn after a change (no restart).

mod builtin;
mod files;
mod prompt;
mod registry;
mod watch;

pub use files::{delete, save};
pub use prompt::{DirectiveError, resolve_directives};
pub use registry::{Entry, Registry};
pub use watch::AgentsWatcher;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Strength;

/// The agent every interactive session starts with.
pub const MAIN_AGENT: &str = "main";

/// The system agent TIC ticks run (never dispatchable, never a chat's).
pub const TIC_AGENT: &str = "tic";

/// `meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentMeta {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub friendly_description: Option<String>,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(rename = "type")]
    pub kind: AgentKind,
    #[serde(default)]
    pub inject_memory: Vec<String>,
    #[serde(default)]
    pub client: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub strength: Option<Strength>,
}

/// `chat`: a user-facing entry agent; `task`: dispatchable as a sub-agent; `system`: wired by
/// id, never listed for delegation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    Chat,
    Task,
    System,
}

/// A loaded agent: its meta and its prompt with directives resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    pub id: String,
    pub meta: AgentMeta,
    pub prompt: String,
    /// Keys of `<!-- KEY -->` directives, now `__KEY__` sentinels in `prompt`.
    pub substitution_keys: Vec<String>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum AgentError {
    #[error("agent `{0}` not found")]
    NotFound(String),
    #[error("agent `{id}`: {path}: {message}", path = path.display())]
    Invalid { id: String, path: PathBuf, message: String },
    #[error(
        "`{0}` is not a valid agent id: use lowercase letters, digits and '-' (and not `common`)"
    )]
    InvalidId(String),
    #[error("agent `{0}` is built in and cannot be deleted")]
    BuiltIn(String),
    #[error("cannot write {path}: {message}", path = path.display())]
    Write { path: PathBuf, message: String },
}

/// Loads agent `id` as the data dir defines it now (a user folder, else a built-in).
pub fn load(data_dir: &Path, id: &str) -> Result<Agent, AgentError> {
    Registry::current(data_dir)
        .get(id)
        .ok_or_else(|| AgentError::NotFound(id.to_string()))?
        .agent
        .clone()
}

/// The agents a sub-agent call may start (`task` agents that load), by id; others are not
/// dispatchable, whatever their type.
pub fn dispatchable(data_dir: &Path) -> Vec<Agent> {
    Registry::current(data_dir).dispatchable().cloned().collect()
}

/// What `meta.json` must hold beyond its shape; the message is shown with the file's path.
fn validate_meta(meta: &AgentMeta) -> Result<(), String> {
    if meta.name.trim().is_empty() {
        return Err("`name` is empty".into());
    }
    if meta.description.trim().is_empty() {
        return Err(
            "`description` is empty: it tells other agents and the user what it is for".into()
        );
    }
    Ok(())
}

/// The shipped `AGENT.md` text of built-in `id` (directives unresolved).
pub fn built_in_prompt(id: &str) -> Option<&'static str> {
    builtin::find(id).map(|b| b.prompt)
}
