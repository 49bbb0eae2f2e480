//! Rule model and matching: tool patterns (`name`, `prefix*`, `*`, `@fs_read`/`@fs_write`/`@fs_any`,
//! `@mcp_write` = MCP tools their server does not annotate read-only),
//! path patterns on canonical paths, agent/source filters; ascending priority, first match wins.
//!
//! A relative path pattern names a place under a root. `allow` rules resolve it against the data
//! dir only: a rule that widens must never widen through an ambiguous root (`memory/*` is the data
//! dir's memory, never `<workdir>/memory`). `deny` and `require` rules, which only narrow, match
//! under the data dir and the working directory (`secrets/*` protects the project's secrets too).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tools::{names, paths};

/// A rule's action: the protocol's type, so the gate, the store and the settings page share it.
pub use skald_protocol::RuleAction as Action;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    pub id: i64,
    pub tool_pattern: String,
    /// Absolute, or relative to the data dir (every action) and the workdir (deny/require only);
    /// `<dir>/*` = subtree, `prefix*` = name prefix. Compared on canonical paths.
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
    /// Canonical data dir: the one root relative patterns of `allow` rules resolve against.
    pub data_dir: &'a Path,
    /// Canonical working directory: relative `deny`/`require` patterns match under it too.
    pub workdir: &'a Path,
    /// The tool says it changes nothing (an MCP tool's `readOnlyHint`, a read tool).
    pub read_only: bool,
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
    pub fn hides_tool(&self, tool: &str, read_only: bool) -> bool {
        let first = self.rules.iter().find(|r| tool_matches(&r.tool_pattern, tool, read_only));
        first.is_some_and(|r| {
            r.action == Action::Deny
                && r.path_pattern.is_none()
                && r.agent_id.is_none()
                && r.source.is_none()
        })
    }
}

fn rule_matches(r: &Rule, c: &CallFacts<'_>) -> bool {
    if !tool_matches(&r.tool_pattern, c.tool, c.read_only) {
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
        (Some(p), Some(path)) => {
            let both = [c.data_dir, c.workdir];
            let roots: &[&Path] = if r.action == Action::Allow { &both[..1] } else { &both };
            path_matches(p, path, roots)
        }
    }
}

/// Whether `pattern` names `tool`; `read_only` is what the tool says of itself.
pub fn tool_matches(pattern: &str, tool: &str, read_only: bool) -> bool {
    match pattern {
        "@mcp_write" => names::mcp_server(tool).is_some() && !read_only,
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

/// `dir/*` matches `dir` itself and anything below it at a `/` boundary; `prefix*` matches names
/// starting with `prefix`; anything else matches exactly. A relative pattern is tried under each
/// of `roots`. The pattern's directory part is canonicalised like a call's path (symlinks and `..`
/// resolved), so both sides of the comparison are canonical.
fn path_matches(pattern: &str, path: &Path, roots: &[&Path]) -> bool {
    anchored(pattern, roots).iter().any(|a| a.matches(path))
}

/// A path pattern resolved under one root: resolving touches the filesystem, matching does not.
#[derive(Debug, Clone)]
enum Anchored {
    /// `dir/*`: the directory and everything below it.
    Subtree(PathBuf),
    /// `dir/prefix*`: entries of `dir` (at any depth below it) whose relative path starts so.
    Prefix(PathBuf, String),
    Exact(PathBuf),
}

impl Anchored {
    fn matches(&self, path: &Path) -> bool {
        match self {
            Self::Subtree(base) => path.starts_with(base),
            Self::Prefix(base, name) => path
                .strip_prefix(base)
                .is_ok_and(|rest| rest.to_string_lossy().starts_with(name.as_str())),
            Self::Exact(exact) => path == exact,
        }
    }
}

/// `pattern` anchored under each root it applies to (only `/` for an absolute one).
fn anchored(pattern: &str, roots: &[&Path]) -> Vec<Anchored> {
    let tried: &[&Path] = if Path::new(pattern).is_absolute() { &[Path::new("/")] } else { roots };
    tried
        .iter()
        .filter_map(|root| {
            if let Some(dir) = pattern.strip_suffix("/*") {
                anchor(root, dir).map(Anchored::Subtree)
            } else if let Some(prefix) = pattern.strip_suffix('*') {
                // The directory part is resolved; the name part stays a text prefix.
                let (dir, name) = match prefix.rsplit_once('/') {
                    Some(("", name)) => ("/", name),
                    Some(split) => split,
                    None => ("", prefix),
                };
                anchor(root, dir).map(|base| Anchored::Prefix(base, name.to_string()))
            } else {
                anchor(root, pattern).map(Anchored::Exact)
            }
        })
        .collect()
}

/// The places the narrowing rules (`deny`, `require`) of a set name, resolved once: a walk that
/// checks thousands of paths asks `may_match` first and evaluates the rules only on a hit.
#[derive(Debug, Clone, Default)]
pub struct NarrowedPlaces(Vec<Anchored>);

impl NarrowedPlaces {
    /// Whether some narrowing rule's path pattern matches `path` (canonical); the rule's other
    /// conditions are not looked at, so a hit is a reason to evaluate, not a verdict.
    pub fn may_match(&self, path: &Path) -> bool {
        self.0.iter().any(|a| a.matches(path))
    }
}

impl RuleSet {
    /// The narrowing rules' places under the canonical data dir and working directory.
    pub fn narrowed_places(&self, data_dir: &Path, workdir: &Path) -> NarrowedPlaces {
        let roots = [data_dir, workdir];
        NarrowedPlaces(
            self.rules
                .iter()
                .filter(|r| r.action != Action::Allow)
                .filter_map(|r| r.path_pattern.as_deref())
                .flat_map(|p| anchored(p, &roots))
                .collect(),
        )
    }
}

/// `fixed` (a pattern without its glob) resolved under `root` to a canonical path.
fn anchor(root: &Path, fixed: &str) -> Option<PathBuf> {
    if fixed.is_empty() {
        return Some(root.to_path_buf());
    }
    paths::resolve_path(root, fixed).ok()
}
