//! The agents Skald ships: `main` (chat) and `generalist` (task), so a fresh data dir can chat and
//! delegate, and `tic` (system: TIC ticks run it). A user folder with the same id replaces one.

use super::{AgentKind, AgentMeta};

/// A built-in agent: its meta and its `AGENT.md` text (directives unresolved).
pub(super) struct BuiltIn {
    pub id: &'static str,
    pub meta: fn() -> AgentMeta,
    pub prompt: &'static str,
}

pub(super) const BUILT_INS: &[BuiltIn] = &[
    BuiltIn { id: super::MAIN_AGENT, meta: main_meta, prompt: include_str!("builtin/main.md") },
    BuiltIn {
        id: "generalist",
        meta: generalist_meta,
        prompt: include_str!("builtin/generalist.md"),
    },
    BuiltIn { id: super::TIC_AGENT, meta: tic_meta, prompt: include_str!("builtin/tic.md") },
];

pub(super) fn find(id: &str) -> Option<&'static BuiltIn> {
    BUILT_INS.iter().find(|b| b.id == id)
}

fn meta(name: &str, description: &str, kind: AgentKind) -> AgentMeta {
    AgentMeta {
        name: name.into(),
        description: description.into(),
        friendly_description: None,
        instructions: None,
        kind,
        inject_memory: Vec::new(),
        client: None,
        scope: None,
        strength: None,
    }
}

fn main_meta() -> AgentMeta {
    meta(
        "Skald",
        "The main assistant: reads and edits files, runs commands, plans work.",
        AgentKind::Chat,
    )
}

fn generalist_meta() -> AgentMeta {
    meta(
        "Generalist",
        "A general-purpose worker for a self-contained task (research a question, change some \
         files, run and check commands); give it a complete brief, it returns a report of what it \
         did and found.",
        AgentKind::Task,
    )
}

fn tic_meta() -> AgentMeta {
    meta(
        "TIC",
        "Reads what MCP servers kept connected pushed since the last tick and reports what \
         matters. Run by TIC ticks only.",
        AgentKind::System,
    )
}
