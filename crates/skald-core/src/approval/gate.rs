//! The gate verdict for one call: rules (or fail closed), the RunContext fast path, the read
//! roots, and the session's stored bypasses — shared by the live loop and resume.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::named_paths;
use super::protected::{ProtectedPaths, Protection};
use super::rules::{CallFacts, Rule, RuleSet};
use super::{Action, BypassScope, Verdict};
use crate::tools::{ToolCategory, names, paths};
use skald_protocol::{RuleAction, RunContext};
use skald_store::repo::approvals::{RuleRow, RuleSeed};
use skald_store::{Store, StoreError};

/// The rules a turn evaluates, or why they could not be loaded (then the gate fails closed).
pub type LoadedRules = Result<RuleSet, RulesUnavailable>;

/// Why the approval rules could not be loaded. (A rule whose stored action is unknown loads as
/// Deny, see `skald_store::enums`, so it fails closed for the calls it matches.)
#[derive(Debug, thiserror::Error)]
pub enum RulesUnavailable {
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Seeds of the default group (DESIGN.md), inserted once under stable keys.
pub const SEEDS: &[RuleSeed] = &[
    RuleSeed {
        key: "secrets-deny",
        tool_pattern: "@fs_any",
        path_pattern: Some("secrets/*"),
        action: RuleAction::Deny,
        priority: 5,
        note: "secrets/ is never read or written",
    },
    RuleSeed {
        key: "memory-write-allow",
        tool_pattern: "@fs_write",
        path_pattern: Some("memory/*"),
        action: RuleAction::Allow,
        priority: 6,
        note: "agent memory under the data dir",
    },
    RuleSeed {
        key: "execute-cmd-require",
        tool_pattern: names::EXECUTE_CMD,
        path_pattern: None,
        action: RuleAction::Require,
        priority: 10,
        note: "shell commands",
    },
    RuleSeed {
        key: "fs-write-require",
        tool_pattern: "@fs_write",
        path_pattern: None,
        action: RuleAction::Require,
        priority: 10,
        note: "file writes",
    },
    RuleSeed {
        key: "register-mcp-require",
        tool_pattern: names::REGISTER_MCP,
        path_pattern: None,
        action: RuleAction::Require,
        priority: 10,
        note: "registering an MCP server (it runs a program)",
    },
    RuleSeed {
        key: "delete-mcp-require",
        tool_pattern: names::DELETE_MCP,
        path_pattern: None,
        action: RuleAction::Require,
        priority: 10,
        note: "removing an MCP server",
    },
    RuleSeed {
        key: "toggle-item-require",
        tool_pattern: names::TOGGLE_ITEM,
        path_pattern: None,
        action: RuleAction::Require,
        priority: 10,
        note: "enabling or disabling an MCP server",
    },
    RuleSeed {
        key: "mcp-write-require",
        tool_pattern: "@mcp_write",
        path_pattern: None,
        action: RuleAction::Require,
        priority: 900,
        note: "MCP tools not annotated read-only",
    },
];

/// Seeds of earlier builds whose rules are deleted at startup. `restart-require` gated a
/// `restart` tool that no shell ever offered (configuration and agents reload without one).
/// `mcp-require` (`mcp__*`) asked for approval of read-only MCP tools too; `@mcp_write` replaced it.
pub const RETIRED_SEEDS: &[&str] = &["restart-require", "mcp-require"];

/// Loads the session group's rules followed by `default`'s.
pub async fn load_rules(store: &Store, group: Option<&str>) -> LoadedRules {
    let load = async {
        let mut rows: Vec<RuleRow> = Vec::new();
        if let Some(g) = group.filter(|g| *g != "default") {
            rows.extend(store.rules(g).await?);
        }
        let group_len = rows.len();
        rows.extend(store.rules("default").await?);
        Ok::<_, StoreError>((rows, group_len))
    };
    match load.await {
        Ok((rows, group_len)) => Ok(RuleSet::new(
            rows.into_iter()
                .enumerate()
                .map(|(i, r)| Rule {
                    id: r.id,
                    tool_pattern: r.tool_pattern,
                    path_pattern: r.path_pattern,
                    agent_id: r.agent_id,
                    source: r.source,
                    action: r.action,
                    // The session group's tier is evaluated before default's, whatever the numbers.
                    priority: if i < group_len { 0 } else { 1_i64 << 40 } + r.priority,
                    note: r.note,
                })
                .collect(),
        )),
        Err(e) => {
            tracing::error!("approval rules could not be loaded, failing closed: {e}");
            Err(e.into())
        }
    }
}

/// Facts about one call for the verdict.
pub struct GateInput<'a> {
    pub session_id: i64,
    pub tool: &'a str,
    pub category: Option<ToolCategory>,
    pub read_only: bool,
    /// The path the call acts on, as the tool resolved it.
    pub target: Option<&'a Path>,
    /// The call's arguments: a shell command's words and an MCP tool's strings name paths too.
    pub args: &'a Value,
    pub agent_id: &'a str,
    pub source: &'a str,
    pub workdir: &'a Path,
    pub data_dir: &'a Path,
    /// The user's home: its dot-entries are protected (see `protected`).
    pub home: Option<&'a Path>,
    pub run_context: &'a RunContext,
}

/// The verdict for one call: the policy, then the session's bypasses, which relax only Require
/// (never Deny), and only for a call that stays inside the working directory and touches no
/// protected path. They are read at every call with the store's clock, so a bypass another
/// process granted counts at once and an expired or revoked one stops counting at once. When
/// they cannot be read the call waits for a human (fail closed).
pub async fn verdict(store: &Store, rules: &LoadedRules, g: &GateInput<'_>) -> Verdict {
    let reach = Reach::of(g);
    let base = judge(rules, g, &reach);
    if base != Verdict::Require || !reach.bypassable() {
        return base;
    }
    match store.session_bypasses(g.session_id).await {
        Ok(rows) => {
            let active: Vec<BypassScope> = rows
                .iter()
                .filter_map(|r| BypassScope::from_stored(&r.scope_kind, r.scope_value.as_deref()))
                .collect();
            relax(base, &active, g)
        }
        Err(e) => {
            tracing::error!(session_id = g.session_id, "bypasses could not be read: {e}");
            Verdict::Require
        }
    }
}

/// `verdict` under the given active bypasses, without the store.
pub fn verdict_under(rules: &LoadedRules, active: &[BypassScope], g: &GateInput<'_>) -> Verdict {
    let reach = Reach::of(g);
    let base = judge(rules, g, &reach);
    if reach.bypassable() { relax(base, active, g) } else { base }
}

/// The protected path a call touches, if any: why it asks even under a bypass.
pub fn protection(g: &GateInput<'_>) -> Option<(PathBuf, Protection)> {
    Reach::of(g).protection
}

fn relax(base: Verdict, active: &[BypassScope], g: &GateInput<'_>) -> Verdict {
    if base == Verdict::Require && active.iter().any(|b| b.covers(g.tool, g.category)) {
        Verdict::Allow
    } else {
        base
    }
}

/// What a call touches: its target, the other paths it names, the first protected one, and
/// whether it reaches outside the working directory.
struct Reach {
    target: Option<PathBuf>,
    /// Paths named by a shell command's words or an MCP tool's arguments (deny rules reach them).
    named: Vec<PathBuf>,
    protection: Option<(PathBuf, Protection)>,
    /// A path beyond what a bypass may cover (outside the working directory).
    outside: bool,
    /// A call a person always approves (scheduling a job): only a deny rule answers it
    /// otherwise, and no bypass, allow rule or pre-authorisation lets it through.
    floor: bool,
}

impl Reach {
    fn of(g: &GateInput<'_>) -> Reach {
        let target =
            g.target.and_then(|t| paths::resolve_path(g.workdir, &t.to_string_lossy()).ok());
        let protected = ProtectedPaths::new(g.data_dir, g.home, g.workdir);
        let within_workdir = |p: &Path| paths::is_within(p, &canon(g.workdir));
        let mut named = Vec::new();
        let mut scope: Vec<PathBuf> = target.iter().cloned().collect();
        let mut writes = !g.read_only;
        if g.tool == names::EXECUTE_CMD {
            // A command may read or write whatever its words name; it runs in its `workdir`.
            let cwd = g
                .args
                .get("workdir")
                .and_then(Value::as_str)
                .and_then(|w| paths::resolve_path(g.workdir, w).ok())
                .unwrap_or_else(|| canon(g.workdir));
            let command = g.args.get("command").and_then(Value::as_str).unwrap_or_default();
            named = named_paths::shell_paths(command, &cwd, g.home);
            scope.push(cwd);
            writes = true;
        } else if names::mcp_tool(g.tool).is_some() {
            named = named_paths::argument_paths(g.args, &canon(g.workdir), g.home);
        }
        let protection = if names::changes_mcp_servers(g.tool) {
            Some((g.data_dir.join("config.yml"), Protection::McpServers))
        } else {
            scope.iter().chain(&named).find_map(|p| {
                let found = if writes { protected.for_write(p) } else { protected.for_read(p) };
                found.map(|why| (p.clone(), why))
            })
        };
        let outside = scope.iter().any(|p| !within_workdir(p));
        let floor = names::schedules_job(g.tool, g.args);
        Reach { target, named, protection, outside, floor }
    }

    /// Whether a bypass may relax the call's Require.
    fn bypassable(&self) -> bool {
        self.protection.is_none() && !self.outside && !self.floor
    }
}

/// The policy alone: deny rules for every path the call names, the first matching rule, read
/// roots, protected paths, then the RunContext fast path.
pub fn policy(rules: &LoadedRules, g: &GateInput<'_>) -> Verdict {
    judge(rules, g, &Reach::of(g))
}

fn judge(rules: &LoadedRules, g: &GateInput<'_>, reach: &Reach) -> Verdict {
    let canonical = reach.target.as_deref();
    let rules = match rules {
        Ok(r) => r,
        Err(e) if !g.read_only => {
            return Verdict::Deny(format!(
                "Denied: the approval rules could not be loaded ({e}), so only read-only tools run."
            ));
        }
        Err(_) => return read_root_check(g, canonical),
    };
    let (data_dir, workdir) = (canon(g.data_dir), canon(g.workdir));
    let facts = |tool, path, read_only| CallFacts {
        tool,
        agent_id: g.agent_id,
        source: g.source,
        path,
        data_dir: &data_dir,
        workdir: &workdir,
        read_only,
    };
    // A path named in a command or an argument is denied where a file tool's read or write of
    // it would be: the deny rules reach every tool that names a path.
    for p in &reach.named {
        for (access, read_only) in [(names::READ_FILE, true), (names::WRITE_FILE, false)] {
            if rules.evaluate(&facts(access, Some(p), read_only)).map(|r| r.action)
                == Some(Action::Deny)
            {
                return Verdict::Deny(format!(
                    "Denied by policy: `{}` names {}, which no tool may read or write here.",
                    g.tool,
                    p.display()
                ));
            }
        }
    }
    let base = match rules.evaluate(&facts(g.tool, canonical, g.read_only)).map(|r| r.action) {
        Some(Action::Deny) => {
            return Verdict::Deny(format!(
                "Denied by policy: `{}` is not allowed here{}.",
                g.tool,
                canonical.map(|p| format!(" ({})", p.display())).unwrap_or_default()
            ));
        }
        // A job runs later with nobody watching: a person says yes to exactly that job, even
        // where a rule allows the tool.
        _ if reach.floor => return Verdict::Require,
        // A rule a person wrote: it may allow even a protected path.
        Some(Action::Allow) => return Verdict::Allow,
        Some(Action::Require) => Verdict::Require,
        None => read_root_check(g, canonical),
    };
    // A protected path always asks: no read root, pre-authorisation or bypass covers it.
    if reach.protection.is_some() {
        return Verdict::Require;
    }
    if base == Verdict::Require && fast_path(g, canonical) {
        return Verdict::Allow;
    }
    base
}

/// Unmatched reads are allowed inside the working dir and the auto-read roots; elsewhere a human
/// decides (decision 41).
fn read_root_check(g: &GateInput<'_>, path: Option<&Path>) -> Verdict {
    match path {
        Some(p)
            if names::is_read_tool(g.tool)
                && !read_roots(g).iter().any(|r| paths::is_within(p, r)) =>
        {
            Verdict::Require
        }
        _ => Verdict::Allow,
    }
}

fn read_roots(g: &GateInput<'_>) -> Vec<PathBuf> {
    let mut roots = vec![canon(g.workdir), canon(&g.data_dir.join("memory"))];
    for r in g.run_context.allow_fs_reads.iter().chain(&g.run_context.allow_fs_writes) {
        if let Ok(p) = paths::resolve_path(g.workdir, r) {
            roots.push(p);
        }
    }
    roots
}

/// RunContext pre-authorisation relaxes Require (never Deny).
fn fast_path(g: &GateInput<'_>, path: Option<&Path>) -> bool {
    let Some(p) = path else { return false };
    let within = |list: &[String]| {
        list.iter()
            .filter_map(|r| paths::resolve_path(g.workdir, r).ok())
            .any(|r| paths::is_within(p, &r))
    };
    if names::is_write_tool(g.tool) {
        within(&g.run_context.allow_fs_writes)
    } else if names::is_read_tool(g.tool) {
        read_roots(g).iter().any(|r| paths::is_within(p, r))
    } else {
        false
    }
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
