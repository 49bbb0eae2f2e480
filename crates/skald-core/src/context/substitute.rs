//! `__KEY__` sentinels (from `<!-- KEY -->` in `AGENT.md`) filled per request, in one pass: a
//! value is inserted as written and never scanned again, so a value (a path, a source's text)
//! holding `__OTHER__` or `<!-- INCLUDE: … -->` stays literal text.

use std::collections::BTreeMap;

/// Keys Skald fills itself for every request (a source's `substitutions` cannot replace them):
///
/// - `MCP_LIST` — the MCP servers the agent can activate and those it has
/// - `WD` — the session's working directory
/// - `SOURCE` — the session's source (`web`, `cli`, `cron`, `tic`, …)
/// - `HOME` — the user's home directory (empty when unknown)
/// - `DATA_DIR` — Skald's data directory
/// - `MEMORY_DIR` — the memory folder (`<data dir>/memory`)
/// - `AGENT_ID` — the id of the agent the prompt belongs to
/// - `OS` — the operating system, as the dynamic tail shows it
///
/// The date is no key: it changes, and the static system message must stay byte-identical for
/// the prompt cache; the dynamic tail carries it.
pub const ENGINE_KEYS: &[&str] =
    &["MCP_LIST", "WD", "SOURCE", "HOME", "DATA_DIR", "MEMORY_DIR", "AGENT_ID", "OS"];

/// `prompt` with each `__KEY__` whose key is in `values` replaced by its value, scanning the
/// prompt once, left to right; text that is not such a sentinel is kept as written.
pub fn substitute(prompt: &str, values: &BTreeMap<String, String>) -> String {
    if values.is_empty() || !prompt.contains("__") {
        return prompt.to_string();
    }
    // Longest first, so `__A_B__` is never read as `__A__` followed by text.
    let mut sentinels: Vec<(String, &str)> =
        values.iter().map(|(k, v)| (format!("__{k}__"), v.as_str())).collect();
    sentinels.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    let mut out = String::with_capacity(prompt.len());
    let mut rest = prompt;
    while let Some(at) = rest.find("__") {
        out.push_str(&rest[..at]);
        let here = &rest[at..];
        match sentinels.iter().find(|(s, _)| here.starts_with(s.as_str())) {
            Some((sentinel, value)) => {
                out.push_str(value);
                rest = &here[sentinel.len()..];
            }
            None => {
                out.push('_');
                rest = &here[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn values_are_inserted_once_and_never_expanded_again() {
        let values = map(&[("A", "__B__ <!-- INCLUDE: x.md -->"), ("B", "b")]);
        assert_eq!(substitute("[__A__] [__B__]", &values), "[__B__ <!-- INCLUDE: x.md -->] [b]");
        // The same with the keys the other way round in the map's order.
        let values = map(&[("Z", "__B__"), ("B", "__Z__")]);
        assert_eq!(substitute("__Z__/__B__", &values), "__B__/__Z__");
    }

    #[test]
    fn the_longest_key_wins_and_other_underscores_stay() {
        let values = map(&[("MCP", "short"), ("MCP_LIST", "long")]);
        assert_eq!(substitute("__MCP_LIST__ __MCP__", &values), "long short");
        assert_eq!(
            substitute("a __init__ ___X___ __NOPE__ _", &map(&[("X", "x")])),
            "a __init__ _x_ __NOPE__ _"
        );
        assert_eq!(substitute("héllo __K__ wörld", &map(&[("K", "ü")])), "héllo ü wörld");
    }
}
