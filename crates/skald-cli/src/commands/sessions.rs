//! `skald sessions list|show`.

use skald_api::{Caller, ListSessionsParams, SessionDetailParams, ops};
use skald_core::Engine;
use skald_protocol::{ApiError, DebugMessage, HitKind, SearchHit, SessionListQuery};

use crate::cli::SessionsCommand;
use crate::exit;
use crate::output::{Output, one_line};

pub async fn run(engine: &Engine, cmd: SessionsCommand, out: &Output) -> Result<u8, ApiError> {
    match cmd {
        SessionsCommand::List { source, search, page, per_page } => {
            let query = SessionListQuery { source, search, page, per_page };
            let list =
                ops::list_sessions(engine, &Caller::Cli, ListSessionsParams { query }).await?;
            if out.is_json() {
                out.json(&list)?;
            } else if list.items.is_empty() {
                out.line(&format!("No sessions (page {} of {} total).", list.page, list.total));
            } else {
                out.line(&format!(
                    "{:>6}  {:<10} {:<10} {:>8}  {:<24}  TITLE",
                    "ID", "SOURCE", "AGENT", "MESSAGES", "LAST ACTIVITY"
                ));
                for s in &list.items {
                    out.line(&format!(
                        "{:>6}  {:<10} {:<10} {:>8}  {:<24}  {}",
                        s.id,
                        s.source,
                        s.agent_id,
                        s.message_count,
                        s.last_message_at.as_deref().unwrap_or(&s.created_at),
                        one_line(s.title.as_deref().unwrap_or(""))
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
        SessionsCommand::Show { id } => {
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
                    out.line(&render(m));
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

fn render(m: &DebugMessage) -> String {
    let indent = |d: u32| "  ".repeat(d as usize);
    match m {
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
            format!("{}thinking: {content}", indent(*depth))
        }
        DebugMessage::Assistant { content, depth, .. } => {
            format!("{}assistant: {content}", indent(*depth))
        }
        DebugMessage::Tool { tool_call_id, label, status, result, depth, .. } => format!(
            "{}tool #{tool_call_id} {} [{}] {}",
            indent(*depth),
            one_line(label),
            status.as_str(),
            result.as_deref().unwrap_or("")
        ),
        DebugMessage::Agent { agent_id, depth, .. } => {
            format!("{}> agent {agent_id}", indent(*depth))
        }
        DebugMessage::AgentEnd { agent_id, depth, .. } => {
            format!("{}< agent {agent_id} done", indent(*depth))
        }
    }
}
