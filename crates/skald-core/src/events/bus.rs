//! `EventBus`: every event the engine emits enters here. In-process subscribers get it at once;
//! the pump appends the ones that describe stored changes to the outbox, in the order they were
//! emitted, and publishes everything to the feed with its sequence, merged in sequence order
//! with what other processes appended.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use skald_protocol::{Event, EventEnvelope, EventKind};
use skald_store::Store;
use skald_store::repo::outbox::OutboxRow;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::TAIL_EVERY;

/// Capacity of the in-process bus; a slow subscriber that falls further behind sees `Lagged`.
const LOCAL_CAPACITY: usize = 1024;
/// Capacity of the feed; a feed that falls behind reads what it missed back from the outbox.
const FEED_CAPACITY: usize = 1024;
/// Events appended in one transaction at most.
const MAX_BATCH: usize = 256;
/// How long the pump gathers events before it appends them. A tool round emits about three
/// events a few milliseconds apart, each after its own commit; appending each alone made the
/// outbox two more write transactions and seven more WAL pages per round (the turn bench). A
/// viewer waits this much longer at most, well under the tail's period.
const GATHER_FOR: Duration = Duration::from_millis(20);
/// Rows read per tail query.
const TAIL_PAGE: i64 = 500;
/// How often a tailing engine prunes the outbox (it is also pruned when an engine opens).
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Whether events of `kind` go to the outbox, i.e. reach other processes and a client that
/// resumes. Everything that describes a stored change does. What stays in the process: streamed
/// token deltas (the stored reply follows as `thinking`/`done`), `model_retry` and
/// `model_fallback` (they tell a viewer to drop text streamed for a failed attempt, which never
/// left this process; the reply that follows is stored), `config_reloaded` and `agents_changed`
/// (each process that shows them watches the files itself), and what a subscription sends of its
/// own (`resync`, `subscribed`).
pub fn outboxed(kind: EventKind) -> bool {
    match kind {
        EventKind::TokenDelta
        | EventKind::ModelRetry
        | EventKind::ModelFallback
        | EventKind::ConfigReloaded
        | EventKind::AgentsChanged
        | EventKind::Resync
        | EventKind::Subscribed => false,
        EventKind::SessionsChanged
        | EventKind::NewSession
        | EventKind::UserMessage
        | EventKind::SteerQueued
        | EventKind::SteerFolded
        | EventKind::SteersDiscarded
        | EventKind::TurnRunning
        | EventKind::Thinking
        | EventKind::ToolStart
        | EventKind::ToolDone
        | EventKind::ToolError
        | EventKind::ToolCancelled
        | EventKind::ToolRejected
        | EventKind::ApprovalRequested
        | EventKind::ApprovalResolved
        | EventKind::BypassesChanged
        | EventKind::AgentQuestion
        | EventKind::ClarificationResolved
        | EventKind::FileChanged
        | EventKind::LlmFailed
        | EventKind::Truncated
        | EventKind::InterimAnswer
        | EventKind::Done
        | EventKind::TurnEnded
        | EventKind::Compacting
        | EventKind::InterruptedCall
        | EventKind::TaskUpdate
        | EventKind::JobRunUpdate
        | EventKind::CompactionDone => true,
    }
}

// Nearly every message is an event: boxing it would cost an allocation each, to save nothing.
#[allow(clippy::large_enum_variant)]
enum Pumped {
    Event {
        envelope: EventEnvelope,
        outboxed: bool,
    },
    /// Answered once everything sent before it is appended and published.
    Flush(oneshot::Sender<()>),
    /// Start tailing the outbox (a feed subscriber appeared); answered once the cursor is set.
    Tail(oneshot::Sender<()>),
}

/// The engine's event bus. Cheap to clone; every clone is the same bus.
#[derive(Debug, Clone)]
pub struct EventBus {
    local: broadcast::Sender<EventEnvelope>,
    feed: broadcast::Sender<EventEnvelope>,
    pump: mpsc::UnboundedSender<Pumped>,
}

impl EventBus {
    /// A bus whose pump appends to `store` as instance `instance_id`. Must be called inside a
    /// Tokio runtime: the pump runs on it until the last clone of the bus is dropped.
    pub(crate) fn start(store: Store, instance_id: String) -> Self {
        let (local, _) = broadcast::channel(LOCAL_CAPACITY);
        let (feed, _) = broadcast::channel(FEED_CAPACITY);
        let (pump, queue) = mpsc::unbounded_channel();
        let worker = Pump {
            store,
            me: instance_id,
            feed: feed.clone(),
            cursor: None,
            pruned_at: Instant::now(),
            tail_failing: false,
        };
        tokio::spawn(worker.run(queue));
        Self { local, feed, pump }
    }

    /// Emits `envelope`: in-process subscribers have it when this returns; the pump appends it
    /// to the outbox (when its kind describes a stored change) and publishes it to the feed.
    /// Call only after the rows the event describes are committed.
    pub fn send(&self, envelope: EventEnvelope) {
        let outboxed = outboxed(envelope.event.kind());
        // A delta nobody follows on the feed needs no trip through the pump.
        if outboxed || self.feed.receiver_count() > 0 {
            let _ = self.pump.send(Pumped::Event { envelope: envelope.clone(), outboxed });
        }
        let _ = self.local.send(envelope);
    }

    /// Tells the clients of every process, and those that resume from a sequence, to read the
    /// session again: a `resync` that goes through the outbox. It repairs the one gap the outbox
    /// has (a process killed between a commit and the append of its events): the engine that
    /// takes back a dead process's turn sends it, so a viewer never keeps a view that misses rows.
    pub fn send_resync(&self, envelope: EventEnvelope) {
        let _ = self.pump.send(Pumped::Event { envelope: envelope.clone(), outboxed: true });
        let _ = self.local.send(envelope);
    }

    /// This process's events from now on, at once, without sequences.
    pub(crate) fn subscribe_local(&self) -> broadcast::Receiver<EventEnvelope> {
        self.local.subscribe()
    }

    /// Waits until every event sent so far is appended to the outbox and published.
    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.pump.send(Pumped::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// Makes sure the pump tails the outbox, then subscribes to the feed: every event published
    /// after this returns has a sequence above the outbox's head as read after it.
    pub(crate) async fn subscribe_feed(&self) -> broadcast::Receiver<EventEnvelope> {
        let (done, wait) = oneshot::channel();
        if self.pump.send(Pumped::Tail(done)).is_ok() {
            let _ = wait.await;
        }
        self.feed.subscribe()
    }
}

/// What the pump appends in one transaction: `first` and what follows it within `GATHER_FOR`
/// (or until a flush or a feed subscription asks for everything at once, or `MAX_BATCH`).
async fn gather(first: Pumped, queue: &mut mpsc::UnboundedReceiver<Pumped>) -> Vec<Pumped> {
    let urgent = |item: &Pumped| !matches!(item, Pumped::Event { .. });
    let mut done = urgent(&first);
    let mut batch = vec![first];
    let until = tokio::time::Instant::now() + GATHER_FOR;
    while !done && batch.len() < MAX_BATCH {
        match tokio::time::timeout_at(until, queue.recv()).await {
            Ok(Some(item)) => {
                done = urgent(&item);
                batch.push(item);
            }
            Ok(None) | Err(_) => break,
        }
    }
    batch
}

/// The one task that appends and publishes, so the feed is in sequence order.
struct Pump {
    store: Store,
    me: String,
    feed: broadcast::Sender<EventEnvelope>,
    /// The newest sequence published to the feed, every lower one published or skipped; `None`
    /// until the first feed subscriber (before that, nothing of other processes is read).
    cursor: Option<i64>,
    pruned_at: Instant,
    /// The last tail read failed (said once, not every 100 ms).
    tail_failing: bool,
}

impl Pump {
    async fn run(mut self, mut queue: mpsc::UnboundedReceiver<Pumped>) {
        let mut tail = tokio::time::interval(TAIL_EVERY);
        tail.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                got = queue.recv() => {
                    let Some(first) = got else { break };
                    let batch = gather(first, &mut queue).await;
                    self.handle(batch).await;
                }
                _ = tail.tick(), if self.cursor.is_some() => self.tail().await,
            }
        }
    }

    async fn handle(&mut self, batch: Vec<Pumped>) {
        let mut events = Vec::new();
        for item in batch {
            match item {
                Pumped::Event { envelope, outboxed } => events.push((envelope, outboxed)),
                Pumped::Flush(done) => {
                    self.publish(std::mem::take(&mut events)).await;
                    let _ = done.send(());
                }
                Pumped::Tail(done) => {
                    self.publish(std::mem::take(&mut events)).await;
                    self.start_tail().await;
                    let _ = done.send(());
                }
            }
        }
        self.publish(events).await;
    }

    /// Appends the batch's stored-change events in one transaction, then publishes what other
    /// instances appended before them and the batch itself, in order, with sequences.
    async fn publish(&mut self, events: Vec<(EventEnvelope, bool)>) {
        if events.is_empty() {
            return;
        }
        let written: Vec<&EventEnvelope> =
            events.iter().filter(|(_, outboxed)| *outboxed).map(|(e, _)| e).collect();
        let mut seqs = VecDeque::new();
        if !written.is_empty() && !self.store.is_read_only() {
            match self.store.append_events(&self.me, &written, self.cursor).await {
                Ok(appended) => {
                    for row in appended.others {
                        self.publish_row(row);
                    }
                    seqs = appended.seqs.into();
                }
                // The rows the events describe are committed: a client that reloads rebuilds
                // them. This process's subscribers still get the events, without a sequence.
                Err(e) => tracing::warn!("cannot append events to the outbox: {e}"),
            }
        }
        for (mut envelope, outboxed) in events {
            if outboxed && let Some(seq) = seqs.pop_front() {
                envelope.seq = Some(seq);
                if let Some(cursor) = &mut self.cursor {
                    *cursor = (*cursor).max(seq);
                }
            }
            let _ = self.feed.send(envelope);
        }
    }

    /// Publishes a row another instance appended (ours were published when appended).
    fn publish_row(&mut self, row: OutboxRow) {
        let cursor = self.cursor.get_or_insert(row.seq);
        if row.seq > *cursor + 1 {
            // Rows between were pruned before we read them (this engine fell a day behind).
            let _ = self.feed.send(EventEnvelope::global(Event::Resync {}));
        }
        *cursor = (*cursor).max(row.seq);
        if row.instance_id == self.me {
            return;
        }
        match row.envelope() {
            Ok(envelope) => {
                let _ = self.feed.send(envelope);
            }
            Err(e) => {
                // An event this build cannot read (a newer process wrote it): clients reload.
                tracing::warn!("skipping an outbox row: {e}");
                let _ = self.feed.send(EventEnvelope::global(Event::Resync {}));
            }
        }
    }

    async fn start_tail(&mut self) {
        if self.cursor.is_some() {
            return;
        }
        match self.store.outbox_head().await {
            Ok(head) => self.cursor = Some(head),
            Err(e) => tracing::warn!("cannot read the event outbox: {e}"),
        }
    }

    /// Publishes what other processes appended since the cursor.
    async fn tail(&mut self) {
        let Some(mut after) = self.cursor else { return };
        loop {
            let rows = match self.store.outbox_after(after, TAIL_PAGE).await {
                Ok(rows) => rows,
                Err(e) => {
                    if !self.tail_failing {
                        tracing::warn!("cannot read the event outbox: {e}");
                    }
                    self.tail_failing = true;
                    return;
                }
            };
            self.tail_failing = false;
            let full = rows.len() as i64 == TAIL_PAGE;
            for row in rows {
                after = row.seq;
                self.publish_row(row);
            }
            if !full {
                break;
            }
        }
        if self.pruned_at.elapsed() >= PRUNE_EVERY && !self.store.is_read_only() {
            self.pruned_at = Instant::now();
            if let Err(e) = self.store.prune_outbox(self.store.clock().now()).await {
                tracing::warn!("cannot prune the event outbox: {e}");
            }
        }
    }
}
