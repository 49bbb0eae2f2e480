//! Rule model and matching: tool patterns (`name`, `prefix*`, `*`, `@fs_read`/`@fs_write`/`@fs_any`),
//! path patterns on canonical paths, agent/source filters; ascending priority, first match wins.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tools::names;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Allow,
    Require,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    pub id: i64,
    pub tool_pattern: String,
    /// Glob on the canonical path relative to the data dir or workdir; `<dir>/*` = subtree.
    pub path_pattern: Option<String>,
    pub agent_id: Option<String>,
    pub source: Option<String>,
    pub action: Action,
    pub priority: i64,
    pub note: Option<String>,
}

/// The facts about a call the rules look at.
#[derive(Debug, Clone)]
pub struct CallFacts<'a> {
    pub tool: &'a str,
    pub agent_id: &'a str,
    pub source: &'a str,
    /// Canonical absolute path the call acts on, if it has one.
    pub path: Option<&'a Path>,
    /// Roots a relative path pattern is tried against (canonical), e.g. data dir and workdir.
    pub roots: &'a [PathBuf],
}

/// Rules sorted for evaluation.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    pub fn new(mut rules: Vec<Rule>) -> Self {
        rules.sort_by_key(|r| (r.priority, r.id));
        Self { rules }
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// First matching rule's action; `None` = no rule matched (default-open: allow).
    pub fn evaluate(&self, call: &CallFacts<'_>) -> Option<&Rule> {
        self.rules.iter().find(|r| rule_matches(r, call))
    }

    /// A tool whose first rule matching by name alone is `deny` is not offered to the model.
    pub fn hides_tool(&self, tool: &str) -> bool {
        self.rules.iter().find(|r| tool_matches(&r.tool_pattern, tool)).is_some_and(|r| {
            r.action == Action::Deny
                && r.path_pattern.is_none()
                && r.agent_id.is_none()
                && r.source.is_none()
        })
    }
}

fn rule_matches(r: &Rule, c: &CallFacts<'_>) -> bool {
    if !tool_matches(&r.tool_pattern, c.tool) {
        return false;
    }
    if r.agent_id.as_deref().is_some_and(|a| a != c.agent_id) {
        return false;
    }
    if r.source.as_deref().is_some_and(|s| s != c.source) {
        return false;
    }
    match (&r.path_pattern, c.path) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(p), Some(path)) => path_matches(p, path, c.roots),
    }
}

pub fn tool_matches(pattern: &str, tool: &str) -> bool {
    match pattern {
        "*" => true,
        "@fs_read" => names::is_read_tool(tool),
        "@fs_write" => names::is_write_tool(tool),
        "@fs_any" => names::is_read_tool(tool) || names::is_write_tool(tool),
        p => match p.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => p == tool,
        },
    }
}

/// `dir/*` matches `dir` itself and anything below it at a `/` boundary; other patterns match
/// exactly or by trailing-`*` prefix. Relative patterns are tried against each root.
fn path_matches(pattern: &str, path: &Path, roots: &[PathBuf]) -> bool {
    let candidates: Vec<PathBuf> =
        if Path::new(pattern).is_absolute() { vec![PathBuf::new()] } else { roots.to_vec() };
    candidates.iter().any(|root| {
        if let Some(dir) = pattern.strip_suffix("/*") {
            let base = root.join(dir);
            path == base || path.starts_with(&base)
        } else if let Some(prefix) = pattern.strip_suffix('*') {
            path.to_string_lossy().starts_with(&*root.join(prefix).to_string_lossy())
        } else {
            path == root.join(pattern)
        }
    })
}
