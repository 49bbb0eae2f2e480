//! `notifications`: facts background work reports to the person, and their delivery to the home
//! session as one `briefing` input of its root inbox (exactly once: the batch is marked in the
//! input's transaction). Also `app_settings`' home source.

use sqlx::{FromRow, SqliteConnection};

use crate::error::StoreError;
use crate::pool::Store;

/// Longest summary kept, in characters (a cut one ends in `…`): a briefing reads facts, not
/// reports.
pub const MAX_SUMMARY_CHARS: usize = 1_000;
/// Most notifications one briefing carries; the rest go in the next.
pub const MAX_BATCH: u32 = 50;
/// The setting that names the home source.
const SOURCE_HOME: &str = "source_home";
/// How long a notification waits for the run that reported it to end, so a job's `notify` and
/// its end are one briefing; after that it goes with the next batch anyway (a long tick).
pub const HOLD_WHILE_RUNNING_SECS: i64 = 60;

/// Undelivered notifications ready to go, oldest first: those of no session, of a session no
/// run holds now, or held long enough. `?1` is the hold's cutoff, `?2` the batch size.
const READY: &str = "SELECT id, origin, event_type, summary, session_id, job_run_id, created_at, \
     briefing_input_id, delivered_session_id, delivered_at FROM notifications \
     WHERE delivered_at IS NULL AND (session_id IS NULL OR created_at <= ?1 \
     OR session_id NOT IN (SELECT session_id FROM session_runners)) ORDER BY id LIMIT ?2";

/// A fact to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNotification {
    pub origin: String,
    pub event_type: String,
    pub summary: String,
    pub session_id: Option<i64>,
    pub job_run_id: Option<i64>,
}

/// A notification's row.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct NotificationRow {
    pub id: i64,
    pub origin: String,
    pub event_type: String,
    pub summary: String,
    pub session_id: Option<i64>,
    pub job_run_id: Option<i64>,
    pub created_at: String,
    pub briefing_input_id: Option<i64>,
    pub delivered_session_id: Option<i64>,
    pub delivered_at: Option<String>,
}

const COLUMNS: &str = "id, origin, event_type, summary, session_id, job_run_id, created_at, \
                       briefing_input_id, delivered_session_id, delivered_at";

/// A batch delivered: the input that carries it and what it carried, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub input_id: i64,
    pub session_id: i64,
    pub notifications: Vec<NotificationRow>,
}

impl Store {
    /// Records a notification on its own (an agent's `notify`); returns its id.
    pub async fn insert_notification(&self, new: &NewNotification) -> Result<i64, StoreError> {
        let mut tx = self.begin_write().await?;
        let id = insert_notification_in(&mut tx, new, &self.now()).await?;
        self.commit(tx).await?;
        Ok(id)
    }

    /// Notifications ready to be delivered (see [`READY`]), oldest first.
    pub async fn undelivered_notifications(&self) -> Result<Vec<NotificationRow>, StoreError> {
        Ok(sqlx::query_as(READY)
            .bind(self.hold_cutoff())
            .bind(MAX_BATCH)
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    fn hold_cutoff(&self) -> String {
        let now = self.clock().now();
        crate::clock::format_ts(now - chrono::Duration::seconds(HOLD_WHILE_RUNNING_SECS))
    }

    /// The newest notifications, delivered or not, at most `limit`, newest first.
    pub async fn recent_notifications(
        &self,
        limit: u32,
    ) -> Result<Vec<NotificationRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM notifications ORDER BY id DESC LIMIT ?");
        Ok(sqlx::query_as(&sql).bind(limit).fetch_all(&mut *self.read().await?).await?)
    }

    /// The notifications a session's runs reported (a tick's, a job run's).
    pub async fn notifications_of_session(
        &self,
        session_id: i64,
    ) -> Result<Vec<NotificationRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM notifications WHERE session_id = ? ORDER BY id");
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_all(&mut *self.read().await?).await?)
    }

    /// Delivers what is ready (up to [`MAX_BATCH`]) to `session_id`: one synthetic
    /// `briefing` input worded by `block` from the batch, the batch marked with it and the
    /// session's continuation queued, in one transaction. `None` when nothing waits (another
    /// process may have delivered it first).
    pub async fn deliver_notifications(
        &self,
        session_id: i64,
        block: impl FnOnce(&[NotificationRow]) -> String,
    ) -> Result<Option<Delivered>, StoreError> {
        let mut tx = self.begin_write().await?;
        let batch: Vec<NotificationRow> = sqlx::query_as(READY)
            .bind(self.hold_cutoff())
            .bind(MAX_BATCH)
            .fetch_all(&mut *tx)
            .await?;
        if batch.is_empty() {
            return Ok(None);
        }
        let now = self.now();
        let input_id: i64 = sqlx::query_scalar(
            "INSERT INTO pending_inputs (session_id, content, is_synthetic, created_at, kind) \
             VALUES (?, ?, 1, ?, 'briefing') RETURNING id",
        )
        .bind(session_id)
        .bind(block(&batch))
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        for n in &batch {
            sqlx::query(
                "UPDATE notifications SET briefing_input_id = ?, delivered_session_id = ?, \
                 delivered_at = ? WHERE id = ?",
            )
            .bind(input_id)
            .bind(session_id)
            .bind(&now)
            .bind(n.id)
            .execute(&mut *tx)
            .await?;
        }
        crate::repo::work::enqueue_in(&mut tx, session_id, &now).await?;
        self.commit(tx).await?;
        let mut notifications = batch;
        for n in &mut notifications {
            n.briefing_input_id = Some(input_id);
            n.delivered_session_id = Some(session_id);
            n.delivered_at = Some(now.clone());
        }
        Ok(Some(Delivered { input_id, session_id, notifications }))
    }

    /// Deletes notifications older than `keep_days` days (0 keeps them all): delivered ones
    /// by when they were delivered (their briefing is in the home session's history), others
    /// by when they were made (news that old is stale; with briefings off this is how long
    /// they are listed). Returns how many were deleted.
    pub async fn prune_notifications(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        keep_days: u32,
    ) -> Result<u64, StoreError> {
        if keep_days == 0 {
            return Ok(0);
        }
        let cutoff = crate::clock::format_ts(now - chrono::Duration::days(i64::from(keep_days)));
        let mut tx = self.begin_write().await?;
        let deleted =
            sqlx::query("DELETE FROM notifications WHERE COALESCE(delivered_at, created_at) < ?")
                .bind(&cutoff)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        self.commit(tx).await?;
        Ok(deleted)
    }

    /// The source whose session receives briefings, if one was set.
    pub async fn home_source(&self) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT value FROM app_settings WHERE key = ?")
            .bind(SOURCE_HOME)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Makes `source` the home source.
    pub async fn set_home_source(&self, source: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO app_settings (key, value, updated_at) VALUES (?, ?, ?) \
             ON CONFLICT(key) DO UPDATE SET value = excluded.value, \
             updated_at = excluded.updated_at",
        )
        .bind(SOURCE_HOME)
        .bind(source)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }
}

/// Records `new` inside the caller's transaction (a job run's end reports with it).
pub(crate) async fn insert_notification_in(
    conn: &mut SqliteConnection,
    new: &NewNotification,
    now: &str,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO notifications (origin, event_type, summary, session_id, job_run_id, \
         created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&new.origin)
    .bind(&new.event_type)
    .bind(capped(&new.summary))
    .bind(new.session_id)
    .bind(new.job_run_id)
    .bind(now)
    .fetch_one(conn)
    .await?)
}

/// `text` trimmed and cut to [`MAX_SUMMARY_CHARS`].
fn capped(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_SUMMARY_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(MAX_SUMMARY_CHARS - 1).collect();
    cut.push('…');
    cut
}
