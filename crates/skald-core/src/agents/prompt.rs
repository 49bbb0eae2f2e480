//! `AGENT.md` directives: `<!-- INCLUDE: file.md -->`, `<!-- AGENTS_LIST -->` and `<!-- KEY -->`
//! substitution sentinels.

use std::path::{Path, PathBuf};

/// Includes nest at most this deep, so a cycle cannot recurse forever.
const MAX_INCLUDE_DEPTH: usize = 8;

/// The directive replaced by the list of dispatchable task agents.
const AGENTS_LIST: &str = "AGENTS_LIST";

/// An `INCLUDE` that cannot be honoured; the agent using it is broken, not silently shortened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectiveError {
    #[error("INCLUDE `{0}`: only paths inside the agents directory can be included")]
    Outside(String),
    #[error("INCLUDE `{file}`: {path}: {message}", path = path.display())]
    Unreadable { file: String, path: PathBuf, message: String },
    #[error("INCLUDE `{0}`: includes nest deeper than {MAX_INCLUDE_DEPTH} (a cycle?)")]
    TooDeep(String),
}

/// Resolves includes (relative to the agents dir), replaces `<!-- AGENTS_LIST -->` with
/// `agents_list`, and turns other `<!-- KEY -->` (uppercase) into `__KEY__`. Returns the text
/// and the keys found, in first-seen order.
pub fn resolve_directives(
    text: &str,
    agents_dir: &Path,
    agents_list: &str,
) -> Result<(String, Vec<String>), DirectiveError> {
    let mut keys = Vec::new();
    let ctx = Ctx { agents_dir, agents_list };
    let out = ctx.resolve(text, 0, &mut keys)?;
    Ok((out, keys))
}

struct Ctx<'a> {
    agents_dir: &'a Path,
    agents_list: &'a str,
}

impl Ctx<'_> {
    fn resolve(
        &self,
        text: &str,
        depth: usize,
        keys: &mut Vec<String>,
    ) -> Result<String, DirectiveError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("<!--") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 4..];
            let Some(end) = after.find("-->") else {
                out.push_str(&rest[start..]);
                return Ok(out);
            };
            let inner = after[..end].trim();
            rest = &after[end + 3..];
            if let Some(file) = inner.strip_prefix("INCLUDE:").map(str::trim) {
                let included = self.include(file, depth)?;
                out.push_str(&self.resolve(&included, depth + 1, keys)?);
            } else if inner == AGENTS_LIST {
                out.push_str(self.agents_list);
            } else if is_key(inner) {
                if !keys.iter().any(|k| k == inner) {
                    keys.push(inner.to_string());
                }
                out.push_str(&format!("__{inner}__"));
            } else {
                // An ordinary comment stays as written.
                out.push_str("<!--");
                out.push_str(&after[..end]);
                out.push_str("-->");
            }
        }
        out.push_str(rest);
        Ok(out)
    }

    fn include(&self, file: &str, depth: usize) -> Result<String, DirectiveError> {
        let inside = Path::new(file)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
        if file.is_empty() || !inside {
            return Err(DirectiveError::Outside(file.to_string()));
        }
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(DirectiveError::TooDeep(file.to_string()));
        }
        let path = self.agents_dir.join(file);
        crate::regular_file::read_to_string(&path, None).map_err(|e| DirectiveError::Unreadable {
            file: file.to_string(),
            message: e.reason(),
            path,
        })
    }
}

fn is_key(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn resolve(text: &str, dir: &Path) -> Result<(String, Vec<String>), DirectiveError> {
        resolve_directives(text, dir, "- **generalist** — does things")
    }

    #[test]
    fn agents_list_is_replaced_and_is_not_a_substitution_key() {
        let dir = tempfile::tempdir().unwrap();
        let (text, keys) = resolve("Delegate to:\n<!-- AGENTS_LIST -->\nend", dir.path()).unwrap();
        assert_eq!(text, "Delegate to:\n- **generalist** — does things\nend");
        assert!(keys.is_empty(), "{keys:?}");
    }

    #[test]
    fn includes_nest_and_their_keys_and_lists_resolve() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("common")).unwrap();
        std::fs::write(dir.path().join("common/a.md"), "A <!-- INCLUDE: common/b.md -->").unwrap();
        std::fs::write(dir.path().join("common/b.md"), "B <!-- WD --> <!-- AGENTS_LIST -->")
            .unwrap();
        let (text, keys) =
            resolve("<!-- INCLUDE: common/a.md --> <!-- MCP_LIST --> <!-- WD -->", dir.path())
                .unwrap();
        assert_eq!(text, "A B __WD__ - **generalist** — does things __MCP_LIST__ __WD__");
        assert_eq!(keys, ["WD", "MCP_LIST"]);
    }

    #[test]
    fn plain_and_lowercase_comments_stay_and_an_unclosed_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (text, keys) = resolve("<!-- note --> <!-- Key --> <!-- open", dir.path()).unwrap();
        assert_eq!(text, "<!-- note --> <!-- Key --> <!-- open");
        assert!(keys.is_empty());
    }

    #[test]
    fn a_missing_include_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve("x <!-- INCLUDE: common/gone.md -->", dir.path()).unwrap_err();
        assert!(
            matches!(&err, DirectiveError::Unreadable { file, .. } if file == "common/gone.md")
        );
        assert!(err.to_string().contains("gone.md"), "{err}");
    }

    #[test]
    fn includes_outside_the_agents_dir_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["../secret.md", "/etc/passwd", ""] {
            let err = resolve(&format!("<!-- INCLUDE: {file} -->"), dir.path()).unwrap_err();
            assert_eq!(err, DirectiveError::Outside(file.to_string()));
        }
    }

    #[test]
    fn an_include_cycle_stops_with_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("loop.md"), "again <!-- INCLUDE: loop.md -->").unwrap();
        let err = resolve("<!-- INCLUDE: loop.md -->", dir.path()).unwrap_err();
        assert_eq!(err, DirectiveError::TooDeep("loop.md".into()));
    }
}
