//! The engine's work queue: a unit of work is a row (`work_items`) any engine instance claims
//! with one statement and runs under the session's lease; the worker claims and starts them.
//!
//! A run that parks on a person lets go of its lease and its task slot and writes nothing while
//! it waits. The decision (or answer, or task report) is written together with its continuation,
//! and whichever engine claims that item continues the turn. An engine whose background runs
//! (the app, `skald serve`) claims every session's work; any other engine (a `skald chat`, a
//! `skald resume --wait`) only the work of sessions it adopted: a turn it parked in `Wait` mode,
//! an async task it started, a parent it must answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use skald_store::repo::work::{WorkItem, WorkKind};
use tokio::sync::{Notify, OwnedSemaphorePermit};

use super::Engine;
use super::runner::{RunMark, Step};
use super::tasks::TaskRunCount;
use crate::turn::{ParkMode, TurnOutcome};

/// How often the worker looks at the queue when nothing woke it: work another process queued
/// (a decision from `skald approve`, say) is claimed within this.
const WORK_POLL: Duration = Duration::from_secs(1);

/// The worker's name among the engine's services.
const WORKER: &str = "worker";

/// The queue's state in this process.
#[derive(Debug, Default)]
pub(super) struct WorkState {
    adopted: Mutex<HashMap<i64, Adopted>>,
    /// Woken when work is queued here or a session is adopted.
    wake: Arc<Notify>,
    worker: AtomicBool,
}

/// A session this process continues when its work comes, with what follows its runs.
#[derive(Debug, Default)]
pub(super) struct Adopted {
    /// The turn `wait_turn` follows: it ends when the session's work ends without parking.
    pub(super) mark: Option<RunMark>,
    /// An async task this process started (`wait_tasks` counts it until it ends).
    pub(super) counted: Option<TaskRunCount>,
}

/// The stored name of how a run ended.
pub(super) fn outcome_name(outcome: &TurnOutcome) -> &'static str {
    match outcome {
        TurnOutcome::Final { .. } => "final",
        TurnOutcome::Cancelled => "cancelled",
        TurnOutcome::Exhausted { .. } => "exhausted",
        TurnOutcome::Parked { .. } => "parked",
        TurnOutcome::Failed { .. } => "failed",
    }
}

impl Engine {
    /// Records how a claimed item's run ended. A run cut off by this engine's shutdown did not
    /// end: its item goes back to the queue, so a running app or `skald serve` claims it at once
    /// and the next engine otherwise (nobody has to take it from a dead claimant).
    pub(super) async fn item_ended(&self, session_id: i64, item_id: i64, outcome: &TurnOutcome) {
        let store = self.store();
        let recorded = if self.cut_off_by_shutdown(outcome) {
            store.unclaim_work(item_id).await
        } else {
            store.finish_work(item_id, outcome_name(outcome)).await
        };
        if let Err(e) = recorded {
            tracing::warn!(session_id, "cannot record how a work item ended: {e}");
        }
    }

    /// Whether a run ended because this engine is shutting down (not by its own end or a stop).
    pub(super) fn cut_off_by_shutdown(&self, outcome: &TurnOutcome) -> bool {
        matches!(outcome, TurnOutcome::Cancelled) && self.inner.lifecycle.stopping()
    }

    /// Continues `session_id` in this process when its work comes, even without the background.
    /// Without the background the claim is recorded (`work_waiters`): the session's work is this
    /// engine's while it lives, and `skald approve` elsewhere can say the turn goes on.
    pub(super) async fn adopt(&self, session_id: i64, adopted: Adopted) {
        {
            let mut map = self.inner.work.adopted.lock().unwrap_or_else(|p| p.into_inner());
            let entry = map.entry(session_id).or_default();
            if adopted.mark.is_some() {
                entry.mark = adopted.mark;
            }
            if adopted.counted.is_some() {
                entry.counted = adopted.counted;
            }
        }
        self.inner.instance.adopted_changed(self.adopted_count());
        if !self.inner.lifecycle.background()
            && let Err(e) = self.store().set_waiter(session_id, self.instance_id()).await
        {
            tracing::warn!(session_id, "cannot record that this engine waits on the session: {e}");
        }
        self.wake_worker();
    }

    /// Takes the session back from adoption (a run of it starts here); its waiter row goes
    /// with the run's lease.
    pub(super) fn take_adopted(&self, session_id: i64) -> Option<Adopted> {
        let taken =
            self.inner.work.adopted.lock().unwrap_or_else(|p| p.into_inner()).remove(&session_id);
        if taken.is_some() {
            self.inner.instance.adopted_changed(self.adopted_count());
            let store = self.store().clone();
            let me = self.instance_id().to_string();
            self.inner.lifecycle.spawn(async move {
                let _ = store.clear_waiter(session_id, &me).await;
            });
        }
        taken
    }

    fn adopted_count(&self) -> usize {
        self.inner.work.adopted.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether this process adopted the session (it continues it when its work comes).
    pub(super) fn adopted(&self, session_id: i64) -> bool {
        self.inner.work.adopted.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&session_id)
    }

    fn adopted_sessions(&self) -> Vec<i64> {
        let map = self.inner.work.adopted.lock().unwrap_or_else(|p| p.into_inner());
        let mut ids: Vec<i64> = map.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Lets go of every adopted session (shutdown): their turns stay parked in the database for
    /// the next engine, and nobody here waits for them any more.
    pub(super) fn release_adopted(&self) {
        let all: Vec<Adopted> = {
            let mut map = self.inner.work.adopted.lock().unwrap_or_else(|p| p.into_inner());
            map.drain().map(|(_, a)| a).collect()
        };
        for a in all {
            if let Some(mark) = a.mark {
                mark.end(TurnOutcome::Cancelled);
            }
        }
    }

    /// Starts the worker (once) and tells it to look at the queue now.
    pub(super) fn wake_worker(&self) {
        self.ensure_worker();
        self.inner.work.wake.notify_one();
    }

    fn ensure_worker(&self) {
        if self.inner.work.worker.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        let stop = self.inner.lifecycle.stop_token().child_token();
        let wake = self.inner.work.wake.clone();
        self.inner.services.started(WORKER);
        self.inner.lifecycle.spawn(async move {
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                let claimed = engine.work_once().await;
                engine.inner.services.passed(WORKER, Ok(()));
                drop(engine);
                if claimed {
                    continue;
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = wake.notified() => {}
                    () = tokio::time::sleep(WORK_POLL) => {}
                }
            }
            if let Some(inner) = weak.upgrade() {
                inner.services.stopped(WORKER);
            }
        });
    }

    /// Claims what this process may run now and starts it. Returns whether it claimed anything.
    async fn work_once(&self) -> bool {
        if self.inner.lifecycle.stopping() {
            return false;
        }
        let scope = (!self.inner.lifecycle.background()).then(|| self.adopted_sessions());
        let scope = scope.as_deref();
        if scope.is_some_and(<[i64]>::is_empty) {
            return false;
        }
        let store = self.store();
        let me = self.instance_id().to_string();
        let mut claimed = false;
        // A read first: a claim is a write, and most polls find nothing.
        if store.work_waits(&me, WorkKind::Continue, scope).await.unwrap_or(false) {
            while let Ok(Some(item)) = store.claim_work(&me, WorkKind::Continue, scope).await {
                claimed = true;
                self.start_item(item, None).await;
            }
        }
        if store.work_waits(&me, WorkKind::Task, scope).await.unwrap_or(false) {
            // A task's run holds a slot: `llm.max_async_tasks` bound how many run at once.
            while let Ok(permit) = self.inner.task_slots.clone().try_acquire_owned() {
                match store.claim_work(&me, WorkKind::Task, scope).await {
                    Ok(Some(item)) => {
                        claimed = true;
                        self.start_item(item, Some(permit)).await;
                    }
                    _ => break,
                }
            }
        }
        claimed
    }

    /// Runs a claimed item under its session's lease, in a tracked task.
    async fn start_item(&self, item: WorkItem, slot: Option<OwnedSemaphorePermit>) {
        let store = self.store();
        let session_id = item.session_id;
        let Ok(lease) = self.acquire(session_id).await else {
            // Held by a run here or elsewhere: the work goes back; that run, or the next claim
            // after it, does it.
            if let Err(e) = store.unclaim_work(item.id).await {
                tracing::warn!(session_id, "cannot give a work item back: {e}");
            }
            return;
        };
        // Still waiting for a person: the decision queues the work again.
        if self.waits_for_a_person(session_id).await {
            lease.release().await;
            let _ = store.finish_work(item.id, "waiting for a person").await;
            return;
        }
        // Done meanwhile by a run that held the session: a turn adopted here is over.
        if !self.owes_work(session_id).await {
            lease.release().await;
            let _ = store.finish_work(item.id, "nothing to do").await;
            if let Some(a) = self.take_adopted(session_id)
                && let Some(mark) = a.mark
            {
                mark.end_as_it_was();
            }
            return;
        }
        let source = match store.session(session_id).await {
            Ok(s) => s.source,
            Err(e) => {
                lease.release().await;
                tracing::warn!(session_id, "cannot read the session of a work item: {e}");
                let _ = store.finish_work(item.id, "failed").await;
                return;
            }
        };
        // A job's run killed or expired while its work waited: nothing runs.
        if !self.job_run_started(session_id).await {
            lease.release().await;
            let _ = store.finish_work(item.id, "job run ended").await;
            return;
        }
        let adopted = self.take_adopted(session_id).unwrap_or_default();
        let mark = adopted.mark.unwrap_or_else(|| RunMark::start(lease.handle()));
        let counted = adopted.counted;
        if item.kind == WorkKind::Task {
            self.task_started(session_id).await;
        }
        let chain = match self.model_chain() {
            Ok(chain) => chain,
            Err(e) => {
                lease.release().await;
                let failed = TurnOutcome::Failed { message: e.to_string() };
                self.task_ended(session_id, &failed).await;
                let _ = store.finish_work(item.id, "failed").await;
                mark.end(failed);
                return;
            }
        };
        let engine = self.clone();
        self.inner.lifecycle.spawn(async move {
            let _slot = slot;
            let outcome = engine.run_steps(lease, chain, &source, Step::Resume).await;
            engine.item_ended(session_id, item.id, &outcome).await;
            engine.after_run(session_id, mark, counted, ParkMode::Wait, outcome).await;
        });
    }

    /// What follows a run: a turn that parked for a person in `Wait` mode stays adopted (its
    /// continuation runs here when decided, `wait_turn` keeps following it); any other end ends
    /// the turn.
    pub(super) async fn after_run(
        &self,
        session_id: i64,
        mark: RunMark,
        counted: Option<TaskRunCount>,
        mode: ParkMode,
        outcome: TurnOutcome,
    ) {
        let parked = matches!(outcome, TurnOutcome::Parked { .. });
        // With the background running the queue carries the continuation to whichever engine
        // claims it: only an engine without it (or an async task it counts) keeps waiting.
        let waits =
            mode == ParkMode::Wait && (!self.inner.lifecycle.background() || counted.is_some());
        if parked && waits && !self.inner.lifecycle.stopping() {
            self.adopt(session_id, Adopted { mark: Some(mark), counted }).await;
            return;
        }
        mark.end(outcome);
        drop(counted);
    }

    /// Whether the session's turn waits for a person's decision or answer: nothing can run
    /// before it (input sent meanwhile queues behind it, decision 44).
    async fn waits_for_a_person(&self, session_id: i64) -> bool {
        self.store().calls_awaiting_human(session_id).await.is_ok_and(|ids| !ids.is_empty())
    }
}
