//! Where a server's events go beyond its in-memory list: the engine hands the manager a sink
//! (it stores them for TIC ticks) without this crate knowing the store.

use std::sync::{Arc, OnceLock};

use crate::handler::ServerEvent;

/// Receives every event a server sends that is neither a log message nor a change of its
/// tools, with the server's name. Called on the connection's task: it must not block (queue
/// the event and return).
pub trait EventSink: Send + Sync {
    fn event(&self, server: &str, event: &ServerEvent);
}

/// The manager's sink, shared by every server's event list (set once by the engine).
#[derive(Clone, Default)]
pub(crate) struct SharedSink(Arc<OnceLock<Arc<dyn EventSink>>>);

impl SharedSink {
    /// Sets the sink; a second call is ignored (false).
    pub(crate) fn set(&self, sink: Arc<dyn EventSink>) -> bool {
        self.0.set(sink).is_ok()
    }
}

/// One server's end of the shared sink.
#[derive(Clone, Default)]
pub(crate) struct ServerSink {
    pub(crate) server: String,
    pub(crate) shared: SharedSink,
}

impl std::fmt::Debug for ServerSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSink").field("server", &self.server).finish_non_exhaustive()
    }
}

impl ServerSink {
    pub(crate) fn send(&self, event: &ServerEvent) {
        if let Some(sink) = self.shared.0.get() {
            sink.event(&self.server, event);
        }
    }
}
