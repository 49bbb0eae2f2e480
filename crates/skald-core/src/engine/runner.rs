//! The one turn runner: a `Lease` holds a session for one unit of work (a turn, a resume, a
//! compaction) in this process and across processes, and turns run as tasks the engine tracks.

use std::sync::Arc;

use skald_llm::ModelEndpoint;
use skald_store::StoreError;
use tokio_util::sync::CancellationToken;

use super::Engine;
use super::chat::Step;
use crate::error::{EngineError, Holder};
use crate::session::registry::SessionHandle;
use crate::turn::{ParkMode, TurnOutcome};

/// A session held for one unit of work: the in-process processing lock, the cross-process
/// `session_runners` row naming this engine's instance (alive while the instance's heartbeat
/// is; stops other processes request reach it through the instance's watch) and the work's
/// cancel token (a child of the engine's shutdown).
///
/// `release` gives it back; a lease dropped without it (a task aborted at shutdown) frees the
/// lock and cancels at once and deletes the row in the background.
pub struct Lease {
    engine: Engine,
    session_id: i64,
    handle: Arc<SessionHandle>,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    cancel: CancellationToken,
    released: bool,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("session_id", &self.session_id).finish_non_exhaustive()
    }
}

impl Lease {
    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// The session's live state in this process.
    pub(super) fn handle(&self) -> Arc<SessionHandle> {
        self.handle.clone()
    }

    /// Cancelled by `stop` (from any process) and by the engine's shutdown.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Gives the session back: deletes the runner row, frees the lock.
    pub async fn release(mut self) {
        self.released = true;
        let store = self.engine.store();
        if let Err(e) = store.release_runner(self.session_id, self.engine.instance_id()).await {
            tracing::warn!(session_id = self.session_id, "cannot release the runner row: {e}");
        }
        self.engine.inner.instance.lease_given_back();
        self.handle.end();
        self.guard.take();
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        self.engine.inner.instance.lease_given_back();
        self.handle.end();
        self.guard.take();
        let store = self.engine.store().clone();
        let runner = self.engine.instance_id().to_string();
        let session_id = self.session_id;
        let processing = self.handle.processing.clone();
        // Under the lock, so a lease taken meanwhile keeps its row (it holds the lock). Best
        // effort: `shutdown` deletes whatever is left of this engine's rows as well.
        self.engine.inner.lifecycle.runtime().spawn(async move {
            if let Ok(_held) = processing.try_lock_owned() {
                let _ = store.release_runner(session_id, &runner).await;
            }
        });
    }
}

impl Engine {
    /// Holds `session_id` for one unit of work. Refused with `SessionBusy` while a turn or a
    /// compaction runs it here or in another live process, and with `ShuttingDown` once
    /// `shutdown` began.
    pub async fn acquire(&self, session_id: i64) -> Result<Lease, EngineError> {
        let lifecycle = &self.inner.lifecycle;
        if lifecycle.stopping() {
            return Err(EngineError::ShuttingDown);
        }
        let handle = self.inner.sessions.handle(session_id);
        let Ok(guard) = handle.processing.clone().try_lock_owned() else {
            return Err(EngineError::SessionBusy { session_id, holder: Holder::Here });
        };
        let alive = self.liveness();
        let claimed = self.store().claim_runner(session_id, &self.inner.instance.me, &alive).await;
        match claimed {
            Ok(()) => {}
            Err(StoreError::Conflict(_)) => {
                return Err(EngineError::SessionBusy { session_id, holder: Holder::OtherProcess });
            }
            Err(e) => return Err(e.into()),
        }
        self.inner.instance.lease_taken();
        let cancel = handle.begin(lifecycle.stop_token());
        Ok(Lease {
            engine: self.clone(),
            session_id,
            handle,
            guard: Some(guard),
            cancel,
            released: false,
        })
    }

    /// Runs `first` on the leased session in a task the engine tracks, then the steers sent too
    /// late for it; `wait_turn` tells how it ended. A turn that parks lets go of the session;
    /// in `Wait` mode this process adopts it and continues it when the decision comes.
    pub(super) fn spawn_run(
        &self,
        lease: Lease,
        chain: Vec<ModelEndpoint>,
        source: &str,
        first: Step,
        mode: ParkMode,
    ) {
        // Marked before the task starts, so a `wait_turn` right after this returns waits for it
        // (a turn this process already follows keeps its mark).
        let session_id = lease.session_id();
        let adopted = self.take_adopted(session_id).unwrap_or_default();
        let mark = adopted.mark.unwrap_or_else(|| RunMark::start(lease.handle.clone()));
        let counted = adopted.counted;
        let engine = self.clone();
        let source = source.to_string();
        self.inner.lifecycle.spawn(async move {
            let outcome = engine.run_steps(lease, chain, &source, first).await;
            engine.after_run(session_id, mark, counted, mode, outcome).await;
        });
    }

    /// Waits for the session's turn in this process to end and tells how it ended (the last
    /// one's end when none runs). `None` when this engine never ran a turn of the session.
    pub async fn wait_turn(&self, session_id: i64) -> Option<TurnOutcome> {
        let mut runs = self.inner.sessions.handle(session_id).runs();
        let state = runs.wait_for(|s| !s.running()).await.ok()?;
        state.last.clone()
    }

    /// Starts continuing the session's turn (settling recorded decisions and calls a crash left
    /// open, folding waiting steers) in a tracked task; `wait_turn` follows it.
    pub async fn start_resume(&self, session_id: i64, mode: ParkMode) -> Result<(), EngineError> {
        let session = self.store().session(session_id).await?;
        let lease = self.acquire(session_id).await?;
        let chain = match self.model_chain() {
            Ok(chain) => chain,
            Err(e) => {
                lease.release().await;
                return Err(e);
            }
        };
        self.spawn_run(lease, chain, &session.source, Step::Resume, mode);
        Ok(())
    }

    /// Settles recorded decisions and continues the session's turn in this process (folding
    /// steers queued meanwhile), waiting for further decisions when `mode` is `Wait`.
    pub async fn resume(
        &self,
        session_id: i64,
        mode: ParkMode,
    ) -> Result<TurnOutcome, EngineError> {
        self.start_resume(session_id, mode).await?;
        self.wait_turn(session_id).await.ok_or_else(|| {
            EngineError::Internal(format!("the resume of session {session_id} left no outcome"))
        })
    }

    /// Queues the session's continuation for whichever engine runs the background (this one
    /// too, when its background runs). Returns whether this engine will pick it up.
    pub(super) async fn continue_in_background(&self, session_id: i64) -> bool {
        if let Err(e) = self.store().enqueue_continue(session_id).await {
            tracing::warn!(session_id, "cannot queue the session's continuation: {e}");
            return false;
        }
        let here = self.inner.lifecycle.background() || self.adopted(session_id);
        if here {
            self.wake_worker();
        }
        here
    }
}

/// Marks a turn started on the session's handle, and ended when its last run ends (a run parked
/// in `Wait` mode keeps it) — as `Cancelled` when it never got to say (aborted at shutdown), so
/// no waiter hangs.
#[derive(Debug)]
pub(super) struct RunMark {
    handle: Arc<SessionHandle>,
    ended: bool,
}

impl RunMark {
    pub(super) fn start(handle: Arc<SessionHandle>) -> Self {
        handle.run_started();
        Self { handle, ended: false }
    }

    pub(super) fn end(mut self, outcome: TurnOutcome) {
        self.ended = true;
        self.handle.run_ended(outcome);
    }

    /// Ends the turn keeping the last outcome recorded (its work was done by another run).
    pub(super) fn end_as_it_was(mut self) {
        self.ended = true;
        self.handle.run_ended_as_it_was();
    }
}

impl Drop for RunMark {
    fn drop(&mut self) {
        if !self.ended {
            self.handle.run_ended(TurnOutcome::Cancelled);
        }
    }
}
