//! Async tasks' runner: drives each task's child session in a tracked engine task (at most
//! `llm.max_async_tasks` at once), records its report when it ends, and wakes an idle parent to
//! answer it; `continue_task` restarts a failed or cancelled one from its last step.

use std::sync::{Arc, Weak};

use skald_protocol::{Event, EventEnvelope, TaskInfo, TaskState};
use skald_store::repo::tasks::TaskRow;

use super::runner::RunMark;
use super::work::Adopted;
use super::{Engine, Inner};
use crate::error::EngineError;
use crate::turn::{TaskStarter, TurnOutcome};

/// The report a child's end makes, with its status; `None` when the child did not end (it
/// waits for a human).
fn report_of(outcome: &TurnOutcome) -> Option<(&'static str, String)> {
    Some(match outcome {
        TurnOutcome::Final { content, .. } => ("done", content.clone()),
        TurnOutcome::Cancelled => ("cancelled", "the task was stopped before it answered".into()),
        TurnOutcome::Exhausted { rounds } => {
            ("failed", format!("the task used its {rounds} rounds without a final answer"))
        }
        TurnOutcome::Failed { message } => ("failed", message.clone()),
        TurnOutcome::Parked { .. } => return None,
    })
}

/// One async task in the engine's count (`wait_tasks`), from its start until it ends (a task
/// parked on a person stays counted); uncounted when dropped, however it ends (also when
/// shutdown aborts it).
#[derive(Debug)]
pub(super) struct TaskRunCount(tokio::sync::watch::Sender<usize>);

impl TaskRunCount {
    fn start(runs: &tokio::sync::watch::Sender<usize>) -> Self {
        runs.send_modify(|n| *n += 1);
        Self(runs.clone())
    }
}

impl Drop for TaskRunCount {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Engine {
    /// What a turn calls to hand a task to the runner. Weak: a turn never keeps the engine alive.
    pub(super) fn task_starter(&self) -> TaskStarter {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        Arc::new(move |task_id| {
            if let Some(inner) = weak.upgrade() {
                Engine { inner }.start_task(task_id);
            }
        })
    }

    /// Queues task `task_id`'s run; this process adopts it, so it runs here (once a slot is
    /// free) unless another engine claims it first.
    pub(super) fn start_task(&self, task_id: i64) {
        let engine = self.clone();
        // Counted before anything, so a `wait_tasks` right after this waits for it.
        let counted = TaskRunCount::start(&self.inner.task_runs);
        self.inner.lifecycle.spawn(async move {
            let store = engine.store();
            let task = match store.task(task_id).await {
                Ok(t) if !t.ended() => t,
                Ok(_) => return,
                Err(e) => {
                    tracing::warn!(task_id, "cannot read the async task: {e}");
                    return;
                }
            };
            if let Err(e) = store.enqueue_task_run(task.child_session_id).await {
                tracing::warn!(task_id, "cannot queue the async task: {e}");
                return;
            }
            let adopted = Adopted { mark: None, counted: Some(counted) };
            engine.adopt(task.child_session_id, adopted).await;
        });
    }

    /// Waits until the async tasks this process runs have all ended and session `session_id`
    /// has answered their reports (a woken turn may start more tasks: those are waited for
    /// too). What a one-shot `skald chat` does before it exits.
    pub async fn wait_tasks(&self, session_id: i64) {
        let mut runs = self.inner.task_runs.subscribe();
        loop {
            // A task's run wakes its parent before it ends: its turn is marked by then.
            let _ = runs.wait_for(|n| *n == 0).await;
            self.wait_turn(session_id).await;
            let idle = self.inner.sessions.existing(session_id).is_none_or(|h| !h.run_going());
            if *runs.borrow_and_update() == 0 && idle {
                return;
            }
        }
    }

    /// A task's run starts on its claimed session: the task is marked running.
    pub(super) async fn task_started(&self, child_session_id: i64) {
        let store = self.store();
        let Ok(Some(task)) = store.task_of_session(child_session_id).await else { return };
        if let Err(e) = store.mark_task_running(task.id).await {
            tracing::warn!(task_id = task.id, "cannot mark the async task running: {e}");
        }
        self.emit_task(&task, TaskState::Running, None, None).await;
    }

    /// Called at the end of every run: when the session is an async task's child that ended,
    /// records its report (once) and wakes the parent. A run cut off by shutdown is no end:
    /// the task is `queued` again (its work item went back to the queue) and continues in the
    /// next engine that runs the background, or with `continue_task`.
    pub(super) async fn task_ended(&self, session_id: i64, outcome: &TurnOutcome) {
        if self.inner.lifecycle.stopping() {
            // Most runs are no task's: a read answers that without a write.
            if self.cut_off_by_shutdown(outcome)
                && matches!(self.store().task_of_session(session_id).await, Ok(Some(_)))
            {
                match self.store().mark_task_waiting(session_id).await {
                    Ok(Some(task)) => self.emit_task(&task, TaskState::Queued, None, None).await,
                    Ok(None) => {}
                    Err(e) => tracing::warn!(session_id, "cannot mark the cut-off task: {e}"),
                }
            }
            return;
        }
        let Some((status, report)) = report_of(outcome) else { return };
        let store = self.store();
        // Most runs are no task's: a read answers that without a write transaction.
        if !matches!(store.task_of_session(session_id).await, Ok(Some(_))) {
            return;
        }
        let recorded = match store.record_task_report(session_id, status, &report).await {
            Ok(Some(task)) => task,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(session_id, "cannot record the async task's report: {e}");
                return;
            }
        };
        self.emit_task(&recorded, recorded.state(), recorded.report.clone(), None).await;
        self.wake_parent(recorded.parent_session_id).await;
    }

    /// The parent answers the report: its continuation was queued with the report. An engine
    /// without the background adopts the parent (a `skald chat` waits for its answer here).
    async fn wake_parent(&self, parent_id: i64) {
        if !self.inner.lifecycle.background() && !self.is_running(parent_id).await.unwrap_or(true) {
            let handle = self.inner.sessions.handle(parent_id);
            let adopted = Adopted { mark: Some(RunMark::start(handle)), counted: None };
            self.adopt(parent_id, adopted).await;
        }
        self.wake_worker();
    }

    /// Announces a task's state on its parent session (where its card lives).
    async fn emit_task(
        &self,
        task: &TaskRow,
        state: TaskState,
        report: Option<String>,
        message_id: Option<i64>,
    ) {
        let Ok(parent) = self.store().session(task.parent_session_id).await else { return };
        self.emit(EventEnvelope::session(
            task.parent_session_id,
            &parent.source,
            Event::TaskUpdate {
                task_id: task.id,
                child_session_id: task.child_session_id,
                label: task.label.clone(),
                state,
                report,
                message_id,
            },
        ));
    }

    /// Tasks a stopped or dead process left unfinished, and sessions with input waiting, get
    /// their work queued (`start_background`; the worker claims it).
    pub(super) async fn continue_tasks(&self) {
        let store = self.store();
        match store.unfinished_tasks().await {
            Ok(tasks) => {
                for task in tasks {
                    if let Err(e) = store.requeue_task_run(task.child_session_id).await {
                        tracing::warn!(task_id = task.id, "cannot queue the async task: {e}");
                    }
                }
            }
            Err(e) => tracing::warn!("cannot look for unfinished async tasks: {e}"),
        }
        if let Ok(sessions) = store.sessions_owing_input().await {
            for session_id in sessions {
                let _ = store.enqueue_continue(session_id).await;
            }
        }
        self.wake_worker();
    }

    /// The async tasks session `session_id` started, oldest first.
    pub async fn list_tasks(&self, session_id: i64) -> Result<Vec<TaskInfo>, EngineError> {
        self.store().session(session_id).await?;
        Ok(self.store().tasks_of_parent(session_id).await?.iter().map(TaskRow::info).collect())
    }

    /// Continues an async task (by its child session) from its last step: a failed or cancelled
    /// one, or one left queued or running with no live process running it (its process exited,
    /// as after `skald chat --no-wait`, or died); its report is delivered to the parent like the
    /// first. A task another live process runs is refused, and so is a finished one.
    pub async fn continue_task(&self, session_id: i64) -> Result<TaskInfo, EngineError> {
        let store = self.store();
        let Some(task) = store.task_of_session(session_id).await? else {
            return Err(EngineError::NotFound(format!(
                "session {session_id} is not an async task's session"
            )));
        };
        if self.inner.lifecycle.stopping() {
            return Err(EngineError::ShuttingDown);
        }
        let continued = match store.requeue_task(session_id).await? {
            Some(requeued) => {
                self.emit_task(&requeued, TaskState::Queued, None, None).await;
                requeued
            }
            // Queued or running with nobody running it (its process exited or died, e.g. after
            // `skald chat --no-wait`): it goes on here.
            None if !task.ended() => {
                if self.runner_elsewhere(session_id).await? {
                    return Err(EngineError::Conflict(format!(
                        "task {} is running in another process; `skald tasks list` shows when \
                         it ends",
                        task.label
                    )));
                }
                // What the gone process held goes back: its claim on the task's run and the
                // session's runner row (a background engine's reclaim pass would do the same).
                let alive = self.liveness();
                store.reclaim_work(self.instance_id(), &alive).await?;
                store.release_dead_runner(session_id, &alive).await?;
                task
            }
            None => {
                return Err(EngineError::Conflict(format!(
                    "task {} is {}: only a failed, cancelled or abandoned task can be continued",
                    task.label, task.status
                )));
            }
        };
        self.start_task(continued.id);
        Ok(continued.info())
    }

    /// Test and diagnostics hook: reads task `task_id`'s report from its parent's root inbox
    /// into the parent's root frame unless it was read already. Returns whether this call
    /// delivered it; a second delivery is dropped, logged and announced (`delivery_dropped`).
    pub async fn deliver_task_report(&self, task_id: i64) -> Result<bool, EngineError> {
        let store = self.store();
        let task = store.task(task_id).await?;
        let root = store.root_frame(task.parent_session_id).await?;
        match store.fold_task_report(task_id, root.id).await? {
            Some(folded) => {
                let delivered = folded.task.clone().unwrap_or(task);
                let report = delivered.report.clone();
                let message_id = Some(folded.message_id);
                self.emit_task(&delivered, TaskState::Delivered, report, message_id).await;
                Ok(true)
            }
            None => {
                tracing::warn!(
                    task_id,
                    label = %task.label,
                    "dropped a second delivery of the async task's report"
                );
                self.emit_task(&task, TaskState::DeliveryDropped, None, None).await;
                Ok(false)
            }
        }
    }
}
