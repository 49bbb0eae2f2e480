//! Agents on the wire: the list the Settings page and the chat's picker show, and the definition
//! a user edits.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `chat`: a user-facing entry agent; `task`: can be delegated to; `system`: wired by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AgentType {
    Chat,
    Task,
    System,
}

/// The least capable model an agent accepts when its model is chosen automatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AgentStrength {
    VeryLow,
    Low,
    Average,
    High,
    VeryHigh,
}

/// One agent as listed. A broken one still appears, with `error` naming the file; its other
/// fields hold what could be read (the id as name when `meta.json` did not parse).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AgentSummary {
    pub id: String,
    pub name: String,
    pub description: String,
    /// Null when `meta.json` did not parse.
    #[serde(rename = "type")]
    pub agent_type: Option<AgentType>,
    pub client: Option<String>,
    pub scope: Option<String>,
    pub strength: Option<AgentStrength>,
    /// Shipped with Skald (no user folder for this id); cannot be deleted.
    pub built_in: bool,
    /// A user folder replacing a built-in; deleting it restores the built-in.
    pub overrides_built_in: bool,
    /// Why the agent cannot be used, naming the file; a session using it fails its turn so.
    pub error: Option<String>,
    /// What works but is likely a mistake: a `<!-- KEY -->` placeholder nothing fills (it is
    /// left empty in the requests).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// `meta.json` as a user writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AgentDefinition {
    pub name: String,
    /// What it is for and what it returns: other agents read it to decide to delegate.
    pub description: String,
    pub friendly_description: Option<String>,
    pub instructions: Option<String>,
    #[serde(rename = "type")]
    pub agent_type: AgentType,
    pub inject_memory: Vec<String>,
    /// A pinned client (model alias) from config.yml.
    pub client: Option<String>,
    pub scope: Option<String>,
    pub strength: Option<AgentStrength>,
}

/// One agent with its files, for editing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AgentDetail {
    pub summary: AgentSummary,
    /// Null when `meta.json` did not parse.
    pub meta: Option<AgentDefinition>,
    /// `AGENT.md` as written (directives unresolved); empty when missing.
    pub prompt: String,
}
