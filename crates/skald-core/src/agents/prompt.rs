//! `AGENT.md` directives: `<!-- INCLUDE: file.md -->` and `<!-- KEY -->` substitution sentinels.

use std::path::Path;

/// Includes nest at most this deep, so a cycle cannot recurse forever.
const MAX_INCLUDE_DEPTH: usize = 8;

/// Resolves includes (relative to the agents dir) and turns `<!-- KEY -->` (uppercase) into
/// `__KEY__`. Returns the text and the keys found, in first-seen order.
pub fn resolve_directives(text: &str, agents_dir: &Path) -> (String, Vec<String>) {
    let mut keys = Vec::new();
    let out = resolve(text, agents_dir, 0, &mut keys);
    (out, keys)
}

fn resolve(text: &str, agents_dir: &Path, depth: usize, keys: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 4..];
        let Some(end) = after.find("-->") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = after[..end].trim();
        rest = &after[end + 3..];
        if let Some(file) = inner.strip_prefix("INCLUDE:").map(str::trim) {
            let safe = !file.is_empty() && !file.contains("..") && !file.starts_with('/');
            let included = (safe && depth < MAX_INCLUDE_DEPTH)
                .then(|| std::fs::read_to_string(agents_dir.join(file)).ok())
                .flatten();
            match included {
                Some(t) => out.push_str(&resolve(&t, agents_dir, depth + 1, keys)),
                None => out.push_str(&format!("(missing include: {file})")),
            }
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
    out
}

fn is_key(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}
