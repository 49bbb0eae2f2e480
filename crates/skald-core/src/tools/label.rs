//! UI labels of tool calls: short (60 chars) and full (120 chars), cut on a char boundary.

const SHORT_CHARS: usize = 60;
const FULL_CHARS: usize = 120;

/// `"<name> <detail>"` with whitespace runs (newlines, tabs) collapsed, cut to the label size.
pub(crate) fn label(name: &str, detail: &str, full: bool) -> String {
    let detail = detail.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = if detail.is_empty() { name.to_string() } else { format!("{name} {detail}") };
    cut(&text, if full { FULL_CHARS } else { SHORT_CHARS })
}

/// At most `max` chars; the last one becomes `…` when anything was cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The `path` argument as given (the UI shows the original, not the resolved path).
pub(crate) fn path_arg(args: &serde_json::Value) -> &str {
    args.get("path").and_then(|v| v.as_str()).unwrap_or("")
}

/// `execute_task ⚡ → researcher: find the bug`: who is delegated what (live and in history).
pub(crate) fn delegation_label(name: &str, args: &serde_json::Value) -> String {
    let text =
        |k: &str| args.get(k).and_then(serde_json::Value::as_str).map(str::trim).unwrap_or("");
    let what = [text("description"), text("title"), text("prompt")]
        .into_iter()
        .find(|t| !t.is_empty())
        .unwrap_or("");
    let what = what.lines().next().unwrap_or("");
    let short: String = what.chars().take(80).collect();
    let ellipsis = if what.chars().count() > 80 { "…" } else { "" };
    format!("{name} ⚡ → {}: {short}{ellipsis}", text("agent_id"))
}
