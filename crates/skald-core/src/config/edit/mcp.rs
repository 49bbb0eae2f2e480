//! Adds, removes, enables and disables servers of `mcp.servers` in `config.yml` in place, like the
//! clients' editor: only the lines of the server concerned change, comments and every other
//! setting survive, and the result must parse to exactly the intended configuration.

use std::path::Path;

use super::outline::{self, Item, Line};
use super::{EditError, MergeError, Splices, after_line, is_empty_value, layout, render};
use crate::config::{Config, ConfigError, McpServerEntry};

/// One change to the server list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpEdit {
    /// A new server, at the end of the list (its name must be new).
    Add(McpServerEntry),
    Remove(String),
    SetEnabled {
        name: String,
        enabled: bool,
    },
}

/// The file's text with `edit` applied; `current` is the text parsed (without env overrides).
/// A name that is taken (add) or unknown (remove, enable) is an `Input` error.
pub fn edit_mcp_servers(
    path: &Path,
    text: &str,
    current: &Config,
    edit: &McpEdit,
) -> Result<String, MergeError> {
    let input = |message: String| {
        MergeError::Input(ConfigError::Semantic { path: path.to_path_buf(), message })
    };
    let servers = &current.mcp.servers;
    let position = |name: &str| servers.iter().position(|s| s.name == name);
    let mut expected = current.clone();
    match edit {
        McpEdit::Add(entry) => {
            if position(&entry.name).is_some() {
                return Err(input(format!("an MCP server named `{}` exists already", entry.name)));
            }
            expected.mcp.servers.push(entry.clone());
        }
        McpEdit::Remove(name) => {
            let i = position(name).ok_or_else(|| input(unknown(name)))?;
            expected.mcp.servers.remove(i);
        }
        McpEdit::SetEnabled { name, enabled } => {
            let i = position(name).ok_or_else(|| input(unknown(name)))?;
            expected.mcp.servers[i].enabled = *enabled;
        }
    }
    // The new list must be valid on its own: its problem is told without a line of a file
    // that was never written.
    crate::config::file::validate(path, None, &expected).map_err(MergeError::Input)?;
    let edited = apply(text, current, edit).map_err(|e| match e {
        EditError::Layout { line, what } => MergeError::Layout(ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column: 1,
            message: format!("{what}; Skald edits block-style YAML only, so change it by hand"),
        }),
        other => MergeError::Editor { path: path.to_path_buf(), message: other.to_string() },
    })?;
    let written = crate::config::parse_text(path, &edited).map_err(MergeError::Input)?;
    if written != expected {
        return Err(MergeError::Editor {
            path: path.to_path_buf(),
            message: "the MCP servers could not be written without changing other settings; \
                      nothing was saved, edit the file by hand"
                .into(),
        });
    }
    Ok(edited)
}

fn unknown(name: &str) -> String {
    format!("no MCP server named `{name}` in mcp.servers")
}

fn apply(text: &str, current: &Config, edit: &McpEdit) -> Result<String, EditError> {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines = outline::lines(text);
    let mut splices = Splices { edits: Vec::new() };
    let Some(mcp) = outline::find_key(&lines, 0..lines.len(), 0, "mcp") else {
        let McpEdit::Add(entry) = edit else { return Ok(text.to_owned()) };
        let prefix = if text.is_empty() || text.ends_with('\n') { "" } else { eol };
        let item = render::block_item(entry, 4, eol)?;
        splices.replace(text.len()..text.len(), format!("{prefix}mcp:{eol}  servers:{eol}{item}"));
        return splices.finish(text);
    };
    let mcp_inline = mcp.inline(&lines);
    if !is_empty_value(mcp_inline) {
        return Err(layout(&mcp, "`mcp` is written inline"));
    }
    if !mcp_inline.is_empty() {
        splices.replace(mcp.value_range(&lines), String::new());
    }
    let child_indent =
        (mcp.line + 1..=mcp.last).find(|&i| lines[i].content).map_or(2, |i| lines[i].indent);
    let inside = mcp.line + 1..mcp.last + 1;
    let Some(servers) = outline::find_key(&lines, inside, child_indent, "servers") else {
        let McpEdit::Add(entry) = edit else { return splices.finish(text) };
        let (at, prefix) = after_line(&lines, mcp.last, eol);
        let pad = " ".repeat(child_indent);
        let item = render::block_item(entry, child_indent + 2, eol)?;
        splices.replace(at..at, format!("{prefix}{pad}servers:{eol}{item}"));
        return splices.finish(text);
    };
    let inline = servers.inline(&lines);
    if !is_empty_value(inline) {
        return Err(layout(&servers, "`mcp.servers` is written inline"));
    }
    if !inline.is_empty() {
        splices.replace(servers.value_range(&lines), String::new());
    }
    let items = outline::items(&lines, &servers).unwrap_or_default();
    if items.len() != current.mcp.servers.len() {
        return Err(layout(&servers, "`mcp.servers` holds items that are not servers"));
    }
    let dash = items.first().map_or(child_indent + 2, |i| lines[i.first].indent);
    let item_of =
        |name: &str| current.mcp.servers.iter().position(|s| s.name == name).map(|i| &items[i]);
    match edit {
        McpEdit::Add(entry) => {
            let end = items.last().map_or(servers.last, |i| i.last);
            let (at, prefix) = after_line(&lines, end, eol);
            splices.replace(at..at, format!("{prefix}{}", render::block_item(entry, dash, eol)?));
        }
        McpEdit::Remove(name) => {
            let Some(item) = item_of(name) else { return Ok(text.to_owned()) };
            splices.replace(lines[item.first].start..lines[item.last].next, String::new());
        }
        McpEdit::SetEnabled { name, enabled } => {
            let Some(item) = item_of(name) else { return Ok(text.to_owned()) };
            set_enabled(&mut splices, &lines, item, *enabled, eol)?;
        }
    }
    splices.finish(text)
}

/// Writes `enabled` of one server: its own key's value when it has one, else a new last line
/// (only `enabled: false` is ever written: true is the default).
fn set_enabled(
    splices: &mut Splices,
    lines: &[Line<'_>],
    item: &Item,
    enabled: bool,
    eol: &str,
) -> Result<(), EditError> {
    let keys = outline::item_keys(lines, item);
    if let Some((_, key)) = keys.iter().find(|(k, _)| k == "enabled") {
        splices.replace(key.value_range(lines), format!(" {enabled}"));
        return Ok(());
    }
    if enabled {
        return Ok(());
    }
    let Some(indent) = item.key_indent else {
        return Err(EditError::Layout {
            line: item.first + 1,
            what: "this server is not written as a block mapping".into(),
        });
    };
    let (at, prefix) = after_line(lines, item.last, eol);
    splices.replace(at..at, format!("{prefix}{}enabled: false{eol}", " ".repeat(indent)));
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use super::{McpEdit, edit_mcp_servers};
    use crate::config::{McpServerEntry, parse_text};

    fn entry(name: &str) -> McpServerEntry {
        McpServerEntry {
            name: name.into(),
            description: Some("my notes: read & search".into()),
            command: Some("npx".into()),
            args: vec![
                "-y".into(),
                "@modelcontextprotocol/server-filesystem".into(),
                "/home/me/n".into(),
            ],
            env: [("TOKEN".to_string(), "${NOTES_TOKEN}".to_string())].into(),
            cwd: None,
            url: None,
            api_key_env: None,
            oauth: None,
            enabled: true,
            timeout_secs: None,
            trusted: false,
            keep_connected: false,
        }
    }

    fn edit(text: &str, e: &McpEdit) -> String {
        let path = Path::new("/d/config.yml");
        let current = parse_text(path, text).unwrap();
        edit_mcp_servers(path, text, &current, e).unwrap()
    }

    #[test]
    fn a_server_is_added_to_a_file_without_mcp_and_comments_stay() {
        let text = "# my settings\nllm:\n  max_tool_rounds: 7 # seven\n";
        let out = edit(text, &McpEdit::Add(entry("notes")));
        assert!(out.starts_with(text), "{out}");
        let parsed = parse_text(Path::new("/d/config.yml"), &out).unwrap();
        assert_eq!(parsed.mcp.servers, [entry("notes")]);
        assert_eq!(parsed.llm.max_tool_rounds, 7);
        assert!(!out.contains("enabled"), "the default is not written: {out}");
    }

    #[test]
    fn servers_are_added_after_the_last_removed_alone_and_disabled_in_place() {
        let text = "mcp:\n  servers:\n    # the first\n    - name: a\n      command: a-server\n    - name: b\n      url: http://h/mcp\n      enabled: true\ntimezone: UTC\n";
        let added = edit(text, &McpEdit::Add(entry("c")));
        assert!(added.starts_with(&text[..text.find("timezone").unwrap()]), "{added}");
        assert!(added.ends_with("timezone: UTC\n"), "{added}");
        let names: Vec<String> = parse_text(Path::new("/d/c.yml"), &added)
            .unwrap()
            .mcp
            .servers
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["a", "b", "c"]);

        let removed = edit(text, &McpEdit::Remove("b".into()));
        assert_eq!(
            removed,
            "mcp:\n  servers:\n    # the first\n    - name: a\n      command: a-server\ntimezone: UTC\n"
        );

        let off = McpEdit::SetEnabled { name: "a".into(), enabled: false };
        let disabled = edit(text, &off);
        assert!(
            disabled.contains("      command: a-server\n      enabled: false\n    - name: b"),
            "{disabled}"
        );
        let off_b = McpEdit::SetEnabled { name: "b".into(), enabled: false };
        assert!(edit(text, &off_b).contains("      enabled: false\ntimezone"));
    }

    #[test]
    fn names_taken_or_unknown_and_inline_lists_are_refused_with_the_file_untouched() {
        let path = Path::new("/d/config.yml");
        let text = "mcp:\n  servers:\n    - name: a\n      command: x\n";
        let current = parse_text(path, text).unwrap();
        let taken = edit_mcp_servers(path, text, &current, &McpEdit::Add(entry("a"))).unwrap_err();
        assert!(taken.to_string().contains("`a` exists already"), "{taken}");
        let gone =
            edit_mcp_servers(path, text, &current, &McpEdit::Remove("z".into())).unwrap_err();
        assert!(gone.to_string().contains("no MCP server named `z`"), "{gone}");
        let inline = "mcp: {servers: [{name: a, command: x}]}\n";
        let current = parse_text(path, inline).unwrap();
        let err = edit_mcp_servers(path, inline, &current, &McpEdit::Add(entry("b"))).unwrap_err();
        assert!(err.to_string().contains("config.yml:1:1: `mcp` is written inline"), "{err}");
    }
}
