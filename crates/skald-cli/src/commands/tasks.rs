//! `skald tasks list` and `skald tasks continue`.

use std::time::Duration;

use skald_api::{Caller, ContinueTaskParams, ListTasksParams, ops};
use skald_core::Engine;
use skald_protocol::{ApiError, TaskInfo, TaskState};

use crate::cli::TasksCommand;
use crate::exit;
use crate::output::Output;

/// How often `continue` looks whether the task ended.
const POLL: Duration = Duration::from_millis(100);

/// How long a one-shot process lets its work record a stop before it exits.
const GRACE: Duration = Duration::from_secs(5);

pub async fn run(engine: &Engine, cmd: TasksCommand, out: &Output) -> Result<u8, ApiError> {
    match cmd {
        TasksCommand::List { session } => {
            let params = ListTasksParams { session_id: session.id() };
            let tasks = ops::list_tasks(engine, &Caller::Cli, params).await?;
            if out.is_json() {
                out.json(&tasks)?;
                return Ok(exit::OK);
            }
            out.line(&format!(
                "{:<16} {:<8} {:<10} {:<9} REPORT",
                "TASK", "SESSION", "STATE", "DELIVERED"
            ));
            for t in &tasks {
                out.line(&row(t));
            }
            Ok(exit::OK)
        }
        TasksCommand::Continue { id } => continue_task(engine, id, out).await,
    }
}

/// Continues the task, then — this process being its runner — waits for its end and for the
/// parent's answer to the report before it exits.
async fn continue_task(engine: &Engine, id: i64, out: &Output) -> Result<u8, ApiError> {
    let params = ContinueTaskParams { session_id: id };
    let started = ops::continue_task(engine, &Caller::Cli, params).await?;
    if !out.is_json() {
        out.line(&format!("continuing task {} (session {id})", started.label));
    }
    let ended = loop {
        let tasks = ops::list_tasks(
            engine,
            &Caller::Cli,
            ListTasksParams { session_id: started.parent_session_id },
        )
        .await?;
        if let Some(t) = tasks.into_iter().find(|t| t.task_id == started.task_id)
            && !matches!(t.state, TaskState::Queued | TaskState::Running)
        {
            break t;
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            _ = tokio::signal::ctrl_c() => {
                let _ = engine.stop(id).await;
            }
        }
    };
    // The child's run wakes the parent before it ends; then the parent's answer runs here.
    engine.wait_turn(id).await;
    engine.wait_turn(started.parent_session_id).await;
    engine.shutdown(GRACE).await;
    if out.is_json() {
        out.json(&ended)?;
    } else {
        out.line(&row(&ended));
    }
    Ok(if ended.state == TaskState::Done { exit::OK } else { exit::ERROR })
}

/// `scout#12          12       done       yes       There are 42 files.`
fn row(t: &TaskInfo) -> String {
    let state = serde_json::to_value(t.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let report = t.report.as_deref().unwrap_or("").lines().next().unwrap_or("");
    let delivered = if t.delivered { "yes" } else { "no" };
    format!("{:<16} {:<8} {:<10} {:<9} {report}", t.label, t.child_session_id, state, delivered)
}
