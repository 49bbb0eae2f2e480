//! `EventFeed`: what a client subscription receives — the events of every process in sequence
//! order, starting after the sequence the client last saw (replayed from the outbox), without
//! duplicates or gaps; `resync` only when the outbox no longer holds what it missed.

use std::collections::VecDeque;

use skald_protocol::{Event, EventEnvelope};
use skald_store::Store;
use skald_store::repo::outbox::OutboxRow;
use tokio::sync::broadcast::{self, error::RecvError};

/// Rows read per replay query.
const REPLAY_PAGE: i64 = 500;

/// One client's subscription. Events without a sequence (token deltas, notices about the live
/// stream) are delivered as they come and never replayed.
#[derive(Debug)]
pub struct EventFeed {
    store: Store,
    live: broadcast::Receiver<EventEnvelope>,
    backlog: VecDeque<EventEnvelope>,
    /// The newest sequence delivered; an event at or below it was delivered already.
    position: i64,
    /// Rows after `position` may wait in the outbox (a resume, or the feed fell behind).
    replaying: bool,
}

impl EventFeed {
    /// `live` was subscribed before `head` (the outbox's newest sequence) was read. `since`:
    /// the last sequence the client saw, `None` for a client that starts from now.
    pub(crate) fn new(
        store: Store,
        live: broadcast::Receiver<EventEnvelope>,
        head: i64,
        since: Option<i64>,
    ) -> Self {
        let mut feed =
            Self { store, live, backlog: VecDeque::new(), position: head, replaying: false };
        let resync = match since {
            None => false,
            // A sequence this database never gave out (the client saw another data dir).
            Some(s) if s > head || s < 0 => true,
            Some(s) => {
                feed.position = s;
                feed.replaying = s < head;
                false
            }
        };
        feed.backlog.push_back(at(Event::Subscribed {}, feed.position));
        if resync {
            feed.backlog.push_back(at(Event::Resync {}, feed.position));
        }
        feed
    }

    /// The sequence the feed continues after (what `subscribed` said, until events move it).
    pub fn position(&self) -> i64 {
        self.position
    }

    /// The next event; `None` once the engine is gone. The first one is always `subscribed`.
    pub async fn recv(&mut self) -> Option<EventEnvelope> {
        loop {
            if let Some(envelope) = self.backlog.pop_front() {
                return Some(envelope);
            }
            if self.replaying {
                self.replay_page().await;
                continue;
            }
            match self.live.recv().await {
                Ok(envelope) => {
                    if let Some(seq) = envelope.seq {
                        if seq <= self.position {
                            continue;
                        }
                        self.position = seq;
                    }
                    return Some(envelope);
                }
                // Everything with a sequence that was dropped is in the outbox: read it back.
                Err(RecvError::Lagged(_)) => self.replaying = true,
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// Queues the next page of stored rows after `position`. Cancel-safe (`recv` runs inside a
    /// `select!`): the state changes only after the last read.
    async fn replay_page(&mut self) {
        let read = async {
            let rows = self.store.outbox_after(self.position, REPLAY_PAGE).await?;
            // Pruned before the client came back: what it shows must be read again, and that
            // read covers everything stored until now; the feed goes on from the newest row.
            let pruned = rows.first().is_some_and(|r| r.seq > self.position + 1);
            let head = if pruned { Some(self.store.outbox_head().await?) } else { None };
            Ok::<_, skald_store::StoreError>((rows, head))
        };
        let (rows, head) = match read.await {
            Ok(read) => read,
            Err(e) => {
                tracing::warn!("cannot replay events from the outbox: {e}");
                self.replaying = false;
                self.backlog.push_back(EventEnvelope::global(Event::Resync {}));
                return;
            }
        };
        if let Some(head) = head {
            self.replaying = false;
            self.position = head;
            self.backlog.push_back(at(Event::Resync {}, head));
            return;
        }
        self.replaying = rows.len() as i64 == REPLAY_PAGE;
        for row in rows {
            self.position = row.seq;
            self.backlog.push_back(decode(&row));
        }
    }
}

/// A subscription's own event (`subscribed`, `resync`): its `seq` is where the feed goes on.
fn at(event: Event, position: i64) -> EventEnvelope {
    EventEnvelope { seq: Some(position), ..EventEnvelope::global(event) }
}

fn decode(row: &OutboxRow) -> EventEnvelope {
    row.envelope().unwrap_or_else(|e| {
        tracing::warn!("cannot replay an outbox row: {e}");
        EventEnvelope::global(Event::Resync {})
    })
}
