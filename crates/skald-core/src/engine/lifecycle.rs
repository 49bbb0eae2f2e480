//! The engine's own tasks: every turn it starts, the background work of long-lived shells
//! (`start_background`) and a graceful `shutdown(grace)`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use skald_protocol::{Event, EventEnvelope};

use super::Engine;
use crate::turn::TurnOutcome;

/// How often the background looks for work whose claimant died (another host's engine is
/// presumed dead 15 s after its last heartbeat).
const RECLAIM_EVERY: Duration = Duration::from_secs(5);

/// How often old notifications are pruned while the background runs.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// How long aborted tasks get to unwind before `shutdown` tidies up after them.
const ABORT_WAIT: Duration = Duration::from_secs(1);

/// The engine's tasks and how they end.
pub(super) struct Lifecycle {
    runtime: Handle,
    tasks: TaskTracker,
    /// Cancelled when shutdown begins: every lease's token is a child of it.
    stopping: CancellationToken,
    /// Cancelled when the grace period is over: tracked tasks are dropped where they are.
    abort: CancellationToken,
    background: AtomicBool,
}

impl Lifecycle {
    /// Must be created inside a Tokio runtime: the engine's tasks run on it.
    pub(super) fn new() -> Self {
        Self {
            runtime: Handle::current(),
            tasks: TaskTracker::new(),
            stopping: CancellationToken::new(),
            abort: CancellationToken::new(),
            background: AtomicBool::new(false),
        }
    }

    pub(super) fn runtime(&self) -> &Handle {
        &self.runtime
    }

    pub(super) fn stopping(&self) -> bool {
        self.stopping.is_cancelled()
    }

    pub(super) fn stop_token(&self) -> &CancellationToken {
        &self.stopping
    }

    /// Whether this engine continues sessions by itself (`start_background` ran).
    pub(super) fn background(&self) -> bool {
        self.background.load(Ordering::SeqCst)
    }

    /// Runs `task` as one of the engine's tasks: `shutdown` waits for it, then drops it.
    pub(super) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) -> AbortHandle {
        let abort = self.abort.clone();
        let tracked = async move {
            tokio::select! {
                biased;
                () = abort.cancelled() => {}
                () = task => {}
            }
        };
        self.tasks.spawn_on(tracked, &self.runtime).abort_handle()
    }
}

/// What `shutdown` had to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Sessions whose turn did not end within the grace period: dropped, recorded `cancelled`.
    pub aborted: Vec<i64>,
}

impl Engine {
    /// For the app and `skald serve`: this engine claims every session's work from the queue
    /// (decisions' continuations, async tasks, reports to answer), puts back the work of engines
    /// that died, and queues what a crash left behind (sessions a dead process left mid-turn,
    /// tasks left unfinished, decisions nobody settled). Idempotent.
    pub fn start_background(&self) {
        let lifecycle = &self.inner.lifecycle;
        if lifecycle.background.swap(true, Ordering::SeqCst) || lifecycle.stopping() {
            return;
        }
        self.inner.instance.serves_background();
        let engine = self.clone();
        lifecycle.spawn(async move {
            let id = engine.instance_id().to_string();
            if let Err(e) = engine.store().set_instance_background(&id).await {
                tracing::warn!("cannot record that this engine runs the background: {e}");
            }
            engine.queue_leftovers().await;
            engine.wake_worker();
        });
        self.spawn_service("reclaim", RECLAIM_EVERY, |engine| async move {
            engine.reclaim_work().await
        });
        // Notifications another process stored (a job run by `skald`), or left by a crash.
        self.spawn_service("briefings", super::briefings::DELIVER_EVERY, |engine| async move {
            engine.deliver_briefing().await.map(|_| ()).map_err(|e| e.to_string())
        });
        self.spawn_service("prune", PRUNE_EVERY, |engine| async move {
            engine.prune_notifications().await
        });
        self.start_scheduler();
        self.start_tic();
    }

    /// Deletes notifications past `notifications.retention_days` (a long-running app's share
    /// of what opening the engine does).
    pub async fn prune_notifications(&self) -> Result<(), String> {
        let keep = self.config().notifications.retention_days;
        let store = self.store();
        let n = store
            .prune_notifications(store.clock().now(), keep)
            .await
            .map_err(|e| format!("cannot prune old notifications: {e}"))?;
        if n > 0 {
            tracing::info!(deleted = n, "pruned notifications older than {keep} days");
        }
        Ok(())
    }

    /// What a crash or a stop left behind gets queued once at start: turns a dead process held,
    /// async tasks not finished, sessions with input or decisions nobody read.
    async fn queue_leftovers(&self) {
        self.continue_abandoned().await;
        self.continue_tasks().await;
        self.continue_job_runs().await;
        self.continue_ticks().await;
        let store = self.store();
        let mut ids = store.sessions_with_unsettled_decisions().await.unwrap_or_default();
        ids.extend(store.sessions_with_unsettled_answers().await.unwrap_or_default());
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let _ = store.enqueue_leftover_continue(id).await;
        }
    }

    /// Work claimed by engines that died goes back to the queue; sessions they held mid-turn
    /// are queued too.
    async fn reclaim_work(&self) -> Result<(), String> {
        let alive = self.liveness();
        let store = self.store();
        store.prune_waiters(&alive).await.map_err(|e| format!("cannot drop dead waits: {e}"))?;
        let n = store
            .reclaim_work(self.instance_id(), &alive)
            .await
            .map_err(|e| format!("cannot look for work a dead engine claimed: {e}"))?;
        if n > 0 {
            tracing::info!(items = n, "took back work an engine that stopped had claimed");
            self.wake_worker();
        }
        // A dead engine's commands: their shell died with it, whatever they left running in
        // the background is killed now (not only when an engine next opens the data dir), and
        // before its turns are taken back, so a continued turn never runs beside them.
        crate::tools::process_registry::reap_orphans(store)
            .await
            .map_err(|e| format!("cannot reap a dead engine's commands: {e}"))?;
        self.continue_abandoned().await;
        Ok(())
    }

    /// Sessions whose runner died mid-turn (a kill, a crash, a power cut) are queued.
    async fn continue_abandoned(&self) {
        let alive = self.liveness();
        let found = self.store().abandoned_runners(self.instance_id(), &alive).await;
        match found {
            Ok(ids) => {
                for id in ids {
                    // Taking the session clears the dead row (and checks nobody took it since).
                    let Ok(lease) = self.acquire(id).await else { continue };
                    lease.release().await;
                    // The dead process may have committed rows whose events it never
                    // appended: every viewer of the session reads it again.
                    self.resync_viewers(id).await;
                    // A compaction died, or the turn had ended: the dead row was all there was.
                    if self.owes_work(id).await && self.continue_in_background(id).await {
                        tracing::info!(session_id = id, "continuing a turn a dead process left");
                    }
                }
            }
            Err(e) => tracing::warn!("cannot look for turns a dead process left: {e}"),
        }
    }

    /// Sends a `resync` for the session through the outbox (see `EventBus::send_resync`).
    async fn resync_viewers(&self, session_id: i64) {
        match self.store().session(session_id).await {
            Ok(session) => self.inner.events.send_resync(EventEnvelope::session(
                session_id,
                &session.source,
                Event::Resync {},
            )),
            Err(e) => {
                tracing::warn!(session_id, "cannot tell viewers to read a session again: {e}")
            }
        }
    }

    /// Whether the session's turn is unfinished: calls or root inputs are open, or the model has not
    /// had the last word (a prompt, or an answer whose calls still need a reply). Unknown counts
    /// as unfinished: a resume decides for sure.
    pub(super) async fn owes_work(&self, session_id: i64) -> bool {
        let store = self.store();
        let finished = async {
            if !store.open_tool_calls(session_id).await?.is_empty()
                || store.root_input_waits(session_id).await?
            {
                return Ok::<_, skald_store::StoreError>(false);
            }
            let root = store.root_frame(session_id).await?;
            let Some(last) = store.last_live_message(root.id).await? else { return Ok(true) };
            if last.role != "assistant" {
                return Ok(false);
            }
            let calls = store.tool_calls_for_stack_after(root.id, last.id - 1).await?;
            Ok(!calls.iter().any(|c| c.message_id == last.id))
        };
        !finished.await.unwrap_or(false)
    }

    /// Stops the engine: no new work starts, running turns and compactions are cancelled and get
    /// `grace` to record how they ended (`cancelled`); whatever is still running then is dropped,
    /// recorded `cancelled` here, and its session released for other processes.
    pub async fn shutdown(&self, grace: Duration) -> ShutdownReport {
        let lifecycle = &self.inner.lifecycle;
        lifecycle.stopping.cancel();
        lifecycle.tasks.close();
        // Turns this process waited on stay parked in the database for the next engine.
        self.release_adopted();
        let mut report = ShutdownReport::default();
        if tokio::time::timeout(grace, lifecycle.tasks.wait()).await.is_err() {
            report.aborted = self.inner.sessions.running();
            lifecycle.abort.cancel();
            let _ = tokio::time::timeout(ABORT_WAIT, lifecycle.tasks.wait()).await;
            for &session_id in &report.aborted {
                self.record_aborted(session_id).await;
            }
        }
        self.inner.mcp.shutdown().await;
        if let Err(e) = self.store().release_runners_of(self.instance_id()).await {
            tracing::warn!("cannot release this engine's sessions: {e}");
        }
        // The ends recorded above reach other processes before this one goes.
        self.flush_events().await;
        if let Err(e) = self.store().stop_instance(self.instance_id()).await {
            tracing::warn!("cannot record this engine as stopped: {e}");
        }
        report
    }

    /// Records `cancelled` for a turn dropped at shutdown, as its own end would have.
    async fn record_aborted(&self, session_id: i64) {
        let recorded = async {
            let session = self.store().session(session_id).await?;
            let emitter = self.root_emitter(session_id, &session.source).await?;
            self.finish(session_id, &emitter, &TurnOutcome::Cancelled).await;
            Ok::<_, crate::error::EngineError>(())
        };
        if let Err(e) = recorded.await {
            tracing::warn!(session_id, "cannot record the dropped turn as cancelled: {e}");
        }
    }
}
