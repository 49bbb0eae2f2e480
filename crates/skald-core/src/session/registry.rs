//! In-process state of sessions: the processing lock and the cancel token of the running turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// One session's live state in this process.
#[derive(Debug, Default)]
pub struct SessionHandle {
    /// Held for a whole turn (or resume): one unit of work per session at a time.
    pub processing: Arc<tokio::sync::Mutex<()>>,
    cancel: Mutex<Option<CancellationToken>>,
}

impl SessionHandle {
    /// A fresh token for a new unit of work; a stale cancellation never leaks into it.
    pub fn begin(&self) -> CancellationToken {
        let token = CancellationToken::new();
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
}
