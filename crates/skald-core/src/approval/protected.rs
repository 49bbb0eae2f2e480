//! Protected paths: places where a change makes a program run later, or whose content is a
//! credential. A call that touches one always asks a person, whatever bypass or RunContext
//! pre-authorisation is in force (only an explicit `allow` rule a person wrote lets it through).
//!
//! Written (never bypassed):
//! - the data dir except `memory/`: `config.yml` (MCP servers are programs), `agents/`, the
//!   database, `serve.token`, logs;
//! - git metadata (`.git/` — hooks run on commit, `core.fsmonitor` and friends on `git status`)
//!   and husky's `.husky/` hooks;
//! - `.envrc` (direnv runs it on `cd`), `.vscode/` (tasks that run when the folder opens), and
//!   `.github/workflows/` (runs on push, with the repository's secrets);
//! - the user's home dot-entries (`~/.bashrc`, `~/.ssh/`, `~/.config/`, `~/.local/` …) unless the
//!   working directory itself lies inside that entry (a dotfiles project is edited like any).
//!
//! Read (asked even inside the working directory, never bypassed): the data dir except
//! `memory/`, and the home dot-entries above (keys, tokens and credentials live there).

use std::path::{Component, Path, PathBuf};

/// Why a path is protected, for the person and the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// Skald's own data dir (outside `memory/`).
    DataDir,
    /// A file that makes a program run on an ordinary action (commit, `cd`, opening the folder, push).
    RunsLater(&'static str),
    /// An entry of the user's home whose name starts with a dot.
    HomeDotEntry,
    /// `mcp.servers`: which programs Skald starts as MCP servers.
    McpServers,
}

impl Protection {
    /// One clause saying what the path is, for the inbox and the model.
    pub fn describe(self) -> String {
        match self {
            Self::DataDir => "Skald's own data (configuration, agents, database, tokens)".into(),
            Self::RunsLater(what) => what.to_string(),
            Self::HomeDotEntry => {
                "a dotfile or dot-folder of your home (shell startup files, keys, credentials)"
                    .into()
            }
            Self::McpServers => "the MCP servers Skald starts (each is a program)".into(),
        }
    }
}

/// The protected places of one call's world, with canonical roots.
#[derive(Debug, Clone)]
pub struct ProtectedPaths {
    data_dir: PathBuf,
    memory: PathBuf,
    home: Option<PathBuf>,
    workdir: PathBuf,
}

impl ProtectedPaths {
    /// Roots are canonicalised so they compare with resolved call paths.
    pub fn new(data_dir: &Path, home: Option<&Path>, workdir: &Path) -> Self {
        let data_dir = canon(data_dir);
        Self {
            memory: data_dir.join("memory"),
            data_dir,
            home: home.map(canon),
            workdir: canon(workdir),
        }
    }

    /// Whether writing `path` (canonical) may make a program run later, or touches a credential.
    pub fn for_write(&self, path: &Path) -> Option<Protection> {
        // Agent memory is meant to be written by agents, wherever the data dir lives.
        if path.starts_with(&self.memory) {
            return None;
        }
        if let Some(p) = self.own_data(path) {
            return Some(p);
        }
        if let Some(what) = runs_later(path) {
            return Some(Protection::RunsLater(what));
        }
        self.home_dot_entry(path)
    }

    /// Whether reading `path` (canonical) may hand a secret to the model.
    pub fn for_read(&self, path: &Path) -> Option<Protection> {
        if path.starts_with(&self.memory) {
            return None;
        }
        self.own_data(path).or_else(|| self.home_dot_entry(path))
    }

    fn own_data(&self, path: &Path) -> Option<Protection> {
        path.starts_with(&self.data_dir).then_some(Protection::DataDir)
    }

    fn home_dot_entry(&self, path: &Path) -> Option<Protection> {
        let home = self.home.as_ref()?;
        let rest = path.strip_prefix(home).ok()?;
        let Some(Component::Normal(first)) = rest.components().next() else { return None };
        if !first.to_string_lossy().starts_with('.') {
            return None;
        }
        // A project inside the dot-entry (a dotfiles repository) is the user's own work.
        let entry = home.join(first);
        (!self.workdir.starts_with(&entry)).then_some(Protection::HomeDotEntry)
    }
}

/// The kind of file a path is when a change to it runs a program on an ordinary action.
fn runs_later(path: &Path) -> Option<&'static str> {
    let names: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let has = |n: &str| names.iter().any(|c| c == n);
    if has(".git") {
        return Some(
            "git metadata (hooks run on commit, its config can run programs on `git status`)",
        );
    }
    if has(".husky") {
        return Some("git hooks managed by husky (they run on commit)");
    }
    if names.last().is_some_and(|n| n == ".envrc") {
        return Some("a direnv file (it runs when a shell enters the folder)");
    }
    if has(".vscode") {
        return Some("editor settings and tasks (they can run programs when the folder opens)");
    }
    if names.windows(2).any(|w| w[0] == ".github" && w[1] == "workflows") {
        return Some("a CI workflow (it runs on push, with the repository's secrets)");
    }
    None
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world(workdir: &str) -> ProtectedPaths {
        ProtectedPaths::new(
            Path::new("/home/me/.local/share/Skald"),
            Some(Path::new("/home/me")),
            Path::new(workdir),
        )
    }

    #[test]
    fn the_data_dir_is_protected_except_memory() {
        let w = world("/home/me");
        let data = Path::new("/home/me/.local/share/Skald");
        for p in ["config.yml", "skald.db", "serve.token", "agents/x/agent.yml"] {
            assert_eq!(w.for_write(&data.join(p)), Some(Protection::DataDir), "{p}");
            assert_eq!(w.for_read(&data.join(p)), Some(Protection::DataDir), "{p}");
        }
        assert_eq!(w.for_write(&data.join("memory/notes.md")), None);
        assert_eq!(w.for_read(&data.join("memory/notes.md")), None);
    }

    #[test]
    fn files_that_run_programs_later_are_protected_for_writes_only() {
        let w = world("/home/me/project");
        for p in [
            "/home/me/project/.git/hooks/pre-commit",
            "/home/me/project/.git/config",
            "/home/me/project/sub/.git",
            "/home/me/project/.husky/pre-push",
            "/home/me/project/.envrc",
            "/home/me/project/.vscode/tasks.json",
            "/home/me/project/.github/workflows/ci.yml",
        ] {
            assert!(matches!(w.for_write(Path::new(p)), Some(Protection::RunsLater(_))), "{p}");
            assert_eq!(w.for_read(Path::new(p)), None, "{p}");
        }
        for p in [
            "/home/me/project/src/main.rs",
            "/home/me/project/.github/CODEOWNERS",
            "/home/me/project/.gitignore",
            "/home/me/project/envrc.md",
        ] {
            assert_eq!(w.for_write(Path::new(p)), None, "{p}");
        }
    }

    #[test]
    fn home_dot_entries_are_protected_unless_the_project_lives_in_one() {
        let from_home = world("/home/me");
        for p in ["/home/me/.bashrc", "/home/me/.ssh/id_ed25519", "/home/me/.config/gh/hosts.yml"] {
            assert_eq!(from_home.for_read(Path::new(p)), Some(Protection::HomeDotEntry), "{p}");
            assert_eq!(from_home.for_write(Path::new(p)), Some(Protection::HomeDotEntry), "{p}");
        }
        assert_eq!(from_home.for_read(Path::new("/home/me/notes/.hidden")), None);
        let dotfiles = world("/home/me/.config/nvim");
        assert_eq!(dotfiles.for_write(Path::new("/home/me/.config/nvim/init.lua")), None);
        assert_eq!(
            dotfiles.for_read(Path::new("/home/me/.ssh/id_ed25519")),
            Some(Protection::HomeDotEntry)
        );
    }
}
