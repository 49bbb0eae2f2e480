//! `skald sessions list|show`.

use skald_api::{Caller, ListSessionsParams, SessionDetailParams, ops};
use skald_core::Engine;
use skald_protocol::{ApiError, DebugMessage, HitKind, SearchHit, SessionListQuery};

use crate::cli::SessionsCommand;
use crate::exit;
use crate::output::{Output, cell, one_line};

pub async fn run(engine: &Engine, cmd: SessionsCommand, out: &Output) -> Result<u8, ApiError> {
    match cmd {
        SessionsCommand::List { source, search, page, per_page } => {
            let query = SessionListQuery { source, search, page, per_page };
            let list =
                ops::list_sessions(engine, &Caller::Cli, ListSessionsParams { query }).await?;
            if out.is_json() {
                out.json(&list)?;
            } else if list.total == 0 {
                out.line("No sessions yet: `skald chat \"…\"` starts one.");
            } else if list.items.is_empty() {
                let pages = list.total.div_ceil(u64::from(list.per_page)).max(1);
                out.line(&format!(
                    "No sessions on page {}: {} sessions fill {pages} page{}.",
                    list.page,
                    list.total,
                    if pages == 1 { "" } else { "s" }
                ));
            } else {
                out.line(&format!(
                    "{:>6}  {:<10} {:<10} {:>8}  {:<24}  TITLE",
                    "ID", "SOURCE", "AGENT", "MESSAGES", "LAST ACTIVITY"
                ));
                for s in &list.items {
                    out.line(&format!(
                        "{:>6}  {:<10} {:<10} {:>8}  {:<24}  {}",
                        s.id,
                        cell(&s.source, 10),
                        cell(&s.agent_id, 10),
                        s.message_count,
                        s.last_message_at.as_deref().unwrap_or(&s.created_at),
                        cell(s.title.as_deref().unwrap_or(""), 60)
                    ));
                    if let Some(hit) = &s.best_hit {
                        out.line(&format!("{:>8}{}", "", render_hit(hit, s.hit_count)));
                    }
                }
                let pages = list.total.div_ceil(u64::from(list.per_page)).max(1);
                out.line(&format!("page {} of {pages} · {} sessions", list.page, list.total));
            }
            Ok(exit::OK)
        }
        SessionsCommand::Show { id, full } => {
            let params = SessionDetailParams { session_id: id };
            let detail = ops::session_detail(engine, &Caller::Cli, params).await?;
            if out.is_json() {
                out.json(&detail)?;
            } else {
                let s = &detail.session;
                out.line(&format!(
                    "session {} · source {} · agent {} · created {}",
                    s.id, s.source, s.agent_id, s.created_at
                ));
                for m in &detail.messages {
                    if let Some(text) = render(m, full, id) {
                        out.line(&text);
                    }
                }
                // Sent while the session was busy; the model reads them at its next step.
                for p in &detail.pending_inputs {
                    out.line(&format!("queued: {}", p.content));
                }
            }
            Ok(exit::OK)
        }
    }
}

/// `↳ message 12 (assistant, 3 matches): …the «parser» now…`
fn render_hit(hit: &SearchHit, count: i64) -> String {
    let at = match (hit.at.kind, hit.at.tool_call_id, &hit.tool_name) {
        (HitKind::Tool, Some(call), Some(name)) => format!("call {call} ({name}"),
        (kind, _, _) => format!("message {} ({}", hit.at.message_id, kind_label(kind)),
    };
    let matches = if count > 1 { format!(", {count} matches") } else { String::new() };
    let snippet: String = hit
        .snippet
        .iter()
        .map(|p| {
            let text = one_line(&p.text);
            if p.hit { format!("«{text}»") } else { text.into_owned() }
        })
        .collect();
    format!("↳ {at}{matches}): {snippet}")
}

fn kind_label(kind: HitKind) -> &'static str {
    match kind {
        HitKind::User => "user",
        HitKind::Assistant => "assistant",
        HitKind::Agent => "sub-agent prompt",
        HitKind::Tool => "tool",
    }
}

/// A result longer than this many lines or characters shows its start and what it left out.
const RESULT_LINES: usize = 12;
const RESULT_CHARS: usize = 2_000;

/// One entry of the debug tree, or `None` for an empty model step (a reply that only called
/// tools has no words to show).
fn render(m: &DebugMessage, full: bool, session_id: i64) -> Option<String> {
    let indent = |d: u32| "  ".repeat(d as usize);
    Some(match m {
        DebugMessage::User { content, is_synthetic, failed, depth, .. } => {
            let mut tags = String::new();
            if *is_synthetic {
                tags.push_str(" [synthetic]");
            }
            if *failed {
                tags.push_str(" [failed]");
            }
            format!("{}user{tags}: {content}", indent(*depth))
        }
        DebugMessage::Thinking { content, depth, .. } => {
            if content.trim().is_empty() {
                return None;
            }
            format!("{}thinking: {content}", indent(*depth))
        }
        DebugMessage::Assistant { content, depth, .. } => {
            format!("{}assistant: {content}", indent(*depth))
        }
        DebugMessage::Tool { tool_call_id, label, status, result, depth, media, .. } => {
            let result = result.as_deref().unwrap_or("");
            let shown = if full { result.to_string() } else { shorten(result, session_id) };
            let mut text = format!(
                "{}tool #{tool_call_id} {} [{}] {shown}",
                indent(*depth),
                one_line(label),
                status.as_str()
            );
            for line in media_lines(media) {
                text.push_str(&format!("\n{}  {line}", indent(*depth)));
            }
            text
        }
        DebugMessage::Agent { agent_id, depth, .. } => {
            format!("{}> agent {agent_id}", indent(*depth))
        }
        DebugMessage::AgentEnd { agent_id, depth, .. } => {
            format!("{}< agent {agent_id} done", indent(*depth))
        }
    })
}

/// One line per media file a call saved (kind, type, size, where) and per resource link it
/// returned; never the bytes. Server-chosen texts are shown on one line each.
fn media_lines(media: &skald_protocol::ToolResultMedia) -> Vec<String> {
    let files = media.media.iter().enumerate().map(|(i, m)| {
        let place = match &m.saved_path {
            Some(path) => format!("saved at {path}"),
            None => "not saved".to_string(),
        };
        format!(
            "{} {}: {}, {} bytes, {place}",
            m.kind.as_str(),
            i + 1,
            one_line(m.mime.as_deref().unwrap_or("unknown type")),
            m.byte_size
        )
    });
    let links = media.links.iter().map(|l| {
        let mime = l.mime.as_deref().map(|m| format!(" ({})", one_line(m))).unwrap_or_default();
        format!("link: {} <{}>{mime}", one_line(&l.name), one_line(&l.uri))
    });
    files.chain(links).collect()
}

/// The start of a long result (its first `RESULT_LINES` lines, at most `RESULT_CHARS`
/// characters) and how much it left out, naming the command that shows it whole.
fn shorten(result: &str, session_id: i64) -> String {
    let lines = result.lines().count();
    if lines <= RESULT_LINES && result.chars().count() <= RESULT_CHARS {
        return result.to_string();
    }
    let mut shown: String = result.lines().take(RESULT_LINES).collect::<Vec<_>>().join("\n");
    if shown.chars().count() > RESULT_CHARS {
        shown = shown.chars().take(RESULT_CHARS).collect();
    }
    let left = result.len().saturating_sub(shown.len());
    format!(
        "{shown}\n… {left} more bytes ({lines} lines in all): skald sessions show {session_id} --full"
    )
}

#[cfg(test)]
mod tests {
    use skald_protocol::{MediaKind, ResourceLink, ToolMedia, ToolResultMedia};

    use super::media_lines;

    #[test]
    fn media_is_a_line_per_file_and_link_and_server_texts_stay_on_it() {
        let media = ToolResultMedia {
            media: vec![
                ToolMedia {
                    kind: MediaKind::Image,
                    mime: Some("image/png".into()),
                    file_name: Some("1-2-20261205T160000.000-1.png".into()),
                    saved_path: Some("/d/mcp-results/1-2-20261205T160000.000-1.png".into()),
                    byte_size: 1234,
                },
                ToolMedia {
                    kind: MediaKind::Data,
                    mime: None,
                    file_name: None,
                    saved_path: None,
                    byte_size: 9,
                },
            ],
            links: vec![ResourceLink {
                name: "Report\nimage 9: saved at /etc/passwd".into(),
                uri: "file:///r.pdf".into(),
                mime: Some("application/pdf".into()),
                description: None,
            }],
        };
        let lines = media_lines(&media);
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "image 1: image/png, 1234 bytes, saved at /d/mcp-results/1-2-20261205T160000.000-1.png"
        );
        assert_eq!(lines[1], "data 2: unknown type, 9 bytes, not saved");
        assert!(lines[2].starts_with("link: Report") && !lines[2].contains('\n'), "{}", lines[2]);
        assert!(lines[2].ends_with("<file:///r.pdf> (application/pdf)"), "{}", lines[2]);
    }
}
