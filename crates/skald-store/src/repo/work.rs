//! `work_items`: the engine's durable work queue. Enqueueing merges into a waiting item of the
//! same session and kind; a claim is one statement no two processes can both win; an item whose
//! claimant died goes back to the queue.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::instances::InstanceBeat;
use crate::repo::runners::Liveness;

/// What a unit of work does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkKind {
    /// Continue a session: settle decided calls, read its root inbox, answer.
    Continue,
    /// Run (or continue) an async task's session: bounded by the task slots, reports when done.
    Task,
}

impl WorkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::Task => "task",
        }
    }

    fn from_name(name: &str) -> Self {
        if name == "task" { Self::Task } else { Self::Continue }
    }
}

/// A claimed item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItem {
    pub id: i64,
    pub session_id: i64,
    pub kind: WorkKind,
    /// How many times it was claimed (1 the first time).
    pub attempts: i64,
}

/// One item as it was recorded.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct WorkRecord {
    pub kind: String,
    pub state: String,
    pub attempts: i64,
    pub claimed_by: Option<String>,
    pub outcome: Option<String>,
}

#[derive(FromRow)]
struct ItemRow {
    id: i64,
    session_id: i64,
    kind: String,
    attempts: i64,
}

impl From<ItemRow> for WorkItem {
    fn from(r: ItemRow) -> Self {
        Self {
            id: r.id,
            session_id: r.session_id,
            kind: WorkKind::from_name(&r.kind),
            attempts: r.attempts,
        }
    }
}

/// The kind a session's continuation is: an unfinished async task's session runs as a task.
const KIND_OF_SESSION: &str = "CASE WHEN EXISTS (SELECT 1 FROM async_tasks \
     WHERE child_session_id = ?1 AND status IN ('queued', 'running')) THEN 'task' ELSE 'continue' END";

/// Sessions another live instance waits on (`?1` is the caller, `?4` the stale cutoff): their
/// work is that instance's while its heartbeat is fresh.
const WAITED_ELSEWHERE: &str = "SELECT w.session_id FROM work_waiters w \
     JOIN engine_instances i ON i.id = w.instance_id WHERE w.instance_id <> ?1 \
     AND i.stopped_at IS NULL AND i.heartbeat_at > ?4";

/// Done items are kept this long for diagnostics, then pruned.
const KEEP_DONE_DAYS: i64 = 7;

impl Store {
    /// Queues the continuation of `session_id` (a task's session as `task`); merges into one
    /// already waiting. Returns whether a new item was queued.
    pub async fn enqueue_continue(&self, session_id: i64) -> Result<bool, StoreError> {
        let mut conn = self.write_conn().await?;
        enqueue_in(&mut conn, session_id, &self.now()).await
    }

    /// Queues the continuation of `session_id` found with a decision or an answer nobody read
    /// (at an engine's start) — only while one still waits and no work of the session is queued
    /// or claimed. Checked in the insert itself: two engines starting on one database read the
    /// same leftovers, and the first one's item may already be claimed, or done, by then.
    pub async fn enqueue_leftover_continue(&self, session_id: i64) -> Result<bool, StoreError> {
        let sql = format!(
            "INSERT INTO work_items (session_id, kind, created_at) \
             SELECT ?1, {KIND_OF_SESSION}, ?2 \
             WHERE NOT EXISTS (SELECT 1 FROM work_items WHERE session_id = ?1 \
             AND state IN ('queued', 'claimed')) \
             AND (EXISTS (SELECT 1 FROM approval_requests r \
             JOIN approval_decisions d ON d.tool_call_id = r.tool_call_id \
             JOIN chat_llm_tools t ON t.id = r.tool_call_id \
             WHERE r.session_id = ?1 AND t.status = 'pending') \
             OR EXISTS (SELECT 1 FROM clarification_questions q \
             JOIN clarification_answers a ON a.tool_call_id = q.tool_call_id \
             JOIN chat_llm_tools t ON t.id = q.tool_call_id \
             WHERE q.session_id = ?1 AND t.status = 'pending')) \
             ON CONFLICT(session_id, kind) WHERE state = 'queued' DO NOTHING"
        );
        let done = sqlx::query(&sql)
            .bind(session_id)
            .bind(self.now())
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Queues an async task's run.
    pub async fn enqueue_task_run(&self, child_session_id: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO work_items (session_id, kind, created_at) VALUES (?, 'task', ?) \
             ON CONFLICT(session_id, kind) WHERE state = 'queued' DO NOTHING",
        )
        .bind(child_session_id)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Queues the run of a task-like session (an async task, a job's run, a tick) that a sweep
    /// found unfinished, unless the session has an item queued or claimed already: one just
    /// started by this engine (a sweep at start runs beside the first claims) must not run a
    /// second time after it ends. A claimant that died is the reclaim pass's to handle.
    pub async fn requeue_task_run(&self, session_id: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO work_items (session_id, kind, created_at) SELECT ?1, 'task', ?2 \
             WHERE NOT EXISTS (SELECT 1 FROM work_items WHERE session_id = ?1 \
             AND state IN ('queued', 'claimed')) \
             ON CONFLICT(session_id, kind) WHERE state = 'queued' DO NOTHING",
        )
        .bind(session_id)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Claims the oldest waiting item of `kind` for instance `me` — of `sessions` only, when
    /// given — whose session nobody runs (no runner row). One statement: two processes never
    /// claim the same item.
    pub async fn claim_work(
        &self,
        me: &str,
        kind: WorkKind,
        sessions: Option<&[i64]>,
    ) -> Result<Option<WorkItem>, StoreError> {
        let only = match sessions {
            Some([]) => return Ok(None),
            Some(ids) => format!(
                " AND session_id IN ({})",
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
            None => String::new(),
        };
        let sql = format!(
            "UPDATE work_items SET state = 'claimed', claimed_by = ?1, claimed_at = ?2, \
             attempts = attempts + 1 WHERE id = (SELECT id FROM work_items WHERE state = 'queued' \
             AND kind = ?3{only} AND session_id NOT IN (SELECT session_id FROM session_runners) \
             AND session_id NOT IN ({WAITED_ELSEWHERE}) ORDER BY id LIMIT 1) \
             RETURNING id, session_id, kind, attempts"
        );
        let row: Option<ItemRow> = sqlx::query_as(&sql)
            .bind(me)
            .bind(self.now())
            .bind(kind.as_str())
            .bind(self.stale_before())
            .fetch_optional(&mut *self.write_conn().await?)
            .await?;
        Ok(row.map(WorkItem::from))
    }

    /// Records how a claimed item ended.
    pub async fn finish_work(&self, id: i64, outcome: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE work_items SET state = 'done', finished_at = ?, outcome = ? WHERE id = ?",
        )
        .bind(self.now())
        .bind(outcome)
        .bind(id)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Gives a claimed item back (its session turned out busy): queued again, or merged into
    /// the item of the same session and kind that was queued meanwhile.
    pub async fn unclaim_work(&self, id: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE work_items SET claimed_by = NULL, claimed_at = NULL, \
             state = CASE WHEN EXISTS (SELECT 1 FROM work_items t WHERE t.state = 'queued' \
                 AND t.session_id = work_items.session_id AND t.kind = work_items.kind) \
                 THEN 'done' ELSE 'queued' END, \
             outcome = CASE WHEN EXISTS (SELECT 1 FROM work_items t WHERE t.state = 'queued' \
                 AND t.session_id = work_items.session_id AND t.kind = work_items.kind) \
                 THEN 'merged' ELSE NULL END \
             WHERE id = ? AND state = 'claimed'",
        )
        .bind(id)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Items claimed by instances that are gone (not `me`) go back to the queue. Returns how
    /// many.
    pub async fn reclaim_work(
        &self,
        me: &str,
        is_alive: Liveness<'_>,
    ) -> Result<usize, StoreError> {
        let rows: Vec<ClaimRow> = sqlx::query_as(
            "SELECT w.id, w.claimed_by, i.host, i.pid, i.heartbeat_at, i.stopped_at \
             FROM work_items w LEFT JOIN engine_instances i ON i.id = w.claimed_by \
             WHERE w.state = 'claimed' AND w.claimed_by <> ?",
        )
        .bind(me)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let mut reclaimed = 0;
        for row in rows {
            let id = row.id;
            if !row.alive(is_alive) {
                self.unclaim_work(id).await?;
                reclaimed += 1;
            }
        }
        Ok(reclaimed)
    }

    /// Whether an item of `kind` waits (for `sessions` only, when given): a read the worker
    /// polls with, so a claim's write is taken only when there is work.
    pub async fn work_waits(
        &self,
        me: &str,
        kind: WorkKind,
        sessions: Option<&[i64]>,
    ) -> Result<bool, StoreError> {
        let only = match sessions {
            Some([]) => return Ok(false),
            Some(ids) => format!(
                " AND session_id IN ({})",
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
            None => String::new(),
        };
        let sql = format!(
            "SELECT id FROM work_items WHERE state = 'queued' AND kind = ?3{only} \
             AND session_id NOT IN (SELECT session_id FROM session_runners) \
             AND session_id NOT IN ({WAITED_ELSEWHERE}) LIMIT 1"
        );
        let any: Option<i64> = sqlx::query_scalar(&sql)
            .bind(me)
            .bind("")
            .bind(kind.as_str())
            .bind(self.stale_before())
            .fetch_optional(&mut *self.read().await?)
            .await?;
        Ok(any.is_some())
    }

    /// Marks the session's waiting continuation done: a run that holds the session settles and
    /// reads everything it would have (`absorbed`).
    pub async fn absorb_continue(&self, session_id: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE work_items SET state = 'done', finished_at = ?, outcome = 'absorbed' \
             WHERE session_id = ? AND kind = 'continue' AND state = 'queued'",
        )
        .bind(self.now())
        .bind(session_id)
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Instance `me` waits on the session: it continues its work itself while it lives.
    pub async fn set_waiter(&self, session_id: i64, me: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO work_waiters (session_id, instance_id, since) VALUES (?, ?, ?) \
             ON CONFLICT(session_id) DO UPDATE SET instance_id = excluded.instance_id, \
             since = excluded.since",
        )
        .bind(session_id)
        .bind(me)
        .bind(self.now())
        .execute(&mut *self.write_conn().await?)
        .await?;
        Ok(())
    }

    /// Instance `me` no longer waits on the session.
    pub async fn clear_waiter(&self, session_id: i64, me: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM work_waiters WHERE session_id = ? AND instance_id = ?")
            .bind(session_id)
            .bind(me)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(())
    }

    /// Whether someone continues the session's work by itself: a live instance waits on it,
    /// or a live instance runs the background.
    pub async fn continued_by_someone(
        &self,
        session_id: i64,
        is_alive: Liveness<'_>,
    ) -> Result<bool, StoreError> {
        let rows: Vec<ClaimRow> = sqlx::query_as(
            "SELECT 0 AS id, i.id AS claimed_by, i.host, i.pid, i.heartbeat_at, i.stopped_at \
             FROM engine_instances i WHERE i.background = 1 OR i.id IN \
             (SELECT instance_id FROM work_waiters WHERE session_id = ?)",
        )
        .bind(session_id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows.into_iter().any(|r| r.alive(is_alive)))
    }

    /// Waiters whose instance is gone are dropped: their sessions' work is anyone's again.
    pub async fn prune_waiters(&self, is_alive: Liveness<'_>) -> Result<(), StoreError> {
        let rows: Vec<ClaimRow> = sqlx::query_as(
            "SELECT w.session_id AS id, i.id AS claimed_by, i.host, i.pid, i.heartbeat_at, \
             i.stopped_at FROM work_waiters w LEFT JOIN engine_instances i ON i.id = w.instance_id",
        )
        .fetch_all(&mut *self.read().await?)
        .await?;
        for row in rows {
            let session_id = row.id;
            if !row.alive(is_alive) {
                sqlx::query("DELETE FROM work_waiters WHERE session_id = ?")
                    .bind(session_id)
                    .execute(&mut *self.write_conn().await?)
                    .await?;
            }
        }
        Ok(())
    }

    fn stale_before(&self) -> String {
        crate::clock::format_ts(
            self.clock().now()
                - chrono::Duration::seconds(crate::repo::instances::INSTANCE_STALE_SECS),
        )
    }

    /// A session's items, oldest first (diagnostics and tests): kind, state, claims and outcome.
    pub async fn work_history(&self, session_id: i64) -> Result<Vec<WorkRecord>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT kind, state, attempts, claimed_by, outcome FROM work_items \
             WHERE session_id = ? ORDER BY id",
        )
        .bind(session_id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Deletes done items older than a week.
    pub async fn prune_work(&self) -> Result<u64, StoreError> {
        let old =
            crate::clock::format_ts(self.clock().now() - chrono::Duration::days(KEEP_DONE_DAYS));
        let done = sqlx::query("DELETE FROM work_items WHERE state = 'done' AND finished_at < ?")
            .bind(old)
            .execute(&mut *self.write_conn().await?)
            .await?;
        Ok(done.rows_affected())
    }
}

/// A row and the instance it names (a claimant, a waiter), as liveness judges it.
#[derive(FromRow)]
struct ClaimRow {
    id: i64,
    claimed_by: Option<String>,
    host: Option<String>,
    pid: Option<i64>,
    heartbeat_at: Option<String>,
    stopped_at: Option<String>,
}

impl ClaimRow {
    /// An instance that never registered counts as dead.
    fn alive(self, is_alive: Liveness<'_>) -> bool {
        match (self.host, self.pid, self.heartbeat_at) {
            (Some(host), Some(pid), Some(heartbeat_at)) => is_alive(&InstanceBeat {
                id: self.claimed_by.unwrap_or_default(),
                host,
                pid,
                heartbeat_at,
                stopped_at: self.stopped_at,
            }),
            _ => false,
        }
    }
}

/// Queues a session's continuation on `conn` (inside the caller's transaction, so a decision,
/// an answer or a report and the work it causes are written together).
pub(crate) async fn enqueue_in(
    conn: &mut sqlx::SqliteConnection,
    session_id: i64,
    now: &str,
) -> Result<bool, StoreError> {
    let sql = format!(
        "INSERT INTO work_items (session_id, kind, created_at) VALUES (?1, {KIND_OF_SESSION}, ?2) \
         ON CONFLICT(session_id, kind) WHERE state = 'queued' DO NOTHING"
    );
    let done = sqlx::query(&sql).bind(session_id).bind(now).execute(conn).await?;
    Ok(done.rows_affected() > 0)
}
