//! Agents: `agents/<id>/meta.json` + `AGENT.md` in the data dir, read on every turn (no restart),
//! with a built-in `main` agent when the user has not written one.

mod prompt;

pub use prompt::resolve_directives;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Strength;

/// The agent every interactive session starts with.
pub const MAIN_AGENT: &str = "main";

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

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("agent `{0}` not found")]
    NotFound(String),
    #[error("agent `{id}`: {path}: {message}", path = path.display())]
    Invalid { id: String, path: PathBuf, message: String },
}

const BUILTIN_MAIN_PROMPT: &str = include_str!("main_agent.md");

/// Loads an agent from `data_dir/agents/<id>/`; `main` falls back to the built-in prompt.
pub fn load(data_dir: &Path, id: &str) -> Result<Agent, AgentError> {
    let valid_id =
        !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || "-_".contains(c));
    if !valid_id {
        return Err(AgentError::NotFound(id.to_string()));
    }
    let agents_dir = data_dir.join("agents");
    let dir = agents_dir.join(id);
    let meta_path = dir.join("meta.json");
    let prompt_path = dir.join("AGENT.md");
    if !meta_path.is_file() || !prompt_path.is_file() {
        if id == MAIN_AGENT {
            let (prompt, keys) = resolve_directives(BUILTIN_MAIN_PROMPT, &agents_dir);
            return Ok(Agent {
                id: id.to_string(),
                meta: builtin_main_meta(),
                prompt,
                substitution_keys: keys,
            });
        }
        return Err(AgentError::NotFound(id.to_string()));
    }
    let invalid = |path: &Path, message: String| AgentError::Invalid {
        id: id.to_string(),
        path: path.to_path_buf(),
        message,
    };
    let meta_text =
        std::fs::read_to_string(&meta_path).map_err(|e| invalid(&meta_path, e.to_string()))?;
    let meta: AgentMeta =
        serde_json::from_str(&meta_text).map_err(|e| invalid(&meta_path, e.to_string()))?;
    let raw =
        std::fs::read_to_string(&prompt_path).map_err(|e| invalid(&prompt_path, e.to_string()))?;
    let (prompt, keys) = resolve_directives(&raw, &agents_dir);
    Ok(Agent { id: id.to_string(), meta, prompt, substitution_keys: keys })
}

fn builtin_main_meta() -> AgentMeta {
    AgentMeta {
        name: "Skald".into(),
        description: "The main assistant: reads and edits files, runs commands, plans work.".into(),
        friendly_description: None,
        instructions: None,
        kind: AgentKind::Chat,
        inject_memory: Vec::new(),
        client: None,
        scope: None,
        strength: None,
    }
}
