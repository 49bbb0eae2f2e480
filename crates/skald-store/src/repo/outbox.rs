//! `event_outbox`: the events every process sees, in one sequence. An event that describes a
//! change is appended in that change's transaction (`staged_events`); the rest an engine appends
//! on their own. Engines tail it in sequence order, and it replays the rows after a client's last
//! sequence when it reconnects.
//!
//! The sequence only ever has a gap at its front: rows are only deleted by `prune_outbox`, which
//! deletes a prefix and always keeps the newest rows. So a reader that asks for the rows after
//! `n` and gets a first row above `n + 1` knows the ones between were pruned.

use chrono::{DateTime, Utc};
use skald_protocol::{Event, EventEnvelope, FrameOrigin};
use sqlx::FromRow;

use crate::clock::format_ts;
use crate::error::StoreError;
use crate::pool::Store;

/// How long rows are kept: a client away for longer reloads what it shows instead.
pub const OUTBOX_KEEP_HOURS: i64 = 24;
/// The newest rows are kept whatever their age, so a client of a quiet database still resumes.
pub const OUTBOX_KEEP_NEWEST: i64 = 1_000;
/// No more rows than this are kept, however young: events carry whole tool results, and a busy
/// day must not grow the database without bound. A client further behind reloads.
pub const OUTBOX_MAX_ROWS: i64 = 20_000;

/// One stored event, as read back.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct OutboxRow {
    pub seq: i64,
    /// The engine instance that appended it (and published it to its own subscribers).
    pub instance_id: String,
    pub created_at: String,
    pub session_id: Option<i64>,
    pub source: Option<String>,
    pub frame: Option<String>,
    pub event: String,
}

impl OutboxRow {
    /// The envelope as it went on the wire, with its sequence. A row this build cannot read (an
    /// event kind a newer build added) is an error the caller turns into a reload.
    pub fn envelope(&self) -> Result<EventEnvelope, StoreError> {
        let corrupt = |column: &'static str, e: serde_json::Error| StoreError::Corrupt {
            column,
            value: format!("seq {}: {e}", self.seq),
        };
        let event: Event =
            serde_json::from_str(&self.event).map_err(|e| corrupt("event_outbox.event", e))?;
        let frame: Option<FrameOrigin> = match &self.frame {
            Some(f) => Some(serde_json::from_str(f).map_err(|e| corrupt("event_outbox.frame", e))?),
            None => None,
        };
        Ok(EventEnvelope {
            seq: Some(self.seq),
            session_id: self.session_id,
            source: self.source.clone(),
            frame,
            event,
        })
    }
}

/// Rows per `INSERT` (six bound values each, well under SQLite's limit on bound values).
const INSERT_CHUNK: usize = 128;

const COLUMNS: &str = "seq, instance_id, created_at, session_id, source, frame, event";

impl Store {
    /// Appends `events` as instance `instance_id` in one transaction of their own (events no
    /// change's transaction carried), returning their sequences in order.
    pub async fn append_events(
        &self,
        instance_id: &str,
        events: &[&EventEnvelope],
    ) -> Result<Vec<i64>, StoreError> {
        let mut tx = self.begin_write().await?;
        let seqs = self.insert_events(&mut tx, instance_id, events).await?;
        tx.commit().await?;
        Ok(seqs)
    }

    /// Appends the events `take` hands over, taken while this transaction holds the write lock,
    /// as instance `instance_id`. A writer that takes events from the same queue inside its own
    /// transaction (a change carrying them) is thereby ordered with this one: no event is
    /// stored after one emitted later. Returns the events taken and their sequences once stored.
    pub async fn append_taken_events(
        &self,
        instance_id: &str,
        take: impl FnOnce() -> Vec<EventEnvelope>,
    ) -> (Vec<EventEnvelope>, Result<Vec<i64>, StoreError>) {
        let mut tx = match self.begin_write().await {
            Ok(tx) => tx,
            Err(e) => return (Vec::new(), Err(e)),
        };
        let events = take();
        if events.is_empty() {
            return (events, Ok(Vec::new()));
        }
        let refs: Vec<&EventEnvelope> = events.iter().collect();
        let stored = match self.insert_events(&mut tx, instance_id, &refs).await {
            Ok(seqs) => tx.commit().await.map(|()| seqs).map_err(StoreError::from),
            Err(e) => Err(e),
        };
        (events, stored)
    }

    /// Appends `events` inside `tx`, returning their sequences in order.
    pub(crate) async fn insert_events(
        &self,
        tx: &mut crate::pool::WriteTx,
        instance_id: &str,
        events: &[&EventEnvelope],
    ) -> Result<Vec<i64>, StoreError> {
        let encode = |what: &'static str, e: serde_json::Error| StoreError::Corrupt {
            column: what,
            value: format!("cannot encode an event: {e}"),
        };
        let mut rows = Vec::with_capacity(events.len());
        for envelope in events {
            let frame = match &envelope.frame {
                Some(f) => {
                    Some(serde_json::to_string(f).map_err(|e| encode("event_outbox.frame", e))?)
                }
                None => None,
            };
            let event = serde_json::to_string(&envelope.event)
                .map_err(|e| encode("event_outbox.event", e))?;
            rows.push((envelope.session_id, envelope.source.as_deref(), frame, event));
        }
        let now = self.now();
        let mut seqs = Vec::with_capacity(rows.len());
        // One statement per chunk (each statement is a trip to the connection's thread), the
        // values bound as they are: wrapping the batch in one JSON document for `json_each`
        // encoded every event twice, on the turn's path now that events ride their change. The
        // rows go in in order, one writer at a time, so their sequences ascend with them.
        for chunk in rows.chunks(INSERT_CHUNK) {
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO event_outbox (instance_id, created_at, session_id, source, frame, \
                 event) ",
            );
            insert.push_values(chunk, |mut row, (session_id, source, frame, event)| {
                row.push_bind(instance_id)
                    .push_bind(&now)
                    .push_bind(session_id)
                    .push_bind(source)
                    .push_bind(frame)
                    .push_bind(event);
            });
            insert.push(" RETURNING seq");
            let chunk_seqs: Vec<i64> = insert.build_query_scalar().fetch_all(&mut **tx).await?;
            seqs.extend(chunk_seqs);
        }
        seqs.sort_unstable();
        Ok(seqs)
    }

    /// Up to `limit` rows after sequence `after`, oldest first (one primary-key range read).
    pub async fn outbox_after(&self, after: i64, limit: i64) -> Result<Vec<OutboxRow>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM event_outbox WHERE seq > ? ORDER BY seq LIMIT ?"
        ))
        .bind(after)
        .bind(limit)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// The newest sequence appended so far, 0 before the first (pruning always keeps it).
    pub async fn outbox_head(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM event_outbox")
            .fetch_one(&mut *self.read().await?)
            .await?)
    }

    /// Deletes the oldest rows: those from before `now - OUTBOX_KEEP_HOURS`, except the newest
    /// `OUTBOX_KEEP_NEWEST`, and any beyond the newest `OUTBOX_MAX_ROWS`. Always a prefix of the
    /// sequence (a row appended with an older clock after a younger one waits for the younger
    /// one), so a gap is only ever at the front. Returns how many rows were deleted.
    pub async fn prune_outbox(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        self.prune_outbox_with(now, OUTBOX_KEEP_HOURS, OUTBOX_KEEP_NEWEST, OUTBOX_MAX_ROWS).await
    }

    /// `prune_outbox` with its limits given (tests).
    pub async fn prune_outbox_with(
        &self,
        now: DateTime<Utc>,
        keep_hours: i64,
        keep_newest: i64,
        max_rows: i64,
    ) -> Result<u64, StoreError> {
        let cutoff = format_ts(now - chrono::Duration::hours(keep_hours));
        let mut tx = self.begin_write().await?;
        let head: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM event_outbox")
            .fetch_one(&mut *tx)
            .await?;
        // The first row young enough to keep; everything before it is old (by position).
        let young: Option<i64> =
            sqlx::query_scalar("SELECT MIN(seq) FROM event_outbox WHERE created_at >= ?")
                .bind(&cutoff)
                .fetch_one(&mut *tx)
                .await?;
        let by_age = young.unwrap_or(head + 1);
        let below = by_age.min(head - keep_newest.max(1) + 1).max(head - max_rows.max(1) + 1);
        let deleted = sqlx::query("DELETE FROM event_outbox WHERE seq < ?")
            .bind(below)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(deleted)
    }
}
