//! The root inbox (`pending_inputs`): every input that reaches a session's root frame between
//! rounds — the user's steers, async task reports, and next hub messages and briefings — as one
//! queue with kinds. One check says whether the root owes an answer, one fold reads every kind
//! into the history exactly once, and each kind says whether `/stop` discards it.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::tasks::{TASK_COLUMNS, TaskRow};

/// What an input is. Stored as its name; a kind this build does not know reads as a steer's
/// opposite for safety: it is folded like any input and never discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A message the user sent while the session was busy (or parked).
    Steer,
    /// An async task's end, for the task's parent.
    TaskReport,
    /// A message another source's hub routed to this session.
    HubMessage,
    /// A briefing delivered to the home session.
    Briefing,
}

impl InputKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Steer => "steer",
            Self::TaskReport => "task_report",
            Self::HubMessage => "hub_message",
            Self::Briefing => "briefing",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Steer, Self::TaskReport, Self::HubMessage, Self::Briefing]
            .into_iter()
            .find(|k| k.as_str() == name)
    }

    /// Whether `/stop` discards it: the user's own steers, yes (they asked to stop); what the
    /// system owes the session (a task's report, a briefing), never.
    pub fn discarded_by_stop(self) -> bool {
        matches!(self, Self::Steer)
    }
}

/// A steer's row (`kind = 'steer'`), as the debug view and the tests read it.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct Steer {
    pub id: i64,
    pub session_id: i64,
    pub content: String,
    pub metadata: Option<String>,
    pub is_synthetic: bool,
    pub created_at: String,
    pub consumed_message_id: Option<i64>,
    pub discarded_at: Option<String>,
}

/// An input that became a history row of the root frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldedInput {
    pub input_id: i64,
    pub kind: InputKind,
    pub message_id: i64,
    pub content: String,
    /// The reporting task, for a task report (delivered in the same transaction).
    pub task: Option<TaskRow>,
}

/// An input about to be folded.
#[derive(FromRow)]
struct OpenInput {
    kind: String,
    content: String,
    metadata: Option<String>,
    is_synthetic: bool,
    task_id: Option<i64>,
}

const STEER_COLUMNS: &str = "id, session_id, content, metadata, is_synthetic, created_at, \
                             consumed_message_id, discarded_at";

/// The predicate of an input still to be read.
const OPEN: &str = "consumed_message_id IS NULL AND discarded_at IS NULL";

impl Store {
    /// Stores a steer (the user's message for a busy or parked session).
    pub async fn add_steer(
        &self,
        session_id: i64,
        content: &str,
        metadata: Option<&str>,
    ) -> Result<i64, StoreError> {
        let insert = sqlx::query_scalar(
            "INSERT INTO pending_inputs (session_id, content, metadata, created_at, kind) \
             VALUES (?, ?, ?, ?, 'steer') RETURNING id",
        )
        .bind(session_id)
        .bind(content)
        .bind(metadata)
        .bind(self.now());
        self.insert_carrying_events(insert).await
    }

    /// The one "owes input" check: whether any input of any kind waits for the root frame.
    pub async fn root_input_waits(&self, session_id: i64) -> Result<bool, StoreError> {
        let sql = format!("SELECT id FROM pending_inputs WHERE session_id = ? AND {OPEN} LIMIT 1");
        let any: Option<i64> = sqlx::query_scalar(&sql)
            .bind(session_id)
            .fetch_optional(&mut *self.read().await?)
            .await?;
        Ok(any.is_some())
    }

    /// Sessions whose root frame has input waiting (a crash between an input and its session's
    /// wake leaves one), oldest input first.
    pub async fn sessions_owing_input(&self) -> Result<Vec<i64>, StoreError> {
        let sql = format!(
            "SELECT session_id FROM pending_inputs WHERE {OPEN} GROUP BY session_id \
             ORDER BY min(id)"
        );
        Ok(sqlx::query_scalar(&sql).fetch_all(&mut *self.read().await?).await?)
    }

    /// Steers neither folded nor discarded, oldest first.
    pub async fn open_steers(&self, session_id: i64) -> Result<Vec<Steer>, StoreError> {
        let sql = format!(
            "SELECT {STEER_COLUMNS} FROM pending_inputs \
             WHERE session_id = ? AND kind = 'steer' AND {OPEN} ORDER BY id"
        );
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_all(&mut *self.read().await?).await?)
    }

    /// Every steer of a session (debug view), oldest first.
    pub async fn all_steers(&self, session_id: i64) -> Result<Vec<Steer>, StoreError> {
        let sql = format!(
            "SELECT {STEER_COLUMNS} FROM pending_inputs WHERE session_id = ? AND kind = 'steer' \
             ORDER BY id"
        );
        Ok(sqlx::query_as(&sql).bind(session_id).fetch_all(&mut *self.read().await?).await?)
    }

    /// Appends every open input as a user row of `stack_id` (a task report as a synthetic one,
    /// also marked delivered on its task) and marks it consumed, in one transaction: an input is
    /// never lost and never doubled.
    pub async fn fold_root_inputs(
        &self,
        session_id: i64,
        stack_id: i64,
    ) -> Result<Vec<FoldedInput>, StoreError> {
        // Almost every round boundary finds nothing to fold: answer that from one read instead
        // of taking the write lock. An input stored after this read is folded at the next one.
        if !self.root_input_waits(session_id).await? {
            return Ok(Vec::new());
        }
        let mut tx = self.begin_write().await?;
        let sql =
            format!("SELECT id FROM pending_inputs WHERE session_id = ? AND {OPEN} ORDER BY id");
        let ids: Vec<i64> = sqlx::query_scalar(&sql).bind(session_id).fetch_all(&mut *tx).await?;
        let mut folded = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(f) = self.fold_one(&mut tx, id, stack_id).await? {
                folded.push(f);
            }
        }
        self.commit(tx).await?;
        Ok(folded)
    }

    /// Folds the open report of task `task_id` into `stack_id` (a test and diagnostics hook);
    /// `None` when it was read already.
    pub async fn fold_task_report(
        &self,
        task_id: i64,
        stack_id: i64,
    ) -> Result<Option<FoldedInput>, StoreError> {
        let mut tx = self.begin_write().await?;
        let sql = format!(
            "SELECT id FROM pending_inputs WHERE task_id = ? AND kind = 'task_report' AND {OPEN} \
             ORDER BY id LIMIT 1"
        );
        let Some(id) =
            sqlx::query_scalar::<_, i64>(&sql).bind(task_id).fetch_optional(&mut *tx).await?
        else {
            return Ok(None);
        };
        let folded = self.fold_one(&mut tx, id, stack_id).await?;
        self.commit(tx).await?;
        Ok(folded)
    }

    async fn fold_one(
        &self,
        tx: &mut crate::pool::WriteTx,
        id: i64,
        stack_id: i64,
    ) -> Result<Option<FoldedInput>, StoreError> {
        let sql = format!(
            "SELECT kind, content, metadata, is_synthetic, task_id FROM pending_inputs \
             WHERE id = ? AND {OPEN}"
        );
        let row: Option<OpenInput> =
            sqlx::query_as(&sql).bind(id).fetch_optional(&mut **tx).await?;
        let Some(OpenInput {
            kind: kind_name,
            content,
            metadata,
            is_synthetic: synthetic,
            task_id,
        }) = row
        else {
            return Ok(None);
        };
        // A kind from a newer build is read like any input, so it is never lost.
        let kind = InputKind::from_name(&kind_name).unwrap_or(InputKind::HubMessage);
        let now = self.now();
        let message_id: i64 = sqlx::query_scalar(
            "INSERT INTO chat_history (session_stack_id, role, content, is_synthetic, metadata, \
             created_at) VALUES (?, 'user', ?, ?, ?, ?) RETURNING id",
        )
        .bind(stack_id)
        .bind(&content)
        .bind(synthetic)
        .bind(&metadata)
        .bind(&now)
        .fetch_one(&mut **tx)
        .await?;
        sqlx::query("UPDATE pending_inputs SET consumed_message_id = ? WHERE id = ?")
            .bind(message_id)
            .bind(id)
            .execute(&mut **tx)
            .await?;
        let task = match task_id {
            Some(task_id) => {
                let sql = format!(
                    "UPDATE async_tasks SET delivered_message_id = ?, delivered_at = ? \
                     WHERE id = ? RETURNING {TASK_COLUMNS}"
                );
                sqlx::query_as::<_, TaskRow>(&sql)
                    .bind(message_id)
                    .bind(&now)
                    .bind(task_id)
                    .fetch_optional(&mut **tx)
                    .await?
            }
            None => None,
        };
        Ok(Some(FoldedInput { input_id: id, kind, message_id, content, task }))
    }

    /// `/stop`: open inputs of the kinds a stop discards (the user's steers) are kept but marked
    /// discarded; task reports and briefings stay for the next turn. Returns their ids.
    pub async fn discard_steers(&self, session_id: i64) -> Result<Vec<i64>, StoreError> {
        let sql = format!(
            "UPDATE pending_inputs SET discarded_at = ? WHERE session_id = ? AND kind IN ({}) \
             AND {OPEN} RETURNING id",
            discarded_kinds()
        );
        let mut ids: Vec<i64> = sqlx::query_scalar(&sql)
            .bind(self.now())
            .bind(session_id)
            .fetch_all(&mut *self.write_conn().await?)
            .await?;
        // RETURNING gives no order guarantee.
        ids.sort_unstable();
        Ok(ids)
    }
}

/// The kinds a `/stop` discards, as an SQL list.
fn discarded_kinds() -> String {
    [InputKind::Steer, InputKind::TaskReport, InputKind::HubMessage, InputKind::Briefing]
        .into_iter()
        .filter(|k| k.discarded_by_stop())
        .map(|k| format!("'{}'", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}
