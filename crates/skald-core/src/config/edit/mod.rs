//! Writes the settings page's clients into `config.yml` in place: clients are merged by name, and
//! only the bytes of what changed are replaced, so comments, order and every other setting survive.
//!
//! The edit works on the file's lines (block-style YAML, as the shipped file and the docs write
//! it). Whatever it writes is parsed again and must give exactly the intended configuration;
//! anything else (a layout it does not understand) is an error and the file is left alone.

mod mcp;
mod outline;
mod render;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use yaml_serde::Value;

use super::{ClientConfig, Config, ConfigError};
pub use mcp::{McpEdit, edit_mcp_servers};
use outline::{Item, KeyAt, Line};

/// What the settings page says about one client. Fields it cannot show (`strength`, `scope`,
/// `extra_params`) are not here: the file's values are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientEdit {
    /// The name the client has in the file, when the edit renames it.
    pub previous_name: Option<String>,
    pub name: String,
    pub base_url: String,
    pub model: String,
    pub provider: Option<String>,
    pub api_key_env: Option<String>,
    pub context_window: Option<u64>,
    /// `Some(false)`: never stream; `Some(true)`: stream (the default); `None`: as the file says.
    pub stream: Option<bool>,
}

impl ClientEdit {
    fn file_name(&self) -> &str {
        self.previous_name.as_deref().unwrap_or(&self.name)
    }

    /// The file's client with this edit applied; everything the page does not edit is kept.
    fn apply_to(&self, base: &ClientConfig) -> ClientConfig {
        let stream = match self.stream {
            Some(wanted) if wanted != base.streams() => (!wanted).then_some(false),
            _ => base.stream,
        };
        ClientConfig {
            name: self.name.clone(),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            provider: self.provider.clone(),
            api_key_env: self.api_key_env.clone(),
            context_window: self.context_window,
            stream,
            ..base.clone()
        }
    }

    fn new_client(&self) -> ClientConfig {
        self.apply_to(&ClientConfig::new(String::new(), String::new(), String::new()))
    }
}

/// Why an edit could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EditError {
    #[error("cannot write a value: {0}")]
    Render(String),
    #[error("{what}")]
    Layout { line: usize, what: String },
}

/// Why `merge_clients` wrote nothing, by whose fault (the shells show each under its own code).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The page's values do not make a valid configuration.
    #[error(transparent)]
    Input(ConfigError),
    /// The file is written in a way the page cannot edit in place (inline YAML).
    #[error(transparent)]
    Layout(ConfigError),
    /// The edit did not produce the configuration it planned: a fault of the editor.
    #[error("{}: {message}", path.display())]
    Editor { path: std::path::PathBuf, message: String },
}

/// The file's text with `clients` (in the order the page lists them) merged in, and `order` as the
/// order they are tried. `current` is the file's text parsed (without env overrides).
///
/// Clients are matched by name (`previous_name` for a rename): a matched client keeps the keys the
/// page does not edit; a client of the file that the page no longer lists is removed (its own
/// lines only); new clients are appended to `llm.clients`. `llm.fallback` is written only when the
/// order differs from what the file already gives.
pub fn merge_clients(
    path: &Path,
    text: &str,
    current: &Config,
    clients: &[ClientEdit],
    order: &[String],
) -> Result<String, MergeError> {
    let plan = Plan::new(current, clients, order);
    let edited = apply(text, current, &plan).map_err(|e| match e {
        EditError::Layout { line, what } => MergeError::Layout(ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column: 1,
            message: format!(
                "{what}; the settings page edits block-style YAML only, so change it by hand"
            ),
        }),
        other => MergeError::Editor { path: path.to_path_buf(), message: other.to_string() },
    })?;
    let written = super::parse_text(path, &edited).map_err(MergeError::Input)?;
    if written != plan.expected {
        return Err(MergeError::Editor {
            path: path.to_path_buf(),
            message: "the clients could not be written without changing other settings; nothing \
                      was saved, edit the file by hand"
                .into(),
        });
    }
    Ok(edited)
}

/// What the edit does, decided on the parsed configuration before any text is touched.
struct Plan {
    /// One entry per client of the file, in file order: `None` removes it.
    kept: Vec<Option<ClientConfig>>,
    added: Vec<ClientConfig>,
    /// `Some`: write this fallback list.
    fallback: Option<Vec<String>>,
    /// The configuration the edited file must parse to.
    expected: Config,
}

impl Plan {
    fn new(current: &Config, edits: &[ClientEdit], order: &[String]) -> Self {
        let mut used = vec![false; edits.len()];
        let kept: Vec<Option<ClientConfig>> = current
            .llm
            .clients
            .iter()
            .map(|c| {
                let i = (0..edits.len()).find(|&i| !used[i] && edits[i].file_name() == c.name)?;
                used[i] = true;
                Some(edits[i].apply_to(c))
            })
            .collect();
        let added: Vec<ClientConfig> = edits
            .iter()
            .zip(&used)
            .filter(|(_, used)| !**used)
            .map(|(e, _)| e.new_client())
            .collect();
        let after: Vec<ClientConfig> = kept.iter().flatten().chain(&added).cloned().collect();
        let names: HashSet<&str> = after.iter().map(|c| c.name.as_str()).collect();
        let file_order_holds = current.llm.fallback.iter().all(|n| names.contains(n.as_str()))
            && tried_order(&after, &current.llm.fallback) == tried_order(&after, order);
        let fallback = (!file_order_holds).then(|| order.to_vec());
        let mut expected = current.clone();
        expected.llm.fallback = fallback.clone().unwrap_or_else(|| current.llm.fallback.clone());
        expected.llm.clients = after;
        Plan { kept, added, fallback, expected }
    }
}

/// Names in the order they are tried: the fallback list first, then the rest in file order.
fn tried_order<'a>(clients: &'a [ClientConfig], fallback: &'a [String]) -> Vec<&'a str> {
    let mut out: Vec<&str> = fallback
        .iter()
        .map(String::as_str)
        .filter(|n| clients.iter().any(|c| c.name == *n))
        .collect();
    for c in clients {
        if !out.contains(&c.name.as_str()) {
            out.push(&c.name);
        }
    }
    out
}

/// Bytes to replace, and what replaces them (an empty range inserts).
type Edit = (Range<usize>, String);

/// Replacements of byte ranges, applied together; insertions at one place keep their order.
struct Splices {
    edits: Vec<Edit>,
}

impl Splices {
    fn replace(&mut self, range: Range<usize>, with: String) {
        self.edits.push((range, with));
    }

    fn finish(mut self, text: &str) -> Result<String, EditError> {
        // Stable: insertions at the same offset stay in the order they were made.
        self.edits.sort_by_key(|(r, _)| (r.start, r.end));
        let mut out = String::with_capacity(text.len() + 256);
        let mut at = 0;
        for (range, with) in self.edits {
            if range.start < at {
                return Err(EditError::Render("two edits overlap".into()));
            }
            out.push_str(&text[at..range.start]);
            out.push_str(&with);
            at = range.end;
        }
        out.push_str(&text[at..]);
        Ok(out)
    }
}

/// Where new lines go after line `i`, and the line break to put first when the file's last line
/// has none.
fn after_line(lines: &[Line<'_>], i: usize, eol: &str) -> (usize, String) {
    let line = &lines[i];
    let prefix = if line.next == line.end { eol.to_owned() } else { String::new() };
    (line.next, prefix)
}

/// A value that means "nothing yet" for a mapping or a sequence.
fn is_empty_value(inline: &str) -> bool {
    matches!(inline, "" | "~" | "null" | "[]" | "{}")
}

fn apply(text: &str, current: &Config, plan: &Plan) -> Result<String, EditError> {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines = outline::lines(text);
    let mut splices = Splices { edits: Vec::new() };
    let fallback_line = |indent: usize| -> Result<String, EditError> {
        Ok(match &plan.fallback {
            Some(list) => {
                format!("{}fallback: {}{eol}", " ".repeat(indent), render::flow_list(list)?)
            }
            None => String::new(),
        })
    };
    let items_text = |clients: &[ClientConfig], indent: usize| -> Result<String, EditError> {
        clients.iter().map(|c| render::block_item(c, indent, eol)).collect()
    };

    let Some(llm) = outline::find_key(&lines, 0..lines.len(), 0, "llm") else {
        if plan.added.is_empty() && plan.fallback.is_none() {
            return Ok(text.to_owned());
        }
        let prefix = if text.is_empty() || text.ends_with('\n') { "" } else { eol };
        let block = format!(
            "{prefix}llm:{eol}  clients:{eol}{}{}",
            items_text(&plan.added, 4)?,
            fallback_line(2)?
        );
        splices.replace(text.len()..text.len(), block);
        return splices.finish(text);
    };
    let llm_inline = llm.inline(&lines);
    if !is_empty_value(llm_inline) {
        return Err(layout(&llm, "`llm` is written inline"));
    }
    let children = (llm.line + 1..=llm.last).find(|&i| lines[i].content);
    let child_indent = children.map_or(2, |i| lines[i].indent);
    if !llm_inline.is_empty() {
        splices.replace(llm.value_range(&lines), String::new());
    }
    let inside = llm.line + 1..llm.last + 1;

    let Some(clients) = outline::find_key(&lines, inside.clone(), child_indent, "clients") else {
        if plan.added.is_empty() && plan.fallback.is_none() {
            return splices.finish(text);
        }
        let (at, prefix) = after_line(&lines, llm.last, eol);
        let pad = " ".repeat(child_indent);
        let block =
            format!("{prefix}{pad}clients:{eol}{}", items_text(&plan.added, child_indent + 2)?);
        splices.replace(at..at, block);
        write_fallback(&mut splices, &lines, inside, child_indent, llm.last, eol, plan)?;
        return splices.finish(text);
    };

    let inline = clients.inline(&lines);
    let (items, rewrite_all) = if is_empty_value(inline) {
        if !inline.is_empty() {
            splices.replace(clients.value_range(&lines), String::new());
        }
        (outline::items(&lines, &clients).unwrap_or_default(), false)
    } else if inline.starts_with('[') {
        // A flow list of clients becomes a block list: each client is written out.
        splices.replace(clients.value_range(&lines), String::new());
        (Vec::new(), true)
    } else {
        return Err(layout(&clients, "`llm.clients` is not a list"));
    };
    if !rewrite_all && items.len() != current.llm.clients.len() {
        return Err(layout(&clients, "`llm.clients` holds items that are not clients"));
    }

    let dash = items.first().map_or(child_indent + 2, |i| lines[i.first].indent);
    for ((item, new), old) in items.iter().zip(&plan.kept).zip(&current.llm.clients) {
        edit_item(&mut splices, &lines, item, old, new.as_ref(), dash, eol)?;
    }
    let mut appended = plan.added.clone();
    if rewrite_all {
        appended = plan.kept.iter().flatten().chain(&plan.added).cloned().collect();
    }
    let end = items.last().map_or(clients.last, |i| i.last);
    if !appended.is_empty() {
        let (at, prefix) = after_line(&lines, end, eol);
        splices.replace(at..at, format!("{prefix}{}", items_text(&appended, dash)?));
    }
    write_fallback(&mut splices, &lines, inside, child_indent, end, eol, plan)?;
    splices.finish(text)
}

fn layout(key: &KeyAt, what: &str) -> EditError {
    EditError::Layout { line: key.line + 1, what: what.into() }
}

/// Replaces the value of `llm.fallback`, or adds the key after line `after` (the clients' end).
fn write_fallback(
    splices: &mut Splices,
    lines: &[Line<'_>],
    inside: Range<usize>,
    indent: usize,
    after: usize,
    eol: &str,
    plan: &Plan,
) -> Result<(), EditError> {
    let Some(list) = &plan.fallback else { return Ok(()) };
    let value = render::flow_list(list)?;
    match outline::find_key(lines, inside, indent, "fallback") {
        Some(key) => splices.replace(key.value_range(lines), format!(" {value}")),
        None => {
            let (at, prefix) = after_line(lines, after, eol);
            let pad = " ".repeat(indent);
            splices.replace(at..at, format!("{prefix}{pad}fallback: {value}{eol}"));
        }
    }
    Ok(())
}

/// One client's item: removed, untouched, or changed key by key (a whole rewrite only for an
/// item that is not a block mapping or a change that is not one line).
fn edit_item(
    splices: &mut Splices,
    lines: &[Line<'_>],
    item: &Item,
    old: &ClientConfig,
    new: Option<&ClientConfig>,
    dash: usize,
    eol: &str,
) -> Result<(), EditError> {
    let whole = lines[item.first].start..lines[item.last].next;
    let Some(new) = new else {
        splices.replace(whole, String::new());
        return Ok(());
    };
    if new == old {
        return Ok(());
    }
    match key_edits(lines, item, old, new, eol)? {
        Some(edits) => {
            for (range, with) in edits {
                splices.replace(range, with);
            }
        }
        None => {
            let mut with = render::block_item(new, dash, eol)?;
            if lines[item.last].next == lines[item.last].end {
                // The item ended the file without a line break; keep it that way.
                with.truncate(with.len() - eol.len());
            }
            splices.replace(whole, with);
        }
    }
    Ok(())
}

/// The byte edits that turn `old`'s keys into `new`'s inside a block-mapping item, or `None` when
/// the item must be rewritten whole.
fn key_edits(
    lines: &[Line<'_>],
    item: &Item,
    old: &ClientConfig,
    new: &ClientConfig,
    eol: &str,
) -> Result<Option<Vec<Edit>>, EditError> {
    let Some(key_indent) = item.key_indent else { return Ok(None) };
    let (old_map, new_map) = (mapping(old)?, mapping(new)?);
    let present = outline::item_keys(lines, item);
    let mut edits = Vec::new();
    let mut inserted = String::new();
    // The file's keys in their order, then the ones the edit adds.
    let names = old_map.keys().chain(new_map.keys().filter(|k| !old_map.contains_key(*k)));
    for name in names {
        let Some(key) = name.as_str() else { return Ok(None) };
        if old_map.get(name) == new_map.get(name) {
            continue;
        }
        let at = present.iter().position(|(k, _)| k == key);
        let value = match new_map.get(name) {
            Some(v) => match render::inline_scalar(v)? {
                Some(s) => Some(s),
                None => return Ok(None),
            },
            None => None,
        };
        match (at, value) {
            (Some(i), Some(v)) => edits.push((present[i].1.value_range(lines), format!(" {v}"))),
            (Some(i), None) => {
                let this = &present[i].1;
                if this.line == item.first {
                    // The key shares the dash's line: pull the next key up onto it.
                    let Some((_, next)) = present.get(i + 1) else { return Ok(None) };
                    edits.push((this.key_start..next.key_start, String::new()));
                } else {
                    edits.push((lines[this.line].start..lines[this.last].next, String::new()));
                }
            }
            (None, Some(v)) => {
                inserted.push_str(&format!("{}{key}: {v}{eol}", " ".repeat(key_indent)));
            }
            (None, None) => {}
        }
    }
    if !inserted.is_empty() {
        let (at, prefix) = after_line(lines, item.last, eol);
        edits.push((at..at, format!("{prefix}{inserted}")));
    }
    Ok(Some(edits))
}

fn mapping(c: &ClientConfig) -> Result<yaml_serde::Mapping, EditError> {
    match yaml_serde::to_value(c).map_err(|e| EditError::Render(e.to_string()))? {
        Value::Mapping(m) => Ok(m),
        _ => Err(EditError::Render("a client is not a mapping".into())),
    }
}
