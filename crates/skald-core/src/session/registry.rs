//! In-process state of sessions: the processing lock, the cancel token of the running unit of
//! work, and how the session's turns (runs) start and end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::turn::TurnOutcome;

/// The turns (runs of steps) this process started for a session.
#[derive(Debug, Clone, Default)]
pub struct RunState {
    /// Runs started, ever.
    pub started: u64,
    /// Runs ended, ever: a run is going while `ended < started`.
    pub ended: u64,
    /// How the last ended run ended.
    pub last: Option<TurnOutcome>,
}

impl RunState {
    pub fn running(&self) -> bool {
        self.ended < self.started
    }
}

/// One session's live state in this process.
#[derive(Debug)]
pub struct SessionHandle {
    /// Held for a whole unit of work (a turn, a resume, a compaction): one at a time.
    pub processing: Arc<tokio::sync::Mutex<()>>,
    cancel: Mutex<Option<CancellationToken>>,
    runs: watch::Sender<RunState>,
}

impl Default for SessionHandle {
    fn default() -> Self {
        Self {
            processing: Arc::default(),
            cancel: Mutex::default(),
            runs: watch::channel(RunState::default()).0,
        }
    }
}

impl SessionHandle {
    /// A fresh token for a new unit of work, a child of `parent` (the engine's shutdown); a
    /// stale cancellation never leaks into it.
    pub fn begin(&self, parent: &CancellationToken) -> CancellationToken {
        let token = parent.child_token();
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
        token
    }

    pub fn end(&self) {
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Cancels the running unit of work; returns whether there was one.
    pub fn cancel(&self) -> bool {
        match self.cancel.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    pub fn is_processing(&self) -> bool {
        self.processing.try_lock().is_err()
    }

    /// A run starts (before its task does, so a waiter never misses it).
    pub fn run_started(&self) {
        self.runs.send_modify(|s| s.started += 1);
    }

    /// The run ended with `outcome`.
    pub fn run_ended(&self, outcome: TurnOutcome) {
        self.runs.send_modify(|s| {
            s.ended = s.started;
            s.last = Some(outcome);
        });
    }

    /// The run ended; how is already recorded (another run of the session did its work).
    pub fn run_ended_as_it_was(&self) {
        self.runs.send_modify(|s| s.ended = s.started);
    }

    pub fn runs(&self) -> watch::Receiver<RunState> {
        self.runs.subscribe()
    }

    pub fn run_going(&self) -> bool {
        self.runs.borrow().running()
    }
}

/// Handles by session id, created on first use.
#[derive(Debug, Default)]
pub struct SessionRegistry {
    handles: Mutex<HashMap<i64, Arc<SessionHandle>>>,
}

impl SessionRegistry {
    pub fn handle(&self, session_id: i64) -> Arc<SessionHandle> {
        self.handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(session_id)
            .or_default()
            .clone()
    }

    pub fn existing(&self, session_id: i64) -> Option<Arc<SessionHandle>> {
        self.handles.lock().unwrap_or_else(|p| p.into_inner()).get(&session_id).cloned()
    }

    /// Sessions with a run going in this process.
    pub fn running(&self) -> Vec<i64> {
        let handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        let mut ids: Vec<i64> =
            handles.iter().filter(|(_, h)| h.run_going()).map(|(id, _)| *id).collect();
        ids.sort_unstable();
        ids
    }
}
