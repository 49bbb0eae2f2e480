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
    /// late for it; `wait_turn` tells how it ended.
    pub(super) fn spawn_run(
        &self,
        lease: Lease,
        chain: Vec<ModelEndpoint>,
        source: &str,
        first: Step,
        mode: ParkMode,
    ) {
        // Marked before the task starts, so a `wait_turn` right after this returns waits for it.
        let mark = RunMark::start(lease.handle.clone());
        let engine = self.clone();
        let source = source.to_string();
        self.inner.lifecycle.spawn(async move {
            engine.run_with_mark(mark, lease, chain, &source, first, mode).await;
        });
    }

    /// `spawn_run` inside a task the caller already runs (the async task runner, which holds a
    /// slot for the whole run); `wait_turn` follows it the same way.
    pub(super) async fn run_marked(
        &self,
        lease: Lease,
        chain: Vec<ModelEndpoint>,
        source: &str,
        first: Step,
        mode: ParkMode,
    ) -> TurnOutcome {
        let mark = RunMark::start(lease.handle.clone());
        self.run_with_mark(mark, lease, chain, source, first, mode).await
    }

    async fn run_with_mark(
        &self,
        mark: RunMark,
        lease: Lease,
        chain: Vec<ModelEndpoint>,
        source: &str,
        first: Step,
        mode: ParkMode,
    ) -> TurnOutcome {
        let outcome = self.run_steps(lease, chain, source, first, mode).await;
        mark.end(outcome.clone());
        outcome
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

    /// Continues the session in the background when nobody holds it (a decision landed, or it
    /// was left mid-turn). Returns whether a run started.
    pub(super) async fn continue_in_background(&self, session_id: i64) -> bool {
        match self.start_resume(session_id, ParkMode::Wait).await {
            Ok(()) => true,
            Err(EngineError::SessionBusy { .. } | EngineError::ShuttingDown) => false,
            Err(e) => {
                tracing::warn!(session_id, "cannot continue the session: {e}");
                false
            }
        }
    }
}

/// Marks a run started on the session's handle, and ended when the run's task ends — as
/// `Cancelled` when it never got to say (aborted at shutdown), so no waiter hangs.
struct RunMark {
    handle: Arc<SessionHandle>,
    ended: bool,
}

impl RunMark {
    fn start(handle: Arc<SessionHandle>) -> Self {
        handle.run_started();
        Self { handle, ended: false }
    }

    fn end(mut self, outcome: TurnOutcome) {
        self.ended = true;
        self.handle.run_ended(outcome);
    }
}

impl Drop for RunMark {
    fn drop(&mut self) {
        if !self.ended {
            self.handle.run_ended(TurnOutcome::Cancelled);
        }
    }
}
