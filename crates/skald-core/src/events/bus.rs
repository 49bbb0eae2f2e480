//! `EventBus`: every event the engine emits enters here. In-process subscribers get it at once.
//! An event that describes a stored change rides that change's write transaction into the outbox
//! (`commit_with`); the few that describe no single write (a turn starting, a call's labels, a
//! model failing over) wait in a queue that the pump appends within `GATHER_FOR` or the next
//! change carries in front of its own, whichever comes first — so the outbox keeps this
//! process's order. The feed is the outbox read in sequence order, whoever wrote it, with the
//! in-process-only events (token deltas) slotted in where they were emitted.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use skald_protocol::{Event, EventEnvelope, EventKind};
use skald_store::Store;
use skald_store::repo::outbox::OutboxRow;
use skald_store::repo::staged_events::{BuildEvents, StagedOutcome, with_staged_events};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::TAIL_EVERY;

/// Capacity of the in-process bus; a slow subscriber that falls further behind sees `Lagged`.
const LOCAL_CAPACITY: usize = 1024;
/// Capacity of the feed; a feed that falls behind reads what it missed back from the outbox.
const FEED_CAPACITY: usize = 1024;
/// Events appended in one transaction at most.
const MAX_BATCH: usize = 256;
/// How long the pump gathers events before it appends or reads them: a round's events come a
/// few milliseconds apart, and one statement for all of them is cheaper than one each. A viewer
/// waits this much longer at most, well under the tail's period.
const GATHER_FOR: Duration = Duration::from_millis(20);
/// Rows read per tail query.
const TAIL_PAGE: i64 = 500;
/// How often a tailing engine prunes the outbox (it is also pruned when an engine opens).
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Whether events of `kind` go to the outbox, i.e. reach other processes and a client that
/// resumes. Everything that describes a stored change does. What stays in the process: streamed
/// token deltas (the stored reply follows as `thinking`/`done`), a call's live progress (its
/// end follows as `tool_done`/`tool_error`; a server reporting progress often writes nothing), `model_retry` and
/// `model_fallback` (they tell a viewer to drop text streamed for a failed attempt, which never
/// left this process; the reply that follows is stored), `config_reloaded` and `agents_changed`
/// (each process that shows them watches the files itself), and what a subscription sends of its
/// own (`resync`, `subscribed`).
pub fn outboxed(kind: EventKind) -> bool {
    match kind {
        EventKind::TokenDelta
        | EventKind::ToolProgress
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
        | EventKind::ElicitationRequested
        | EventKind::ElicitationResolved
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
        | EventKind::JobChanged
        | EventKind::HomeNotice
        | EventKind::HomeNoticeDismissed
        | EventKind::BriefingDelivered
        | EventKind::CompactionDone => true,
    }
}

// Nearly every message is an event: boxing it would cost an allocation each, to save nothing.
#[allow(clippy::large_enum_variant)]
enum Pumped {
    /// An event that stays in this process (a token delta): published to the feed after
    /// everything emitted before it — the first `after` unwritten events, and what this process
    /// committed so far — and before anything emitted after it.
    Local { envelope: EventEnvelope, after: u64 },
    /// Events wait in `Unwritten` for an append (by the pump, or by the next commit).
    Unwritten,
    /// Events already in the outbox (appended with their change), the highest sequence given:
    /// the feed reads them there.
    Committed(i64),
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
    /// The engine instance whose events these are (the outbox's `instance_id`).
    me: Arc<str>,
    unwritten: Unwritten,
}

/// Outboxed events no write carried, in emission order, until they are appended: by the pump
/// (within `GATHER_FOR`) or by the next change this process commits, whichever comes first, in
/// front of that change's own events. So the outbox keeps this process's order: a `tool_start`
/// emitted before a call's end is never stored after it.
#[derive(Debug, Clone, Default)]
struct Unwritten(Arc<std::sync::Mutex<Queue>>);

#[derive(Debug, Default)]
struct Queue {
    /// Each event with its number in emission order.
    events: VecDeque<(u64, EventEnvelope)>,
    /// How many were ever pushed: the number the next one gets.
    pushed: u64,
}

impl Unwritten {
    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, envelope: EventEnvelope) {
        let mut queue = self.queue();
        let n = queue.pushed;
        queue.events.push_back((n, envelope));
        queue.pushed += 1;
    }

    /// How many were pushed so far: a mark for `take_before`.
    fn pushed(&self) -> u64 {
        self.queue().pushed
    }

    fn is_empty(&self) -> bool {
        self.queue().events.is_empty()
    }

    /// Takes everything waiting.
    fn take(&self) -> Vec<(u64, EventEnvelope)> {
        self.queue().events.drain(..).collect()
    }

    /// Takes the events pushed before `mark`.
    fn take_before(&self, mark: u64) -> Vec<(u64, EventEnvelope)> {
        let mut queue = self.queue();
        let n = queue.events.iter().take_while(|(i, _)| *i < mark).count();
        queue.events.drain(..n).collect()
    }

    /// Puts back events taken for an append that failed, ahead of any emitted since.
    fn put_back(&self, taken: Vec<(u64, EventEnvelope)>) {
        let mut queue = self.queue();
        for event in taken.into_iter().rev() {
            queue.events.push_front(event);
        }
    }
}

impl EventBus {
    /// A bus whose pump appends to `store` as instance `instance_id`. Must be called inside a
    /// Tokio runtime: the pump runs on it until the last clone of the bus is dropped.
    pub(crate) fn start(store: Store, instance_id: String) -> Self {
        let (local, _) = broadcast::channel(LOCAL_CAPACITY);
        let (feed, _) = broadcast::channel(FEED_CAPACITY);
        let (pump, queue) = mpsc::unbounded_channel();
        let me: Arc<str> = instance_id.into();
        let unwritten = Unwritten::default();
        let worker = Pump {
            store,
            unwritten: unwritten.clone(),
            appended: 0,
            feed: feed.clone(),
            cursor: None,
            pruned_at: Instant::now(),
            tail_failing: false,
        };
        tokio::spawn(worker.run(queue, me.clone()));
        Self { local, feed, pump, me, unwritten }
    }

    /// Runs `write` with the events `build` makes riding its first write transaction into the
    /// outbox, then delivers them (in-process at once, with their sequences). `build` gets the
    /// id of the row the write created, when it created one. No commit, no event: a write that
    /// fails, or one that changes nothing and so commits nothing (a repeated decision), delivers
    /// nothing. This is how an event that describes a change is emitted: a process killed after
    /// the commit cannot have stored the change without its events, nor the events without it.
    pub async fn commit_with<T, E, F>(&self, build: BuildEvents, write: F) -> Result<T, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        // Events emitted earlier and not yet appended go in first, in the same transaction.
        let taken = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (unwritten, carried) = (self.unwritten.clone(), taken.clone());
        let build: BuildEvents = Box::new(move |id| {
            let earlier = unwritten.take();
            let mut events: Vec<EventEnvelope> = earlier.iter().map(|(_, e)| e.clone()).collect();
            *carried.lock().unwrap_or_else(|e| e.into_inner()) = earlier;
            events.extend(build(id));
            events
        });
        let (output, outcome) = with_staged_events(&self.me, build, write).await;
        let earlier = std::mem::take(&mut *taken.lock().unwrap_or_else(|e| e.into_inner()));
        match outcome {
            // Committed even if a later step of `write` failed: the change is stored, so is said.
            StagedOutcome::Appended(envelopes) => {
                let newest = envelopes.iter().filter_map(|e| e.seq).max().unwrap_or(0);
                let _ = self.pump.send(Pumped::Committed(newest));
                // The earlier ones reached this process's subscribers when they were emitted.
                for envelope in envelopes.into_iter().skip(earlier.len()) {
                    let _ = self.local.send(envelope);
                }
            }
            StagedOutcome::NotAppended(_) if !earlier.is_empty() => {
                self.unwritten.put_back(earlier);
                let _ = self.pump.send(Pumped::Unwritten);
            }
            StagedOutcome::NotAppended(_) => {}
        }
        output
    }

    /// Emits `envelope`, which no write transaction carried: in-process subscribers have it when
    /// this returns; the pump appends it to the outbox (when its kind describes a stored change)
    /// and publishes it to the feed. Call only after the rows the event describes are committed;
    /// an event that describes one write goes through `commit_with` instead.
    pub fn send(&self, envelope: EventEnvelope) {
        if outboxed(envelope.event.kind()) {
            self.unwritten.push(envelope.clone());
            let _ = self.pump.send(Pumped::Unwritten);
        } else if self.feed.receiver_count() > 0 {
            // A delta nobody follows on the feed needs no trip through the pump.
            let after = self.unwritten.pushed();
            let _ = self.pump.send(Pumped::Local { envelope: envelope.clone(), after });
        }
        let _ = self.local.send(envelope);
    }

    /// Tells the clients of every process, and those that resume from a sequence, to read the
    /// session again: a `resync` that goes through the outbox. It repairs the one gap the outbox
    /// has (a process killed between a commit and the append of its events): the engine that
    /// takes back a dead process's turn sends it, so a viewer never keeps a view that misses rows.
    pub fn send_resync(&self, envelope: EventEnvelope) {
        self.unwritten.push(envelope.clone());
        let _ = self.pump.send(Pumped::Unwritten);
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
    let urgent = |item: &Pumped| matches!(item, Pumped::Flush(_) | Pumped::Tail(_));
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
    unwritten: Unwritten,
    /// The highest sequence this process appended (by a change or by the pump) so far.
    appended: i64,
    feed: broadcast::Sender<EventEnvelope>,
    /// The newest sequence published to the feed, every lower one published or skipped; `None`
    /// until the first feed subscriber (before that, nothing of other processes is read).
    cursor: Option<i64>,
    pruned_at: Instant,
    /// The last tail read failed (said once, not every 100 ms).
    tail_failing: bool,
}

impl Pump {
    async fn run(mut self, mut queue: mpsc::UnboundedReceiver<Pumped>, me: Arc<str>) {
        let mut tail = tokio::time::interval(TAIL_EVERY);
        tail.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                got = queue.recv() => {
                    let Some(first) = got else { break };
                    let batch = gather(first, &mut queue).await;
                    self.handle(batch, &me).await;
                }
                _ = tail.tick(), if self.cursor.is_some() => self.tail(None).await,
            }
        }
    }

    /// Handles a batch in order: what waits unwritten is appended, and the feed catches up with
    /// the outbox before anything that must follow it (a delta, a flush, the batch's end).
    async fn handle(&mut self, batch: Vec<Pumped>, me: &str) {
        for item in batch {
            match item {
                Pumped::Unwritten => {}
                Pumped::Committed(seq) => self.appended = self.appended.max(seq),
                Pumped::Local { envelope, after } => {
                    // Only what was emitted before it: rows committed since wait for the next
                    // catch-up, so a delta is never published after the answer it streams.
                    self.append_unwritten(me, Some(after)).await;
                    self.tail(Some(self.appended)).await;
                    let _ = self.feed.send(envelope);
                }
                Pumped::Flush(done) => {
                    self.catch_up(me).await;
                    let _ = done.send(());
                }
                Pumped::Tail(done) => {
                    self.catch_up(me).await;
                    self.start_tail().await;
                    let _ = done.send(());
                }
            }
        }
        self.catch_up(me).await;
    }

    /// Appends everything unwritten, then publishes what the outbox gained since the cursor
    /// (ours and everyone else's), in sequence order.
    async fn catch_up(&mut self, me: &str) {
        self.append_unwritten(me, None).await;
        self.tail(None).await;
    }

    /// Appends, in one transaction, the unwritten events (those pushed before `mark`, or all).
    async fn append_unwritten(&mut self, me: &str, mark: Option<u64>) {
        if self.unwritten.is_empty() {
            // Nothing to append (a commit may have carried it): no write lock to take.
            return;
        }
        let unwritten = self.unwritten.clone();
        let take = move || {
            let taken = match mark {
                Some(mark) => unwritten.take_before(mark),
                None => unwritten.take(),
            };
            taken.into_iter().map(|(_, e)| e).collect()
        };
        if self.store.is_read_only() {
            if self.cursor.is_some() {
                for envelope in take() {
                    let _ = self.feed.send(envelope);
                }
            }
            return;
        }
        let (events, stored) = self.store.append_taken_events(me, take).await;
        match stored {
            Ok(seqs) => {
                self.appended = self.appended.max(seqs.into_iter().max().unwrap_or(0));
            }
            Err(e) => {
                // The rows the events describe are committed: a client that reloads rebuilds
                // them. This process's subscribers had the events already.
                tracing::warn!("cannot append events to the outbox: {e}");
                if self.cursor.is_some() {
                    for envelope in events {
                        let _ = self.feed.send(envelope);
                    }
                }
            }
        }
    }

    /// Publishes a row of the outbox to the feed.
    fn publish_row(&mut self, row: OutboxRow) {
        let cursor = self.cursor.get_or_insert(row.seq);
        if row.seq > *cursor + 1 {
            // Rows between were pruned before we read them (this engine fell a day behind).
            let _ = self.feed.send(EventEnvelope::global(Event::Resync {}));
        }
        *cursor = (*cursor).max(row.seq);
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

    /// Publishes what the outbox gained since the cursor, up to `upto` when given; nothing
    /// before the first feed subscriber.
    async fn tail(&mut self, upto: Option<i64>) {
        let Some(mut after) = self.cursor else { return };
        let within = |seq: i64| upto.is_none_or(|upto| seq <= upto);
        loop {
            if !within(after + 1) {
                return;
            }
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
                if !within(row.seq) {
                    return;
                }
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
