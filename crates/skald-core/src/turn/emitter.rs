//! `TurnEmitter`: the one seam through which a turn's events leave, tagged with the session, the
//! source and the frame (id, depth, origin label) they come from.

use skald_protocol::{Event, EventEnvelope, FrameOrigin};

use crate::events::EventBus;

#[derive(Debug, Clone)]
pub struct TurnEmitter {
    bus: EventBus,
    session_id: i64,
    source: String,
    frame: FrameOrigin,
}

impl TurnEmitter {
    pub fn new(bus: EventBus, session_id: i64, source: String, frame: FrameOrigin) -> Self {
        Self { bus, session_id, source, frame }
    }

    /// The emitter of a sub-agent frame `stack_id` running `agent_id`, opened from this frame by
    /// call `parent_tool_call_id`: its events carry the child's depth, nested origin label and
    /// spawning call.
    pub fn child(&self, stack_id: i64, agent_id: &str, parent_tool_call_id: i64) -> Self {
        Self { frame: self.frame.child(stack_id, agent_id, parent_tool_call_id), ..self.clone() }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn frame(&self) -> &FrameOrigin {
        &self.frame
    }

    /// Call only after the rows the event describes are committed: the bus delivers it in
    /// this process at once and appends it to the outbox other processes read.
    pub fn emit(&self, event: Event) {
        self.bus.send(EventEnvelope::framed(
            self.session_id,
            &self.source,
            self.frame.clone(),
            event,
        ));
    }
}
