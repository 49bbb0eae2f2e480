//! The agent registry: the data dir's agents over the built-ins, rebuilt only when a file under
//! `agents/` changes (size or mtime), so reading it on every turn costs one directory walk.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::SystemTime;

use super::prompt::{DirectiveError, resolve_directives};
use super::{Agent, AgentError, AgentKind, AgentMeta, builtin};

/// `agents/common/` holds shared fragments for `INCLUDE`, never an agent.
pub(super) const COMMON_DIR: &str = "common";
pub(super) const META_FILE: &str = "meta.json";
pub(super) const PROMPT_FILE: &str = "AGENT.md";

/// How deep the change check looks under `agents/` (includes may live in sub-folders).
const MAX_WALK_DEPTH: usize = 4;

/// One agent as listed: what parsed of it and whether it can run.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: String,
    /// Defined by Skald itself (no user folder for this id).
    pub built_in: bool,
    /// A user folder replacing a built-in of the same id (deleting it restores the built-in).
    pub overrides_built_in: bool,
    /// The meta, when `meta.json` parsed (shown even when the prompt is broken).
    pub meta: Option<AgentMeta>,
    /// The loaded agent, or why it cannot be used (naming the file).
    pub agent: Result<Agent, AgentError>,
}

/// Every agent of one data dir, by id.
#[derive(Debug)]
pub struct Registry {
    fingerprint: Fingerprint,
    entries: BTreeMap<String, Entry>,
}

impl Registry {
    /// The registry of `data_dir`, rebuilt when a file under `agents/` changed since last time.
    pub fn current(data_dir: &Path) -> Arc<Registry> {
        static CACHE: LazyLock<Mutex<HashMap<PathBuf, Arc<Registry>>>> =
            LazyLock::new(Default::default);
        let agents_dir = data_dir.join("agents");
        let fingerprint = Fingerprint::of(&agents_dir);
        let lock = || CACHE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cached) = lock().get(data_dir)
            && cached.fingerprint == fingerprint
        {
            return cached.clone();
        }
        let fresh = Arc::new(Registry::build(&agents_dir, fingerprint));
        lock().insert(data_dir.to_path_buf(), fresh.clone());
        fresh
    }

    /// Every agent, by id.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.get(id)
    }

    /// The agents a sub-agent call may start: loadable `task` agents (§4.1), by id.
    pub fn dispatchable(&self) -> impl Iterator<Item = &Agent> {
        self.entries
            .values()
            .filter_map(|e| e.agent.as_ref().ok())
            .filter(|a| a.meta.kind == AgentKind::Task)
    }

    fn build(agents_dir: &Path, fingerprint: Fingerprint) -> Registry {
        let mut raw: BTreeMap<String, Raw> = user_folders(agents_dir)
            .into_iter()
            .map(|id| (id.clone(), Raw::user(agents_dir, id)))
            .collect();
        for b in builtin::BUILT_INS {
            raw.entry(b.id.to_string()).or_insert_with(|| Raw::built_in(b));
        }
        // AGENTS_LIST names the task agents that can run, so find those first: a directive
        // never decides whether a prompt resolves.
        let resolves = |r: &Raw| {
            r.parsed().is_ok_and(|(_, text)| resolve_directives(text, agents_dir, "").is_ok())
        };
        let list: Vec<String> = raw
            .values()
            .filter(|r| resolves(r))
            .filter_map(|r| {
                r.meta.as_ref().ok().filter(|m| m.kind == AgentKind::Task).map(|m| (r, m))
            })
            .map(|(r, m)| format!("- **{}** — {}", r.id, m.description.trim()))
            .collect();
        let list = if list.is_empty() { "(no task agents)".to_string() } else { list.join("\n") };
        let entries = raw
            .into_values()
            .map(|r| {
                let agent = r.parsed().and_then(|(meta, text)| {
                    let (prompt, substitution_keys) = resolve_directives(text, agents_dir, &list)
                        .map_err(|e| r.prompt_error(&e))?;
                    Ok(Agent { id: r.id.clone(), meta: meta.clone(), prompt, substitution_keys })
                });
                let overrides_built_in = !r.built_in && builtin::find(&r.id).is_some();
                Entry {
                    id: r.id,
                    built_in: r.built_in,
                    overrides_built_in,
                    meta: r.meta.ok(),
                    agent,
                }
            })
            .map(|e| (e.id.clone(), e))
            .collect();
        Registry { fingerprint, entries }
    }
}

/// An agent's files as read, before directives are resolved.
struct Raw {
    id: String,
    built_in: bool,
    prompt_path: PathBuf,
    meta: Result<AgentMeta, AgentError>,
    text: Result<String, AgentError>,
}

impl Raw {
    fn built_in(b: &builtin::BuiltIn) -> Raw {
        Raw {
            id: b.id.to_string(),
            built_in: true,
            prompt_path: PathBuf::from(format!("(built-in {})/{PROMPT_FILE}", b.id)),
            meta: Ok((b.meta)()),
            text: Ok(b.prompt.to_string()),
        }
    }

    fn user(agents_dir: &Path, id: String) -> Raw {
        let dir = agents_dir.join(&id);
        let invalid = |path: &Path, message: String| AgentError::Invalid {
            id: id.clone(),
            path: path.to_path_buf(),
            message,
        };
        let read = |path: &Path| {
            crate::regular_file::read_to_string(path, None).map_err(|e| {
                let message = if e.is_not_found() {
                    format!("missing (an agent needs both {META_FILE} and {PROMPT_FILE})")
                } else {
                    e.reason()
                };
                invalid(path, message)
            })
        };
        let meta_path = dir.join(META_FILE);
        let meta = read(&meta_path).and_then(|text| {
            serde_json::from_str::<AgentMeta>(&text).map_err(|e| invalid(&meta_path, e.to_string()))
        });
        let meta = meta.and_then(|m| {
            super::validate_meta(&m).map(|()| m).map_err(|msg| invalid(&meta_path, msg))
        });
        let prompt_path = dir.join(PROMPT_FILE);
        let text = read(&prompt_path);
        Raw { id, built_in: false, prompt_path, meta, text }
    }

    /// Both files, or the first one's error.
    fn parsed(&self) -> Result<(&AgentMeta, &str), AgentError> {
        let meta = self.meta.as_ref().map_err(Clone::clone)?;
        let text = self.text.as_ref().map_err(Clone::clone)?;
        Ok((meta, text))
    }

    fn prompt_error(&self, e: &DirectiveError) -> AgentError {
        AgentError::Invalid {
            id: self.id.clone(),
            path: self.prompt_path.clone(),
            message: e.to_string(),
        }
    }
}

/// Agent folders: sub-folders of `agents/` holding `meta.json` or `AGENT.md` (a folder with
/// neither holds fragments), except `common/` and hidden ones.
fn user_folders(agents_dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(agents_dir) else { return Vec::new() };
    read.filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name != COMMON_DIR && !name.starts_with('.'))
        .filter(|name| {
            let dir = agents_dir.join(name);
            dir.join(META_FILE).exists() || dir.join(PROMPT_FILE).exists()
        })
        .collect()
}

/// Size and mtime of every file under `agents/`: equal fingerprints mean nothing changed.
#[derive(Debug, PartialEq, Eq)]
struct Fingerprint(Vec<(PathBuf, u64, Option<SystemTime>)>);

impl Fingerprint {
    fn of(agents_dir: &Path) -> Fingerprint {
        let mut files = Vec::new();
        walk(agents_dir, 0, &mut files);
        files.sort();
        Fingerprint(files)
    }
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<(PathBuf, u64, Option<SystemTime>)>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    for entry in read.filter_map(Result::ok) {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            if depth < MAX_WALK_DEPTH {
                walk(&entry.path(), depth + 1, out);
            }
        } else {
            out.push((entry.path(), meta.len(), meta.modified().ok()));
        }
    }
}
