//! The agent operations: list, read, save and delete agent definitions, and the check of the
//! agent a new session runs.

use skald_protocol::{AgentDefinition, AgentDetail, AgentStrength, AgentSummary, AgentType};

use super::Engine;
use crate::agents::{self, AgentError, AgentKind, AgentMeta, Entry, Registry};
use crate::config::Strength;
use crate::error::EngineError;

impl Engine {
    /// Every agent (user folders over the built-ins), by id; broken ones carry their error.
    pub async fn list_agents(&self) -> Result<Vec<AgentSummary>, EngineError> {
        let cfg = self.config();
        let entries = Registry::current(self.data_dir());
        Ok(entries.entries().map(|e| summary(e, &cfg)).collect())
    }

    /// One agent's meta and `AGENT.md` text as written.
    pub async fn get_agent(&self, id: &str) -> Result<AgentDetail, EngineError> {
        let registry = Registry::current(self.data_dir());
        let entry = registry.get(id).ok_or_else(|| not_found(id))?;
        let prompt = if entry.built_in {
            agents::built_in_prompt(id).unwrap_or_default().to_string()
        } else {
            let path = self.data_dir().join("agents").join(id).join("AGENT.md");
            crate::regular_file::read_to_string(&path, None).unwrap_or_default()
        };
        Ok(AgentDetail {
            summary: summary(entry, &self.config()),
            meta: entry.meta.as_ref().map(definition),
            prompt,
        })
    }

    /// Creates or replaces user agent `id` (overriding a built-in of that id).
    pub async fn save_agent(
        &self,
        id: &str,
        meta: AgentDefinition,
        prompt: &str,
    ) -> Result<AgentSummary, EngineError> {
        // What is wrong in a definition being saved is the caller's input, not a broken file on
        // disk (that is `Config`, as when a session loads one).
        agents::save(self.data_dir(), id, &agent_meta(meta), prompt).map_err(|e| match e {
            AgentError::Invalid { .. } => EngineError::InvalidInput(e.to_string()),
            e => op_error(e),
        })?;
        let registry = Registry::current(self.data_dir());
        let cfg = self.config();
        registry.get(id).map(|e| summary(e, &cfg)).ok_or_else(|| not_found(id))
    }

    /// Deletes user agent `id`; a built-in it overrode is back.
    pub async fn delete_agent(&self, id: &str) -> Result<(), EngineError> {
        agents::delete(self.data_dir(), id).map_err(op_error)
    }

    /// The agent a new session may run: one that loads and is not a `system` agent.
    pub(super) fn session_agent(&self, id: &str) -> Result<String, EngineError> {
        let agent = agents::load(self.data_dir(), id).map_err(op_error)?;
        if agent.meta.kind == AgentKind::System {
            return Err(EngineError::InvalidInput(format!(
                "agent `{id}` is a system agent: it cannot run a chat session"
            )));
        }
        Ok(agent.id)
    }
}

fn not_found(id: &str) -> EngineError {
    EngineError::NotFound(AgentError::NotFound(id.to_string()).to_string())
}

/// The wire code of an agent operation's failure: what the caller got wrong, or the disk.
fn op_error(e: AgentError) -> EngineError {
    match e {
        AgentError::NotFound(_) => EngineError::NotFound(e.to_string()),
        AgentError::InvalidId(_) => EngineError::InvalidInput(e.to_string()),
        AgentError::BuiltIn(_) => EngineError::Conflict(e.to_string()),
        AgentError::Invalid { .. } => EngineError::Agent(e),
        AgentError::Write { .. } => EngineError::Internal(e.to_string()),
    }
}

fn summary(entry: &Entry, cfg: &crate::config::Config) -> AgentSummary {
    let meta = entry.meta.as_ref();
    AgentSummary {
        id: entry.id.clone(),
        name: meta.map_or_else(|| entry.id.clone(), |m| m.name.clone()),
        description: meta.map(|m| m.description.clone()).unwrap_or_default(),
        agent_type: meta.map(|m| agent_type(m.kind)),
        client: meta.and_then(|m| m.client.clone()),
        scope: meta.and_then(|m| m.scope.clone()),
        strength: meta.and_then(|m| m.strength).map(wire_strength),
        built_in: entry.built_in,
        overrides_built_in: entry.overrides_built_in,
        error: entry.agent.as_ref().err().map(ToString::to_string),
        warnings: entry.agent.as_ref().map(|a| unfilled_keys(a, cfg)).unwrap_or_default(),
    }
}

/// A warning for each `<!-- KEY -->` of the agent's prompt that neither Skald nor any source's
/// `substitutions` fills: the requests get nothing in its place, which is seldom what was meant.
fn unfilled_keys(agent: &agents::Agent, cfg: &crate::config::Config) -> Vec<String> {
    agent
        .substitution_keys
        .iter()
        .filter(|k| !crate::context::ENGINE_KEYS.contains(&k.as_str()))
        .filter(|k| !cfg.sources.values().any(|s| s.substitutions.contains_key(k.as_str())))
        .map(|k| {
            format!(
                "<!-- {k} --> has no value, so it is left empty: Skald fills {}; add others \
                 under sources.<source>.substitutions in config.yml",
                crate::context::ENGINE_KEYS.join(", ")
            )
        })
        .collect()
}

fn definition(m: &AgentMeta) -> AgentDefinition {
    AgentDefinition {
        name: m.name.clone(),
        description: m.description.clone(),
        friendly_description: m.friendly_description.clone(),
        instructions: m.instructions.clone(),
        agent_type: agent_type(m.kind),
        inject_memory: m.inject_memory.clone(),
        client: m.client.clone(),
        scope: m.scope.clone(),
        strength: m.strength.map(wire_strength),
    }
}

/// Blank optional texts are absent, as a hand-written `meta.json` would leave them out.
fn agent_meta(d: AgentDefinition) -> AgentMeta {
    let set = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    AgentMeta {
        name: d.name.trim().to_string(),
        description: d.description.trim().to_string(),
        friendly_description: set(d.friendly_description),
        instructions: set(d.instructions),
        kind: match d.agent_type {
            AgentType::Chat => AgentKind::Chat,
            AgentType::Task => AgentKind::Task,
            AgentType::System => AgentKind::System,
        },
        inject_memory: d.inject_memory.into_iter().filter(|p| !p.trim().is_empty()).collect(),
        client: set(d.client),
        scope: set(d.scope),
        strength: d.strength.map(|s| match s {
            AgentStrength::VeryLow => Strength::VeryLow,
            AgentStrength::Low => Strength::Low,
            AgentStrength::Average => Strength::Average,
            AgentStrength::High => Strength::High,
            AgentStrength::VeryHigh => Strength::VeryHigh,
        }),
    }
}

fn agent_type(kind: AgentKind) -> AgentType {
    match kind {
        AgentKind::Chat => AgentType::Chat,
        AgentKind::Task => AgentType::Task,
        AgentKind::System => AgentType::System,
    }
}

fn wire_strength(s: Strength) -> AgentStrength {
    match s {
        Strength::VeryLow => AgentStrength::VeryLow,
        Strength::Low => AgentStrength::Low,
        Strength::Average => AgentStrength::Average,
        Strength::High => AgentStrength::High,
        Strength::VeryHigh => AgentStrength::VeryHigh,
    }
}
