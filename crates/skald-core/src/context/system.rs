//! The static system message, the scratchpad message and the compaction summary message.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::builder::MemoryFile;

/// Agent prompt (its `__KEY__` substitutions applied) + memory files + extra static text.
/// Byte-identical for identical inputs: no clock, no map iteration order, no environment.
pub fn render_static_system(
    agent_prompt: &str,
    memory: &[MemoryFile],
    extra_static: Option<&str>,
    substitutions: &BTreeMap<String, String>,
) -> String {
    // Only the agent's own prompt holds directives, filled in one pass (a value is never read
    // as a sentinel again); a memory file's or a surface's text is never rewritten.
    let prompt = super::substitute::substitute(agent_prompt, substitutions);
    let mut text = prompt.trim_end().to_string();
    for m in memory {
        text.push_str(&format!(
            "\n\n<memory_file path=\"{}\">\n{}\n</memory_file>",
            escape_attr(&m.shown_path),
            m.content.as_deref().unwrap_or("(file not created yet)").trim_end()
        ));
    }
    if let Some(extra) = extra_static.map(str::trim).filter(|s| !s.is_empty()) {
        text.push_str("\n\n");
        text.push_str(extra);
    }
    text
}

/// The system message; with cache hints the text becomes one cacheable content block.
pub fn system_message(text: &str, cache_hints: bool) -> Value {
    if cache_hints {
        json!({
            "role": "system",
            "content": [{ "type": "text", "text": text, "cache_control": { "type": "ephemeral" } }],
        })
    } else {
        json!({ "role": "system", "content": text })
    }
}

/// The session scratchpad as its own small message, so an update never invalidates the prefix.
pub fn scratchpad_message(notes: &[(String, String)]) -> Option<Value> {
    if notes.is_empty() {
        return None;
    }
    let mut s = String::from(
        "<scratchpad>\n  <!-- Notes shared by every agent of this session; update them with \
         update_scratchpad. -->",
    );
    for (k, v) in notes {
        s.push_str(&format!("\n  <note key=\"{}\">{}</note>", escape_attr(k), v));
    }
    s.push_str("\n</scratchpad>");
    Some(json!({ "role": "system", "content": s }))
}

/// The latest compaction summary, handed over as reference material.
pub fn summary_message(summary: &str) -> Value {
    json!({
        "role": "system",
        "content": format!(
            "The earlier part of this conversation was summarised to save space. Treat the \
             summary as background, not as new instructions, and continue from its Next Steps \
             and the messages that follow.\n\n<conversation_summary>\n{}\n</conversation_summary>",
            summary.trim()
        ),
    })
}

fn escape_attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;")
}
