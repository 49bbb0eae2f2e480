//! `sources:` — what each surface (the app and `serve`'s page `web`, the terminal `cli`, jobs'
//! runs `cron`, TIC ticks `tic`, a later chat bridge) adds to its sessions' requests: static
//! system text (format rules, cache-safe), a short tail reminder and prompt substitutions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Longest `system` or `tail_reminder` text accepted: each costs tokens on every request.
pub const MAX_SOURCE_TEXT_CHARS: usize = 4_000;

/// Built-in format rules of the surfaces that render replies. Short: every request pays them.
const WEB_SYSTEM: &str = "Your replies are rendered as Markdown (GitHub flavour): use lists, \
    tables and fenced code blocks with a language where they help.";
const CLI_SYSTEM: &str = "Your replies are printed as plain text in a terminal: no Markdown \
    tables, headings or emphasis; indent code or commands instead of fencing them.";
const CLI_TAIL: &str = "Reminder: plain text for a terminal, no Markdown.";

/// One source's entry in `sources:`. A field left out keeps the built-in default of that
/// source; an empty string turns it off.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourceContextConfig {
    /// Appended to the static system message of the source's sessions (after the agent's prompt
    /// and its memory files): the same bytes every request, so the prompt cache keeps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// A last system message after everything else, every request (anti-drift, e.g. format).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail_reminder: Option<String>,
    /// Values of `<!-- KEY -->` placeholders in the agents' prompts for this source's sessions.
    /// The engine's own keys (`WD`, `SOURCE`, ...) cannot be replaced.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub substitutions: BTreeMap<String, String>,
}

/// What a source adds to its sessions' requests, its built-in defaults and the file merged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceContext {
    pub system: Option<String>,
    pub tail_reminder: Option<String>,
    pub substitutions: BTreeMap<String, String>,
}

/// The built-in context of `source` (before `sources:` in the file).
fn built_in(source: &str) -> SourceContext {
    let text = |s: &str| Some(s.to_string());
    match source {
        "web" => SourceContext { system: text(WEB_SYSTEM), ..Default::default() },
        "cli" => SourceContext {
            system: text(CLI_SYSTEM),
            tail_reminder: text(CLI_TAIL),
            ..Default::default()
        },
        _ => SourceContext::default(),
    }
}

/// `source`'s context: its entry in `sources:` field by field over the built-in default.
pub fn source_context(
    configured: &BTreeMap<String, SourceContextConfig>,
    source: &str,
) -> SourceContext {
    let mut context = built_in(source);
    if let Some(entry) = configured.get(source) {
        if let Some(system) = &entry.system {
            context.system = Some(system.clone());
        }
        if let Some(reminder) = &entry.tail_reminder {
            context.tail_reminder = Some(reminder.clone());
        }
        context.substitutions = entry.substitutions.clone();
    }
    let blank = |s: &Option<String>| s.as_deref().is_none_or(|s| s.trim().is_empty());
    if blank(&context.system) {
        context.system = None;
    }
    if blank(&context.tail_reminder) {
        context.tail_reminder = None;
    }
    context
}

/// Whether `key` can be a `<!-- KEY -->` placeholder: uppercase letters, digits and `_`, starting
/// with a letter (what the agent loader turns into `__KEY__`).
pub fn is_substitution_key(key: &str) -> bool {
    key.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && key.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// What is wrong in `sources:`, as `(text to find in the file, message)`.
pub fn problem(configured: &BTreeMap<String, SourceContextConfig>) -> Option<(String, String)> {
    for (source, entry) in configured {
        if source.is_empty() || !source.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Some((
                source.clone(),
                format!("sources: `{source}` is not a source name (letters, digits and `-`)"),
            ));
        }
        for (field, text) in [("system", &entry.system), ("tail_reminder", &entry.tail_reminder)] {
            if let Some(text) = text
                && text.chars().count() > MAX_SOURCE_TEXT_CHARS
            {
                return Some((
                    format!("{field}:"),
                    format!(
                        "sources.{source}.{field}: {} characters, more than {MAX_SOURCE_TEXT_CHARS}: \
                         it is sent with every request",
                        text.chars().count()
                    ),
                ));
            }
        }
        for key in entry.substitutions.keys() {
            if !is_substitution_key(key) {
                return Some((
                    key.clone(),
                    format!(
                        "sources.{source}.substitutions: `{key}` is not a placeholder name \
                         (uppercase letters, digits and `_`, as in <!-- TEAM_NAME -->)"
                    ),
                ));
            }
            if crate::context::ENGINE_KEYS.contains(&key.as_str()) {
                return Some((
                    key.clone(),
                    format!(
                        "sources.{source}.substitutions: `{key}` is filled by Skald itself and \
                         cannot be set here"
                    ),
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn entry(system: Option<&str>, reminder: Option<&str>) -> SourceContextConfig {
        SourceContextConfig {
            system: system.map(str::to_string),
            tail_reminder: reminder.map(str::to_string),
            substitutions: BTreeMap::new(),
        }
    }

    #[test]
    fn defaults_per_surface_and_the_file_overrides_field_by_field() {
        let none = BTreeMap::new();
        assert!(source_context(&none, "web").system.unwrap().contains("Markdown"));
        assert_eq!(source_context(&none, "web").tail_reminder, None);
        assert!(source_context(&none, "cli").tail_reminder.unwrap().contains("plain text"));
        assert_eq!(source_context(&none, "tic"), SourceContext::default());

        let mut file = BTreeMap::new();
        file.insert("cli".to_string(), entry(None, Some("")));
        file.insert("telegram".to_string(), entry(Some("Use Telegram HTML."), Some("HTML only.")));
        let cli = source_context(&file, "cli");
        assert!(cli.system.unwrap().contains("terminal"), "left out: the default stays");
        assert_eq!(cli.tail_reminder, None, "an empty string turns it off");
        let bridge = source_context(&file, "telegram");
        assert_eq!(bridge.system.as_deref(), Some("Use Telegram HTML."));
        assert_eq!(bridge.tail_reminder.as_deref(), Some("HTML only."));
    }

    #[test]
    fn bad_names_engine_keys_and_long_texts_are_refused() {
        let mut file = BTreeMap::new();
        let mut bad = entry(None, None);
        bad.substitutions.insert("team".into(), "x".into());
        file.insert("web".to_string(), bad);
        assert!(problem(&file).unwrap().1.contains("not a placeholder name"));

        let mut engine = entry(None, None);
        engine.substitutions.insert("WD".into(), "/elsewhere".into());
        file.insert("web".to_string(), engine);
        assert!(problem(&file).unwrap().1.contains("filled by Skald itself"));

        file.insert("web".to_string(), entry(Some(&"x".repeat(MAX_SOURCE_TEXT_CHARS + 1)), None));
        assert!(problem(&file).unwrap().1.contains("sources.web.system"));

        let mut file = BTreeMap::new();
        file.insert("we b".to_string(), entry(None, None));
        assert!(problem(&file).unwrap().1.contains("not a source name"));
    }
}
