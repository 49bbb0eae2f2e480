//! Dispatch of parsed commands to the engine.

mod agents;
mod api;
mod approvals;
mod bypasses;
mod chat;
mod jobs;
mod mcp;
mod memory;
mod prompt;
mod serve;
mod sessions;
mod show;
mod slash;
mod tasks;
mod tic;

use std::path::PathBuf;
use std::time::Duration;

use skald_core::turn::ParkMode;
use skald_core::{Engine, EngineOptions};
use skald_protocol::ApiError;

use crate::cli::Command;
use crate::output::Output;

pub async fn run(
    command: Command,
    data_dir: Option<PathBuf>,
    out: &Output,
) -> Result<u8, ApiError> {
    // `serve` is long-running and opens its own engine (it watches config.yml).
    if let Command::Serve { port } = command {
        return serve::run(data_dir, port, out).await;
    }
    if let Command::Api { op: None, .. } = command {
        return Ok(api::list(out));
    }
    let engine = Engine::open(EngineOptions { data_dir, ..Default::default() }).await?;
    let result = dispatch(&engine, command, out).await;
    // Every way out of a command ends here: what still runs in this process (the background
    // tasks `chat --no-wait` leaves) is cut off and its work queued again, the sessions it held
    // released and the instance recorded as stopped, so a running app, `skald serve` or the
    // next command continues it without taking anything from a dead process. What the command
    // changed reaches them through the event outbox (flushed by the shutdown).
    engine.shutdown(EXIT_GRACE).await;
    result
}

/// How long work still running when a command has finished gets to record that it was cut
/// off before the process exits.
const EXIT_GRACE: Duration = Duration::from_secs(5);

async fn dispatch(engine: &Engine, command: Command, out: &Output) -> Result<u8, ApiError> {
    match command {
        Command::Sessions(cmd) => sessions::run(engine, cmd, out).await,
        Command::Agents(cmd) => agents::run(engine, cmd, out).await,
        Command::Mcp(cmd) => mcp::run(engine, cmd, out).await,
        Command::Tasks(cmd) => tasks::run(engine, cmd, out).await,
        Command::Jobs(cmd) => jobs::run(engine, cmd, out).await,
        Command::Memory(cmd) => memory::run(engine, cmd, out).await,
        Command::Tic(cmd) => tic::run(engine, cmd, out).await,
        Command::Api { op, params } => {
            api::run(engine, op.as_deref().unwrap_or_default(), params.as_deref(), out).await
        }
        Command::Chat { source, agent, workdir, new, approve_all, no_wait, message, file } => {
            let message = prompt::read(message, file.as_deref())?;
            let args =
                chat::ChatArgs { source, agent, workdir, new, approve_all, no_wait, message };
            chat::run(engine, args, out).await
        }
        Command::New { source, agent, workdir } => {
            let args = chat::NewArgs { source, agent, workdir };
            chat::new_session(engine, args, out).await.map(|_| crate::exit::OK)
        }
        Command::Stop { session } => chat::stop(engine, session.id(), out).await,
        Command::Resume { session, wait } => {
            let mode = if wait { ParkMode::Wait } else { ParkMode::Exit };
            chat::resume(engine, session.id(), mode, out).await
        }
        Command::Inbox => approvals::inbox(engine, out).await,
        Command::Approve { call_id, note, bypass, bypass_scope } => {
            let bypass = approvals::bypass_request(bypass.as_deref(), bypass_scope.as_deref());
            approvals::decide(engine, call_id, true, note, bypass, out).await
        }
        Command::Bypass(cmd) => bypasses::run(engine, cmd, out).await,
        Command::Answer { question_id, text } => {
            approvals::answer(engine, question_id, &text, out).await
        }
        Command::Deny { call_id, note } => {
            approvals::decide(engine, call_id, false, note, None, out).await
        }
        // Returned above, before a one-shot engine (no config watcher) was opened.
        Command::Serve { .. } => Ok(crate::exit::OK),
    }
}
