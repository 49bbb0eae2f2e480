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

/// Labels of calls no registry tool describes: a delegation, `activate_tools everything, git`,
/// and an MCP call as `everything › echo {"message":"hi"}` (server, tool, arguments).
pub(crate) fn interface_label(name: &str, args: &serde_json::Value, full: bool) -> Option<String> {
    if super::names::is_subagent_tool(name) {
        return Some(delegation_label(name, args));
    }
    if name == super::names::ACTIVATE_TOOLS {
        let groups: Vec<&str> = args
            .get("groups")
            .and_then(serde_json::Value::as_array)
            .map(|g| g.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        return Some(label(name, &groups.join(", "), full));
    }
    let (server, tool) = super::names::mcp_tool(name)?;
    let shown = match args {
        serde_json::Value::Object(m) if m.is_empty() => String::new(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    Some(label(&format!("{server} › {tool}"), &shown, full))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::interface_label;

    #[test]
    fn mcp_calls_and_activations_read_as_what_they_do() {
        let args = json!({ "message": "hi" });
        let echo = interface_label("mcp__everything__echo", &args, false);
        assert_eq!(echo.as_deref(), Some(r#"everything › echo {"message":"hi"}"#));
        let bare = interface_label("mcp__git__status", &json!({}), true);
        assert_eq!(bare.as_deref(), Some("git › status"));
        let activate = interface_label("activate_tools", &json!({ "groups": ["a", "b"] }), true);
        assert_eq!(activate.as_deref(), Some("activate_tools a, b"));
        assert_eq!(interface_label("read_file", &json!({}), true), None);
    }
}
