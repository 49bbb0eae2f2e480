//! The shell's own engine subscriber: keeps the tray and native notifications in step with what
//! the engine commits.

use skald_core::Engine;
use skald_core::events::EventFeed;
use skald_protocol::{Event, EventEnvelope, HomeNotice};
use tauri::{AppHandle, Manager as _};
use tauri_plugin_notification::NotificationExt as _;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use crate::alerts::{self, Alert, Batch, Briefing, Collected, EndedTask, FailedRun};
use crate::desktop_settings::DesktopSettings;
use crate::lifecycle::Quitting;
use crate::startup::MAIN_WINDOW;
use crate::tray;

/// Notification payload key holding the route a click opens.
pub const ROUTE_KEY: &str = "route";

/// Runs until the engine stops; spawn it once after the window exists.
pub async fn run(app: AppHandle, engine: Engine) {
    let mut events = engine.subscribe();
    // A job's run may wait or end in another process on this data dir (`skald serve`, `skald jobs
    // run`): what waits for a person and runs' notices are taken from the feed of every
    // process's events, this one's included.
    let mut feed = match engine.subscribe_feed(None).await {
        Ok(feed) => Some(feed),
        Err(error) => {
            tracing::warn!(%error, "cannot follow other processes' events; notifying this one's");
            None
        }
    };
    tray::refresh(&app, &engine).await;
    let mut batch = Batch::default();
    loop {
        let deadline = batch.deadline();
        let received = tokio::select! {
            received = events.recv() => received,
            from_feed = next_in(&mut feed) => {
                match from_feed {
                    Some(envelope) => on_feed_event(&app, &engine, &mut batch, envelope).await,
                    // The engine stopped: its local events end the loop next.
                    None => feed = None,
                }
                continue;
            }
            () = sleep_until(deadline) => {
                flush(&app, &engine, &mut batch).await;
                continue;
            }
        };
        match received {
            Ok(envelope) => {
                on_event(&app, &engine, &mut batch, envelope, feed.is_some()).await;
            }
            Err(RecvError::Lagged(_)) => tray::refresh(&app, &engine).await,
            Err(RecvError::Closed) => return,
        }
    }
}

/// The feed's next event; never, without a feed.
async fn next_in(feed: &mut Option<EventFeed>) -> Option<EventEnvelope> {
    match feed {
        Some(feed) => feed.recv().await,
        None => std::future::pending().await,
    }
}

/// Events of every process: what starts waiting for a person and job runs' notices are taken
/// from here.
async fn on_feed_event(
    app: &AppHandle,
    engine: &Engine,
    batch: &mut Batch,
    envelope: EventEnvelope,
) {
    match envelope.event {
        Event::ApprovalRequested { tool_call_id, .. }
        | Event::AgentQuestion { tool_call_id, .. } => {
            on_waiting(app, engine, batch, tool_call_id).await;
        }
        Event::HomeNotice { notice } => on_notice(app, batch, &notice),
        Event::BriefingDelivered { notifications } => {
            on_briefing(app, batch, envelope.session_id, envelope.source, notifications);
        }
        Event::ElicitationRequested { elicitation_id, server, .. } => {
            tray::refresh(app, engine).await;
            if !window_has_focus(app) && !app.state::<Quitting>().get() {
                batch.server_question(elicitation_id, server, Instant::now());
            }
        }
        _ => {}
    }
}

/// A briefing was delivered home (by any process): told unless the person is looking at Skald.
fn on_briefing(
    app: &AppHandle,
    batch: &mut Batch,
    session_id: Option<i64>,
    source: Option<String>,
    notifications: u32,
) {
    if let Some(session_id) = session_id
        && !window_has_focus(app)
        && !app.state::<Quitting>().get()
    {
        batch.briefing(Briefing { session_id, source, notifications }, Instant::now());
    }
}

/// A call started waiting for a decision or an answer: the tray counts it, and it is told
/// unless the person is looking at Skald.
async fn on_waiting(app: &AppHandle, engine: &Engine, batch: &mut Batch, tool_call_id: i64) {
    tray::refresh(app, engine).await;
    if !window_has_focus(app) {
        batch.approval(tool_call_id, Instant::now());
    }
}

/// A scheduled job's run that failed: told unless the person is looking at Skald.
fn on_notice(app: &AppHandle, batch: &mut Batch, notice: &HomeNotice) {
    if let Some(run) = FailedRun::of(notice)
        && !window_has_focus(app)
        && !app.state::<Quitting>().get()
    {
        batch.run_failed(notice.job_run_id, run, Instant::now());
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// This process's events; `from_feed`: what waits and job runs' notices come from the feed
/// instead (every process's, this one's included).
async fn on_event(
    app: &AppHandle,
    engine: &Engine,
    batch: &mut Batch,
    envelope: EventEnvelope,
    from_feed: bool,
) {
    let session = envelope.session_id;
    match envelope.event {
        Event::ApprovalRequested { tool_call_id, .. }
        | Event::AgentQuestion { tool_call_id, .. }
            if !from_feed =>
        {
            on_waiting(app, engine, batch, tool_call_id).await;
        }
        // An interrupted call flagged by a resume, or answered: the tray counts those too.
        Event::ApprovalResolved { .. }
        | Event::ClarificationResolved { .. }
        | Event::InterruptedCall { .. } => {
            tray::refresh(app, engine).await;
        }
        Event::TaskUpdate { task_id, label, state, .. } if alerts::task_end(state) => {
            if let Some(parent_session_id) = session
                && !window_has_focus(app)
            {
                let source = envelope.source.clone();
                let task = EndedTask { label, state, source, parent_session_id };
                batch.task_ended(task_id, task, Instant::now());
            }
        }
        Event::HomeNotice { notice } if !from_feed => on_notice(app, batch, &notice),
        Event::BriefingDelivered { notifications } if !from_feed => {
            on_briefing(app, batch, session, envelope.source, notifications);
        }
        Event::TurnEnded { outcome } if alerts::worth_an_alert(&outcome) => {
            if let Some(session) = session
                && window_hidden(app)
                && !app.state::<Quitting>().get()
            {
                batch.failure(session, Instant::now());
            }
        }
        _ => {}
    }
}

/// Shows what the batch collected, if notifications are on.
async fn flush(app: &AppHandle, engine: &Engine, batch: &mut Batch) {
    let Collected {
        approvals,
        failed_sessions: failures,
        ended_tasks,
        failed_runs,
        briefings,
        server_questions,
    } = batch.take();
    if !DesktopSettings::load(engine.data_dir()).notifications {
        return;
    }
    let mut shown = Vec::new();
    if !approvals.is_empty() {
        match engine.inbox().await {
            Ok(inbox) => {
                let items: Vec<_> = inbox
                    .items
                    .iter()
                    .filter(|item| approvals.contains(&item.tool_call_id))
                    .collect();
                let questions: Vec<_> = inbox
                    .questions
                    .iter()
                    .filter(|question| approvals.contains(&question.tool_call_id))
                    .collect();
                shown.extend(alerts::waiting_alert(&items, &questions));
            }
            Err(error) => tracing::warn!("cannot read the inbox to notify: {error}"),
        }
    }
    shown.extend(alerts::failures_alert(&failures));
    shown.extend(alerts::tasks_alert(&ended_tasks));
    shown.extend(alerts::runs_alert(&failed_runs));
    shown.extend(alerts::briefings_alert(&briefings));
    shown.extend(alerts::server_questions_alert(&server_questions));
    for alert in shown {
        notify(app, &alert);
    }
}

fn notify(app: &AppHandle, alert: &Alert) {
    let shown = app
        .notification()
        .builder()
        .title(&alert.title)
        .body(&alert.body)
        .extra(ROUTE_KEY, &alert.route)
        .show();
    match shown {
        Ok(()) => tracing::info!(title = %alert.title, "notified"),
        Err(error) => tracing::warn!(%error, "cannot show a notification"),
    }
}

/// The routes that a notification click may open: only those our alerts produce.
pub fn clicked_route(
    extra: &std::collections::HashMap<String, serde_json::Value>,
) -> Option<String> {
    let route = extra.get(ROUTE_KEY)?.as_str()?;
    let safe = route.starts_with('#')
        && route.bytes().all(|b| b.is_ascii_alphanumeric() || b"#/?=-".contains(&b));
    safe.then(|| route.to_owned())
}

fn main_window_flags(app: &AppHandle) -> Option<(bool, bool, bool)> {
    let window = app.get_webview_window(MAIN_WINDOW)?;
    Some((
        window.is_visible().unwrap_or(false),
        window.is_minimized().unwrap_or(false),
        window.is_focused().unwrap_or(false),
    ))
}

fn window_has_focus(app: &AppHandle) -> bool {
    main_window_flags(app)
        .is_some_and(|(visible, minimized, focused)| visible && !minimized && focused)
}

fn window_hidden(app: &AppHandle) -> bool {
    main_window_flags(app).is_none_or(|(visible, minimized, _)| !visible || minimized)
}
