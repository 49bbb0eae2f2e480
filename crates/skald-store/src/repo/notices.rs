//! `home_notices`: what the home conversation shows about background work that ended (a job's
//! run, with the first lines of its answer or why it did not finish), until it is dismissed.

use skald_protocol::{HomeNotice, JobRunState};
use sqlx::{FromRow, SqliteConnection};

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::notifications::{NewNotification, insert_notification_in};

/// How many lines of a run's answer a notice keeps.
const SUMMARY_LINES: usize = 3;
/// ... and how many characters at most.
const SUMMARY_CHARS: usize = 400;

/// A notice's row.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct NoticeRow {
    pub id: i64,
    pub job_run_id: i64,
    pub job_id: i64,
    pub job_title: String,
    pub state: String,
    pub summary: String,
    pub session_id: Option<i64>,
    pub created_at: String,
}

impl NoticeRow {
    pub fn info(&self) -> HomeNotice {
        HomeNotice {
            id: self.id,
            job_id: self.job_id,
            job_run_id: self.job_run_id,
            job_title: self.job_title.clone(),
            // A state this build does not know reads as failed, as a run's does.
            state: JobRunState::from_name(&self.state).unwrap_or(JobRunState::Failed),
            summary: self.summary.clone(),
            session_id: self.session_id,
            created_at: self.created_at.clone(),
        }
    }
}

const COLUMNS: &str = "id, job_run_id, job_id, job_title, state, summary, session_id, created_at";

impl Store {
    /// Notices not dismissed, newest first, at most `limit`.
    pub async fn open_notices(&self, limit: u32) -> Result<Vec<NoticeRow>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM home_notices WHERE dismissed_at IS NULL ORDER BY id DESC LIMIT ?"
        );
        Ok(sqlx::query_as(&sql).bind(limit).fetch_all(&mut *self.read().await?).await?)
    }

    /// Dismisses notice `id`; `false` when it was dismissed already. `NotFound` when none has it.
    pub async fn dismiss_notice(&self, id: i64) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let found: Option<Option<String>> =
            sqlx::query_scalar("SELECT dismissed_at FROM home_notices WHERE id = ?")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
        match found {
            None => Err(StoreError::NotFound { what: "notice", id }),
            Some(Some(_)) => Ok(false),
            Some(None) => {
                sqlx::query("UPDATE home_notices SET dismissed_at = ? WHERE id = ?")
                    .bind(self.now())
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                self.commit(tx).await?;
                Ok(true)
            }
        }
    }
}

/// Writes the notice of a run that just ended as `state` (inside the transaction that ended it):
/// a done run's summary is the start of its last answer, any other's the reason.
pub(crate) async fn insert_run_notice(
    conn: &mut SqliteConnection,
    run_id: i64,
    job_id: i64,
    session_id: Option<i64>,
    state: JobRunState,
    reason: Option<&str>,
    now: &str,
) -> Result<NoticeRow, StoreError> {
    let title: String = sqlx::query_scalar("SELECT title FROM scheduled_jobs WHERE id = ?")
        .bind(job_id)
        .fetch_one(&mut *conn)
        .await?;
    let answer: Option<String> = match (state, session_id) {
        (JobRunState::Done, Some(session_id)) => {
            sqlx::query_scalar(
                "SELECT h.content FROM chat_history h \
                 JOIN chat_sessions_stack s ON s.id = h.session_stack_id \
                 WHERE s.session_id = ? AND s.depth = 0 AND h.role = 'assistant' \
                 AND h.status = 'ok' AND TRIM(h.content) != '' ORDER BY h.id DESC LIMIT 1",
            )
            .bind(session_id)
            .fetch_optional(&mut *conn)
            .await?
        }
        _ => None,
    };
    let text = answer.as_deref().or(reason).unwrap_or("");
    let summary = match excerpt(text) {
        s if s.is_empty() && state == JobRunState::Done => "(no answer)".to_string(),
        s if s.is_empty() => "(no reason recorded)".to_string(),
        s => s,
    };
    let sql = format!(
        "INSERT INTO home_notices (job_run_id, job_id, job_title, state, summary, session_id, \
         created_at) VALUES (?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT(job_run_id) DO UPDATE SET state = excluded.state \
         RETURNING {COLUMNS}"
    );
    let notice: NoticeRow = sqlx::query_as(&sql)
        .bind(run_id)
        .bind(job_id)
        .bind(&title)
        .bind(state.as_str())
        .bind(&summary)
        .bind(session_id)
        .bind(now)
        .fetch_one(&mut *conn)
        .await?;
    // The run's end is reported at home too, once (a briefing reads it with the rest).
    let reported: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM notifications WHERE job_run_id = ? \
             AND event_type != 'job_run_waiting')",
    )
    .bind(run_id)
    .fetch_one(&mut *conn)
    .await?;
    if !reported {
        let fact = NewNotification {
            origin: "job".into(),
            event_type: format!("job_run_{}", state.as_str()),
            summary: format!("The scheduled job {:?} {}: {summary}", title, ended_as(state)),
            session_id,
            job_run_id: Some(run_id),
        };
        insert_notification_in(&mut *conn, &fact, now).await?;
    }
    Ok(notice)
}

/// How a run's end reads in a notification.
fn ended_as(state: JobRunState) -> &'static str {
    match state {
        JobRunState::Done => "finished",
        JobRunState::Failed => "failed",
        JobRunState::Expired => "expired waiting for a person",
        JobRunState::Killed => "was stopped",
        JobRunState::Skipped => "was skipped (its previous run was still going)",
        JobRunState::Missed => "was missed (Skald was not running)",
        JobRunState::Queued | JobRunState::Running | JobRunState::Waiting => "ended",
    }
}

/// The first non-blank lines of `text`, trimmed, at most `SUMMARY_LINES` lines and
/// `SUMMARY_CHARS` characters (cut text ends in `…`).
pub fn excerpt(text: &str) -> String {
    let lines: Vec<&str> =
        text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    let mut out = lines.iter().take(SUMMARY_LINES).copied().collect::<Vec<_>>().join("\n");
    let mut cut = lines.len() > SUMMARY_LINES;
    if out.chars().count() > SUMMARY_CHARS {
        out = out.chars().take(SUMMARY_CHARS - 1).collect();
        cut = true;
    }
    if cut {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn an_excerpt_keeps_the_first_lines_and_says_when_it_cut() {
        assert_eq!(excerpt("\n\nfirst\n  \nsecond\n"), "first\nsecond");
        assert_eq!(excerpt("a\nb\nc\nd"), "a\nb\nc…");
        let long = "x".repeat(1000);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), 400);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("  \n"), "");
    }
}
