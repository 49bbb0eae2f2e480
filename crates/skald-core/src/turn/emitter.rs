//! `TurnEmitter`: the one seam through which a turn's events leave, tagged with session and source.

use skald_protocol::{Event, EventEnvelope};
use tokio::sync::broadcast;

#[derive(Debug, Clone)]
pub struct TurnEmitter {
    bus: broadcast::Sender<EventEnvelope>,
    session_id: i64,
    source: String,
}

impl TurnEmitter {
    pub fn new(bus: broadcast::Sender<EventEnvelope>, session_id: i64, source: String) -> Self {
        Self { bus, session_id, source }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Call only after the rows the event describes are committed.
    pub fn emit(&self, event: Event) {
        let _ = self.bus.send(EventEnvelope {
            session_id: Some(self.session_id),
            source: Some(self.source.clone()),
            event,
        });
    }
}
