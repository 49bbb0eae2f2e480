//! `skald bypass list` and `skald bypass revoke`.

use skald_api::{ActiveBypassesParams, Caller, RevokeBypassParams, SessionBypassesParams, ops};
use skald_core::Engine;
use skald_protocol::{ApiError, BypassDuration, BypassView};

use crate::cli::BypassCommand;
use crate::exit;
use crate::output::Output;

pub async fn run(engine: &Engine, cmd: BypassCommand, out: &Output) -> Result<u8, ApiError> {
    match cmd {
        BypassCommand::List { session } => {
            let list = match session {
                Some(session_id) => {
                    let params = SessionBypassesParams { session_id };
                    ops::session_bypasses(engine, &Caller::Cli, params).await?
                }
                None => ops::active_bypasses(engine, &Caller::Cli, ActiveBypassesParams {}).await?,
            };
            if out.is_json() {
                out.json(&list)?;
            } else if list.is_empty() {
                out.line("No bypass is active: every call that needs approval asks.");
            } else {
                for b in &list {
                    out.line(&describe(b));
                }
                out.line("end one with `skald bypass revoke ID`");
            }
        }
        BypassCommand::Revoke { id } => {
            let b = ops::revoke_bypass(engine, &Caller::Cli, RevokeBypassParams { id }).await?;
            if out.is_json() {
                out.json(&b)?;
            } else {
                out.line(&format!(
                    "bypass {id} ({} in session {}) is revoked; those calls ask again",
                    b.label, b.session_id
                ));
            }
        }
    }
    Ok(exit::OK)
}

/// One line per bypass: id, session, what it covers, who granted it and the time left.
pub fn describe(b: &BypassView) -> String {
    format!(
        "bypass {} · session {} ({}) · {} · granted by {} · {} left",
        b.id,
        b.session_id,
        b.source,
        b.label,
        b.granted_by,
        time_left(b.remaining_secs)
    )
}

/// The line a `skald chat` covered by `b` starts with: what runs unasked, until when, who
/// granted it, how to end it.
pub fn in_force(b: &BypassView) -> String {
    let until = match b.duration {
        BypassDuration::Session => {
            format!("until /new or `skald new` (at most {} more)", time_left(b.remaining_secs))
        }
        _ => format!("for {} more", time_left(b.remaining_secs)),
    };
    format!(
        "! bypass {} in force: {} run without asking in session {} {until} · granted by {} · \
         end it: skald bypass revoke {}",
        b.id, b.label, b.session_id, b.granted_by, b.id
    )
}

fn time_left(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}
