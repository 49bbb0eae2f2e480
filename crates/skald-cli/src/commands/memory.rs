//! `skald memory list|show|history|undo`, through the table. What agents wrote is shown through
//! the output layer, so terminal escapes in a file or a path never reach the terminal as such.

use skald_api::{
    Caller, ListMemoryFilesParams, MemoryHistoryParams, ReadMemoryFileParams, UndoMemoryEditParams,
    ops,
};
use skald_core::Engine;
use skald_protocol::{ApiError, MemoryAuthor, MemoryEdit};

use crate::cli::MemoryCommand;
use crate::exit;
use crate::output::Output;

pub async fn run(engine: &Engine, cmd: MemoryCommand, out: &Output) -> Result<u8, ApiError> {
    let c = &Caller::Cli;
    match cmd {
        MemoryCommand::List => {
            let files = ops::list_memory_files(engine, c, ListMemoryFilesParams {}).await?;
            if out.is_json() {
                out.json(&files)?;
            } else if files.is_empty() {
                out.line("no memory files yet");
            } else {
                for f in &files {
                    out.line(&format!("{:>8}  {}", f.size, f.path));
                }
            }
        }
        MemoryCommand::Show { path } => {
            let file = ops::read_memory_file(engine, c, ReadMemoryFileParams { path }).await?;
            if out.is_json() {
                out.json(&file)?;
            } else {
                out.line(file.content.trim_end_matches('\n'));
            }
        }
        MemoryCommand::History { path, limit } => {
            let params = MemoryHistoryParams { path, limit: Some(limit) };
            let edits = ops::memory_history(engine, c, params).await?;
            if out.is_json() {
                out.json(&edits)?;
            } else if edits.is_empty() {
                out.line("no recorded writes");
            } else {
                for e in &edits {
                    out.line(&heading(e));
                    out.line(e.diff.unified.trim_end_matches('\n'));
                }
            }
        }
        MemoryCommand::Undo { id } => {
            let edit =
                ops::undo_memory_edit(engine, c, UndoMemoryEditParams { edit_id: id }).await?;
            if out.is_json() {
                out.json(&edit)?;
            } else if edit.created_file {
                out.line(&format!(
                    "undid write {id}: {} deleted (that write created it)",
                    edit.path
                ));
            } else {
                out.line(&format!("undid write {id}: {} is back as it was before it", edit.path));
            }
        }
    }
    Ok(exit::OK)
}

/// `#12 2026-12-05T12:00:00Z notes.md by agent main (session 3) [undone]`.
fn heading(e: &MemoryEdit) -> String {
    let who = match e.author {
        MemoryAuthor::Agent => {
            let session = e.session_id.map(|s| format!(" (session {s})")).unwrap_or_default();
            format!("agent {}{session}", e.agent_id.as_deref().unwrap_or("?"))
        }
        MemoryAuthor::User => "you".to_string(),
    };
    let undone = if e.undone_at.is_some() { " [undone]" } else { "" };
    format!("#{} {} {} by {who}{undone}", e.id, e.created_at, e.path)
}
