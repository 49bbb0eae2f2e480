//! The paths a call names besides its own target: the words of a shell command and the string
//! arguments of an MCP tool, resolved like a file tool's path. The gate checks them against the
//! deny rules and the protected places.
//!
//! This reads text, it does not run it: a command that builds a path at run time (`$(…)`, a
//! variable other than `$HOME`, `base64 -d`) names nothing here. `docs/reliability.md` says so.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::tools::paths;

/// Most paths one call is checked for (a glob or a long command cannot make the gate slow).
const MAX_PATHS: usize = 512;

/// Paths a shell command's words name, resolved against `cwd`. A word counts when it looks like
/// a path (has a `/`, starts with `~` or `.`) or names an entry that exists; globs are expanded
/// against the filesystem, and their fixed leading directory counts too.
pub fn shell_paths(command: &str, cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for word in shell_words(command) {
        // `--out=secrets/x`, `VAR=secrets/x`: what follows each `=` is a word of its own.
        for piece in std::iter::once(word.as_str()).chain(word.split('=').skip(1)) {
            candidate(piece, cwd, home, &mut out);
            if out.len() >= MAX_PATHS {
                return out;
            }
        }
    }
    out
}

/// Paths the string values of `args` (at any depth) name, when they look like paths.
pub fn argument_paths(args: &Value, cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![args];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if !s.contains("://") && looks_like_path(s) => {
                candidate(s, cwd, home, &mut out);
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
        if out.len() >= MAX_PATHS {
            break;
        }
    }
    out
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/') || s.starts_with('~') || s.starts_with('.')
}

fn candidate(word: &str, cwd: &Path, home: Option<&Path>, out: &mut Vec<PathBuf>) {
    let word = word.trim();
    if word.is_empty() || word.contains('\0') || word.starts_with('-') && !word.contains('/') {
        return;
    }
    let expanded = expand_home(word, home);
    let word = expanded.as_deref().unwrap_or(word);
    if has_glob(word) {
        let fixed = fixed_prefix(word);
        if let Ok(base) = paths::resolve_path(cwd, if fixed.is_empty() { "." } else { &fixed }) {
            out.push(base);
        }
        for hit in expand_glob(word, cwd) {
            out.push(hit);
        }
        return;
    }
    if !looks_like_path(word) && std::fs::symlink_metadata(cwd.join(word)).is_err() {
        return;
    }
    if let Ok(p) = paths::resolve_path(cwd, word) {
        out.push(p);
    }
}

/// `~`, `~/x`, `$HOME/x`, `${HOME}/x` with the user's home.
fn expand_home(word: &str, home: Option<&Path>) -> Option<String> {
    let home = home?.display().to_string();
    for prefix in ["${HOME}", "$HOME", "~"] {
        if let Some(rest) = word.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return Some(format!("{home}{rest}"));
        }
    }
    None
}

/// The words of a command as the shell would split them: quotes removed (`se'cr'ets` is
/// `secrets`), backslash escapes applied, split at blanks and at `| & ; < > ( )` and backticks.
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                word.push(e);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next()
                    && e != '\n'
                {
                    word.push(e);
                }
            }
            c if c.is_whitespace() || "|&;<>()`".contains(c) => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                // `$(` opens a command of its own: what follows is split like the rest.
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// The directory part of a glob before its first wildcard component.
fn fixed_prefix(word: &str) -> String {
    let mut fixed: Vec<&str> = Vec::new();
    for part in word.split('/') {
        if has_glob(part) {
            break;
        }
        fixed.push(part);
    }
    if word.starts_with('/') && fixed.len() <= 1 { "/".to_string() } else { fixed.join("/") }
}

/// The entries a glob matches, walked component by component (bounded).
fn expand_glob(word: &str, cwd: &Path) -> Vec<PathBuf> {
    let (mut current, rest) = match word.strip_prefix('/') {
        Some(rest) => (vec![PathBuf::from("/")], rest),
        None => (vec![cwd.to_path_buf()], word),
    };
    for part in rest.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for dir in &current {
            if !has_glob(part) {
                next.push(dir.join(part));
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.flatten().take(MAX_PATHS) {
                let name = entry.file_name().to_string_lossy().into_owned();
                if wildcard(part, &name) {
                    next.push(dir.join(name));
                }
            }
        }
        next.truncate(MAX_PATHS);
        current = next;
    }
    current
        .into_iter()
        .filter_map(|p| paths::resolve_path(cwd, &p.to_string_lossy()).ok())
        .collect()
}

/// `*`, `?` and `[…]` (with `!`/`^` negation and ranges) against one name. Like the shell, a
/// leading wildcard does not match a leading dot.
fn wildcard(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    matches_from(&p, &n)
}

fn matches_from(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| matches_from(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && matches_from(&p[1..], &n[1..]),
        Some('[') => match (class_end(p), n.first()) {
            (Some(end), Some(c)) => {
                in_class(&p[1..end], *c) && matches_from(&p[end + 1..], &n[1..])
            }
            (Some(_), None) => false,
            (None, _) => n.first() == Some(&'[') && matches_from(&p[1..], &n[1..]),
        },
        Some(c) => n.first() == Some(c) && matches_from(&p[1..], &n[1..]),
    }
}

fn class_end(p: &[char]) -> Option<usize> {
    // A `]` right after `[` or `[!` is a member, not the end.
    let start = if matches!(p.get(1), Some('!' | '^')) { 3 } else { 2 };
    (start..p.len()).find(|&i| p[i] == ']')
}

fn in_class(class: &[char], c: char) -> bool {
    let (negated, body) = match class.first() {
        Some('!' | '^') => (true, &class[1..]),
        _ => (false, class),
    };
    let mut hit = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            hit |= body[i] <= c && c <= body[i + 2];
            i += 3;
        } else {
            hit |= body[i] == c;
            i += 1;
        }
    }
    hit != negated
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn words_are_split_and_unquoted_as_the_shell_does() {
        assert_eq!(
            shell_words(r#"cat se'cr'ets/key.txt|base64 >out; echo "a b"\ c $(ls x)`id`"#),
            ["cat", "secrets/key.txt", "base64", "out", "echo", "a b c", "ls", "x", "id"]
        );
    }

    #[test]
    fn a_command_names_existing_entries_paths_globs_and_assignments() {
        let dir = tempfile::tempdir().unwrap();
        let wd = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(wd.join("secrets")).unwrap();
        std::fs::write(wd.join("secrets/key.txt"), "k").unwrap();
        let named = |cmd: &str| shell_paths(cmd, &wd, Some(Path::new("/home/me")));
        let key = wd.join("secrets/key.txt");
        assert!(named("cat secrets/key.txt").contains(&key));
        assert!(named("tar czf x.tgz secrets").contains(&wd.join("secrets")));
        assert!(named("cat secr*/k?y.[t]xt").contains(&key));
        assert!(named("cat ./secrets/../secrets//key.txt").contains(&key));
        assert!(named("tool --input=secrets/key.txt").contains(&key));
        assert!(named("cat ~/.ssh/id_rsa").contains(&PathBuf::from("/home/me/.ssh/id_rsa")));
        assert!(named("cat $HOME/.netrc").contains(&PathBuf::from("/home/me/.netrc")));
        // Words that are neither paths nor existing entries name nothing.
        assert_eq!(named("echo the keys are safe"), Vec::<PathBuf>::new());
    }

    #[test]
    fn string_arguments_that_look_like_paths_are_named() {
        let wd = Path::new("/work");
        let args = serde_json::json!({
            "path": "secrets/api-key.txt",
            "paths": ["a/b", "https://example.com/x"],
            "n": 3,
            "note": "hello"
        });
        let mut got = argument_paths(&args, wd, None);
        got.sort();
        assert_eq!(got, [PathBuf::from("/work/a/b"), PathBuf::from("/work/secrets/api-key.txt")]);
    }

    #[test]
    fn wildcards_match_like_the_shell() {
        assert!(wildcard("*.txt", "key.txt") && !wildcard("*.txt", ".key.txt"));
        assert!(wildcard("k?y", "key") && wildcard("[a-k]ey", "key") && !wildcard("[!k]ey", "key"));
        assert!(wildcard(".*", ".ssh") && wildcard("[]]x", "]x"));
    }
}
