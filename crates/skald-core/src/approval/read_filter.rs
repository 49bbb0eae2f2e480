//! A session's read filter: the deny rules and protected places applied to each path a search walks.

use std::path::{Path, PathBuf};

use super::Action;
use super::gate::LoadedRules;
use super::protected::ProtectedPaths;
use super::rules::CallFacts;
use crate::tools::{ReadFilter, names};

/// Who searches, and where, as the gate knows them.
pub struct ReadScope<'a> {
    /// The search tool running (rules naming it count as well as rules naming `read_file`).
    pub tool: &'a str,
    pub agent_id: &'a str,
    pub source: &'a str,
    pub workdir: &'a Path,
    pub data_dir: &'a Path,
    pub home: Option<&'a Path>,
}

/// The filter that hides from a walk every path `read_file` could not read without asking: a
/// protected place, or a path whose first matching rule (as `read_file` or as the search tool)
/// denies or requires. Rules that cannot be loaded hide nothing more than protected places, as
/// the gate then lets `read_file` read too.
pub fn read_filter(rules: &LoadedRules, s: &ReadScope<'_>) -> ReadFilter {
    let protected = ProtectedPaths::new(s.data_dir, s.home, s.workdir);
    let (data_dir, workdir) = (canon(s.data_dir), canon(s.workdir));
    let rules = rules.as_ref().ok().cloned();
    let narrowed =
        rules.as_ref().map(|r| r.narrowed_places(&data_dir, &workdir)).unwrap_or_default();
    let (tool, agent_id, source) =
        (s.tool.to_string(), s.agent_id.to_string(), s.source.to_string());
    ReadFilter::new(move |path| {
        if protected.for_read(path).is_some() {
            return false;
        }
        let Some(rules) = rules.as_ref().filter(|_| narrowed.may_match(path)) else {
            return true;
        };
        [names::READ_FILE, tool.as_str()].into_iter().all(|t| {
            let facts = CallFacts {
                tool: t,
                agent_id: &agent_id,
                source: &source,
                path: Some(path),
                data_dir: &data_dir,
                workdir: &workdir,
                read_only: true,
            };
            !matches!(
                rules.evaluate(&facts).map(|r| r.action),
                Some(Action::Deny | Action::Require)
            )
        })
    })
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
