//! `TurnEmitter`: the one seam through which a turn's events leave, tagged with the session, the
//! source and the frame (id, depth, origin label) they come from.

use std::future::Future;

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

    /// Runs `write` and emits `events` with it: they ride its transaction into the outbox, and
    /// are delivered once it committed (nothing when it failed). The way to emit what a write
    /// changes.
    pub async fn commit<T, E>(
        &self,
        events: Vec<Event>,
        write: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let me = self.clone();
        let build = Box::new(move |_: Option<i64>| me.envelopes(events));
        self.bus.commit_with(build, write).await
    }

    /// `commit` for a write that inserts a row (a message) whose id the events name: `build`
    /// gets the id.
    pub async fn commit_created<T, E>(
        &self,
        write: impl Future<Output = Result<T, E>>,
        build: impl FnOnce(i64) -> Vec<Event> + Send + 'static,
    ) -> Result<T, E> {
        let me = self.clone();
        let build = Box::new(move |id: Option<i64>| {
            // Every store write that inserts a message commits with its id.
            debug_assert!(id.is_some(), "a write that created a row did not name it");
            me.envelopes(build(id.unwrap_or_default()))
        });
        self.bus.commit_with(build, write).await
    }

    fn envelopes(&self, events: Vec<Event>) -> Vec<EventEnvelope> {
        events
            .into_iter()
            .map(|event| {
                EventEnvelope::framed(self.session_id, &self.source, self.frame.clone(), event)
            })
            .collect()
    }

    /// Emits an event no single write carries (a turn starting, a notice about the model).
    /// Call only after the rows the event describes are committed: the bus delivers it in this
    /// process at once and appends it to the outbox other processes read.
    pub fn emit(&self, event: Event) {
        self.bus.send(EventEnvelope::framed(
            self.session_id,
            &self.source,
            self.frame.clone(),
            event,
        ));
    }
}
