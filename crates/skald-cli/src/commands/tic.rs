//! `skald tic run|list`, through the table.

use std::time::Duration;

use skald_api::{Caller, RunTicParams, TicStatusParams, ops};
use skald_core::Engine;
use skald_protocol::{ApiError, TicTickInfo, TickState};

use crate::cli::TicCommand;
use crate::exit;
use crate::output::Output;

/// How long a one-shot process lets its work record a stop before it exits.
const GRACE: Duration = Duration::from_secs(5);

pub async fn run(engine: &Engine, cmd: TicCommand, out: &Output) -> Result<u8, ApiError> {
    let c = &Caller::Cli;
    match cmd {
        TicCommand::Run { no_wait } => {
            let started = ops::run_tic(engine, c, RunTicParams {}).await?;
            let Some(session_id) = started.session_id.filter(|_| !no_wait) else {
                engine.shutdown(GRACE).await;
                show(&started, out)?;
                return Ok(exit::OK);
            };
            if !out.is_json() {
                out.line(&format!(
                    "tick {} started in session {session_id} ({} event(s))",
                    started.id, started.events
                ));
            }
            tokio::select! {
                _ = engine.wait_turn(session_id) => {}
                _ = tokio::signal::ctrl_c() => {
                    let _ = engine.stop(session_id).await;
                    engine.wait_turn(session_id).await;
                }
            }
            engine.shutdown(GRACE).await;
            let status = ops::tic_status(engine, c, TicStatusParams { limit: Some(500) }).await?;
            let ended = status.ticks.into_iter().find(|t| t.id == started.id).unwrap_or(started);
            show(&ended, out)?;
            Ok(if ended.state == TickState::Done { exit::OK } else { exit::ERROR })
        }
        TicCommand::List { limit } => {
            let status = ops::tic_status(engine, c, TicStatusParams { limit: Some(limit) }).await?;
            if out.is_json() {
                out.json(&status)?;
                return Ok(exit::OK);
            }
            let kept = if status.kept_connected.is_empty() {
                "none (mark a server with `skald mcp add --keep-connected`)".to_string()
            } else {
                status.kept_connected.join(", ")
            };
            out.line(&format!(
                "every {} s, up to {} events{}; {} event(s) waiting; servers kept connected: {kept}",
                status.interval_secs,
                status.batch_size,
                status.active_hours.map(|h| format!(", only {h}")).unwrap_or_default(),
                status.pending_events,
            ));
            out.line(&format!(
                "{:<6} {:<10} {:<25} {:<7} {:<8} SERVERS",
                "TICK", "STATE", "STARTED (UTC)", "EVENTS", "SESSION"
            ));
            for t in &status.ticks {
                out.line(&row(t));
            }
            Ok(exit::OK)
        }
    }
}

fn row(t: &TicTickInfo) -> String {
    let session = t.session_id.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
    let mut line = format!(
        "{:<6} {:<10} {:<25} {:<7} {:<8} {}",
        t.id,
        t.state.as_str(),
        t.started_at,
        t.events,
        session,
        t.servers.join(", ")
    );
    if let Some(reason) = &t.reason {
        line.push_str(&format!("  ({})", crate::output::one_line(reason)));
    }
    line
}

fn show(t: &TicTickInfo, out: &Output) -> Result<(), ApiError> {
    if out.is_json() {
        out.json(t)?;
    } else if t.state == TickState::Empty {
        out.line(&format!("tick {}: nothing new, no model was asked", t.id));
    } else {
        out.line(&row(t));
    }
    Ok(())
}
