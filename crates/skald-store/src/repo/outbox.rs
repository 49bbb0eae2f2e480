//! `event_outbox`: the events every process sees, in one sequence. An engine appends the events
//! it emits (right after the change they describe committed), tails what other instances
//! appended, and replays the rows after a client's last sequence when it reconnects.
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

/// What `append_events` did: the sequence of each appended event, in order, and the rows other
/// instances appended after `others_after` (all below the first of ours), in sequence order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Appended {
    pub seqs: Vec<i64>,
    pub others: Vec<OutboxRow>,
}

const COLUMNS: &str = "seq, instance_id, created_at, session_id, source, frame, event";

impl Store {
    /// Appends `events` as instance `instance_id` in one transaction. With `others_after`, the
    /// same transaction also reads what other instances appended after that sequence: holding
    /// the write lock, every row numbered below ours is committed and visible, so a caller that
    /// publishes those first and then its own publishes in sequence order without a gap.
    pub async fn append_events(
        &self,
        instance_id: &str,
        events: &[&EventEnvelope],
        others_after: Option<i64>,
    ) -> Result<Appended, StoreError> {
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
            rows.push(serde_json::json!([envelope.session_id, envelope.source, frame, event]));
        }
        let rows = serde_json::Value::Array(rows).to_string();
        let now = self.now();
        let mut tx = self.begin_write().await?;
        // One statement for the whole batch (each statement is a trip to the connection's
        // thread). The rows go in in the batch's order, one writer at a time, so their
        // sequences are consecutive and ascending: sorted, they are the events' in order.
        let mut seqs: Vec<i64> = sqlx::query_scalar(
            "INSERT INTO event_outbox (instance_id, created_at, session_id, source, frame, event) \
             SELECT ?1, ?2, json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
                    json_extract(value, '$[2]'), json_extract(value, '$[3]') \
             FROM json_each(?3) ORDER BY key RETURNING seq",
        )
        .bind(instance_id)
        .bind(&now)
        .bind(&rows)
        .fetch_all(&mut *tx)
        .await?;
        seqs.sort_unstable();
        let mut appended = Appended { seqs, others: Vec::new() };
        if let (Some(after), Some(&first)) = (others_after, appended.seqs.first()) {
            appended.others = sqlx::query_as(&format!(
                "SELECT {COLUMNS} FROM event_outbox WHERE seq > ? AND seq < ? AND instance_id <> ? \
                 ORDER BY seq"
            ))
            .bind(after)
            .bind(first)
            .bind(instance_id)
            .fetch_all(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(appended)
    }

    /// Up to `limit` rows after sequence `after`, oldest first (one primary-key range read).
    pub async fn outbox_after(&self, after: i64, limit: i64) -> Result<Vec<OutboxRow>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM event_outbox WHERE seq > ? ORDER BY seq LIMIT ?"
        ))
        .bind(after)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }

    /// The newest sequence appended so far, 0 before the first (pruning always keeps it).
    pub async fn outbox_head(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM event_outbox")
            .fetch_one(self.pool())
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
