//! Approval rules, parked calls (`approval_requests`) and human decisions (single assignment).

use skald_protocol::{ApprovalKind, RuleAction};
use sqlx::FromRow;

use super::bypasses::NewBypass;
use crate::enums::{Stored, StoredEnum as _};
use crate::error::StoreError;
use crate::pool::Store;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct RuleRow {
    pub id: i64,
    pub group_id: String,
    pub agent_id: Option<String>,
    pub source: Option<String>,
    pub tool_pattern: String,
    pub path_pattern: Option<String>,
    /// An unknown stored action reads as `Deny` (see `enums`).
    #[sqlx(try_from = "Stored<RuleAction>")]
    pub action: RuleAction,
    pub note: Option<String>,
    pub priority: i64,
    pub seed_key: Option<String>,
}

/// A rule to seed once under a stable key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSeed {
    pub key: &'static str,
    pub tool_pattern: &'static str,
    pub path_pattern: Option<&'static str>,
    pub action: RuleAction,
    pub priority: i64,
    pub note: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApprovalRequest {
    pub tool_call_id: i64,
    pub session_id: i64,
    pub stack_id: i64,
    pub kind: ApprovalKind,
    pub tool_name: String,
    pub arguments: String,
    pub path: Option<String>,
    pub command: Option<String>,
    pub workdir: Option<String>,
    pub diff: Option<String>,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ApprovalRequestRow {
    pub tool_call_id: i64,
    pub session_id: i64,
    pub stack_id: i64,
    #[sqlx(try_from = "Stored<ApprovalKind>")]
    pub kind: ApprovalKind,
    pub tool_name: String,
    pub arguments: String,
    pub path: Option<String>,
    pub command: Option<String>,
    pub workdir: Option<String>,
    pub diff: Option<String>,
    pub summary: String,
    pub created_at: String,
}

/// An open approval with the session facts the inbox shows.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct InboxRow {
    pub tool_call_id: i64,
    pub session_id: i64,
    pub stack_id: i64,
    #[sqlx(try_from = "Stored<ApprovalKind>")]
    pub kind: ApprovalKind,
    pub tool_name: String,
    pub arguments: String,
    pub path: Option<String>,
    pub command: Option<String>,
    pub workdir: Option<String>,
    pub diff: Option<String>,
    pub summary: String,
    pub created_at: String,
    pub source: String,
    pub agent_id: String,
    pub context_label: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct DecisionRow {
    pub id: i64,
    pub tool_call_id: i64,
    pub approved: bool,
    pub note: Option<String>,
    pub decided_by: String,
    pub created_at: String,
}

/// A decision to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDecision {
    pub tool_call_id: i64,
    pub approved: bool,
    pub note: Option<String>,
    pub decided_by: String,
    /// Granted with the decision, in the same transaction (only when the decision is new).
    pub bypass: Option<NewBypass>,
}

const REQUEST_COLUMNS: &str = "tool_call_id, session_id, stack_id, kind, tool_name, arguments, \
     path, command, workdir, diff, summary, created_at";
const DECISION_COLUMNS: &str = "id, tool_call_id, approved, note, decided_by, created_at";

impl Store {
    /// Inserts each seed whose key was never seeded before.
    pub async fn seed_rules(&self, seeds: &[RuleSeed]) -> Result<(), StoreError> {
        let now = self.now();
        let mut tx = self.begin_write().await?;
        for s in seeds {
            let fresh = sqlx::query(
                "INSERT OR IGNORE INTO approval_seeds (seed_key, seeded_at) VALUES (?, ?)",
            )
            .bind(s.key)
            .bind(&now)
            .execute(&mut *tx)
            .await?
            .rows_affected()
                > 0;
            if fresh {
                sqlx::query(
                    "INSERT OR IGNORE INTO approval_rules (group_id, tool_pattern, path_pattern, \
                     action, note, priority, seed_key, created_at) \
                     VALUES ('default', ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind(s.tool_pattern)
                .bind(s.path_pattern)
                .bind(Stored(s.action))
                .bind(s.note)
                .bind(s.priority)
                .bind(s.key)
                .bind(&now)
                .execute(&mut *tx)
                .await?;
            }
        }
        self.commit(tx).await?;
        Ok(())
    }

    /// Deletes the rules seeded under `keys` by an earlier build, edited or not: they govern
    /// tools that no longer exist. Their keys stay in `approval_seeds`, so they never come back.
    pub async fn retire_seeds(&self, keys: &[&str]) -> Result<(), StoreError> {
        for key in keys {
            sqlx::query("DELETE FROM approval_rules WHERE seed_key = ?")
                .bind(key)
                .execute(&mut *self.write_conn().await?)
                .await?;
        }
        Ok(())
    }

    /// Rules of a group, in evaluation order.
    pub async fn rules(&self, group_id: &str) -> Result<Vec<RuleRow>, StoreError> {
        Ok(sqlx::query_as::<_, RuleRow>(
            "SELECT id, group_id, agent_id, source, tool_pattern, path_pattern, action, note, \
             priority, seed_key FROM approval_rules WHERE group_id = ? ORDER BY priority, id",
        )
        .bind(group_id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Every rule of every group, in evaluation order per group.
    pub async fn all_rules(&self) -> Result<Vec<RuleRow>, StoreError> {
        Ok(sqlx::query_as::<_, RuleRow>(
            "SELECT id, group_id, agent_id, source, tool_pattern, path_pattern, action, note, \
             priority, seed_key FROM approval_rules ORDER BY group_id, priority, id",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Creates (`id = None`) or replaces a rule. A group may hold only one unfiltered `*` rule:
    /// a second catch-all with another action would silently shadow it, so it is refused.
    pub async fn save_rule(&self, id: Option<i64>, r: &RuleRow) -> Result<RuleRow, StoreError> {
        let mut tx = self.begin_write().await?;
        let group: Option<String> =
            sqlx::query_scalar("SELECT id FROM tool_permission_groups WHERE id = ?")
                .bind(&r.group_id)
                .fetch_optional(&mut *tx)
                .await?;
        if group.is_none() {
            return Err(StoreError::Conflict(format!("no permission group `{}`", r.group_id)));
        }
        let catch_all = r.tool_pattern == "*"
            && r.path_pattern.is_none()
            && r.agent_id.is_none()
            && r.source.is_none();
        if catch_all {
            let other: Option<(i64, Stored<RuleAction>)> = sqlx::query_as(
                "SELECT id, action FROM approval_rules WHERE group_id = ? AND tool_pattern = '*' \
                 AND path_pattern IS NULL AND agent_id IS NULL AND source IS NULL AND id != ?",
            )
            .bind(&r.group_id)
            .bind(id.unwrap_or(-1))
            .fetch_optional(&mut *tx)
            .await?;
            if let Some((other_id, Stored(action))) = other
                && action != r.action
            {
                return Err(StoreError::Conflict(format!(
                    "the group already has a catch-all `*` rule ({}, rule {other_id}); edit it \
                     instead",
                    action.as_stored()
                )));
            }
        }
        let cols = "id, group_id, agent_id, source, tool_pattern, path_pattern, action, note, \
                    priority, seed_key";
        let row = match id {
            Some(id) => sqlx::query_as::<_, RuleRow>(&format!(
                "UPDATE approval_rules SET group_id = ?, agent_id = ?, source = ?, tool_pattern = ?, \
                 path_pattern = ?, action = ?, note = ?, priority = ? WHERE id = ? RETURNING {cols}"
            ))
            .bind(&r.group_id)
            .bind(&r.agent_id)
            .bind(&r.source)
            .bind(&r.tool_pattern)
            .bind(&r.path_pattern)
            .bind(Stored(r.action))
            .bind(&r.note)
            .bind(r.priority)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound { what: "approval rule", id })?,
            None => sqlx::query_as::<_, RuleRow>(&format!(
                "INSERT INTO approval_rules (group_id, agent_id, source, tool_pattern, path_pattern, \
                 action, note, priority, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) \
                 RETURNING {cols}"
            ))
            .bind(&r.group_id)
            .bind(&r.agent_id)
            .bind(&r.source)
            .bind(&r.tool_pattern)
            .bind(&r.path_pattern)
            .bind(Stored(r.action))
            .bind(&r.note)
            .bind(r.priority)
            .bind(self.now())
            .fetch_one(&mut *tx)
            .await?,
        };
        self.commit(tx).await?;
        Ok(row)
    }

    pub async fn delete_rule(&self, id: i64) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM approval_rules WHERE id = ?")
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "approval rule", id });
        }
        Ok(())
    }

    /// Parks a call: the call stays `pending` and the request holds what the human reviews.
    pub async fn create_approval_request(&self, r: &NewApprovalRequest) -> Result<(), StoreError> {
        let insert = sqlx::query(
            "INSERT INTO approval_requests (tool_call_id, session_id, stack_id, kind, tool_name, \
             arguments, path, command, workdir, diff, summary, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT(tool_call_id) DO NOTHING",
        )
        .bind(r.tool_call_id)
        .bind(r.session_id)
        .bind(r.stack_id)
        .bind(Stored(r.kind))
        .bind(&r.tool_name)
        .bind(&r.arguments)
        .bind(&r.path)
        .bind(&r.command)
        .bind(&r.workdir)
        .bind(&r.diff)
        .bind(&r.summary)
        .bind(self.now());
        self.execute_carrying_events(insert).await
    }

    pub async fn approval_request(
        &self,
        tool_call_id: i64,
    ) -> Result<Option<ApprovalRequestRow>, StoreError> {
        let sql = format!("SELECT {REQUEST_COLUMNS} FROM approval_requests WHERE tool_call_id = ?");
        Ok(sqlx::query_as::<_, ApprovalRequestRow>(&sql)
            .bind(tool_call_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Every parked call still waiting for a decision, across all sessions, oldest first.
    pub async fn open_approvals(&self) -> Result<Vec<InboxRow>, StoreError> {
        Ok(sqlx::query_as::<_, InboxRow>(
            "SELECT r.tool_call_id, r.session_id, r.stack_id, r.kind, r.tool_name, r.arguments, \
             r.path, r.command, r.workdir, r.diff, r.summary, r.created_at, s.source, \
             st.agent_id, s.context_label \
             FROM approval_requests r \
             JOIN chat_llm_tools t ON t.id = r.tool_call_id \
             JOIN chat_sessions s ON s.id = r.session_id \
             JOIN chat_sessions_stack st ON st.id = r.stack_id \
             LEFT JOIN approval_decisions d ON d.tool_call_id = r.tool_call_id \
             WHERE t.status = 'pending' AND d.id IS NULL ORDER BY r.created_at, r.tool_call_id",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Records a human decision and the bypass granted with it, in one transaction. The first
    /// decision wins: repeating it is an idempotent success that grants nothing; a different one
    /// is a `Conflict`. A call that is not parked is refused.
    pub async fn decide(&self, d: &NewDecision) -> Result<(DecisionRow, bool), StoreError> {
        let mut tx = self.begin_write().await?;
        let status: Option<String> =
            sqlx::query_scalar("SELECT status FROM chat_llm_tools WHERE id = ?")
                .bind(d.tool_call_id)
                .fetch_optional(&mut *tx)
                .await?;
        let Some(status) = status else {
            return Err(StoreError::NotFound { what: "tool call", id: d.tool_call_id });
        };
        let sql =
            format!("SELECT {DECISION_COLUMNS} FROM approval_decisions WHERE tool_call_id = ?");
        let existing = sqlx::query_as::<_, DecisionRow>(&sql)
            .bind(d.tool_call_id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(prev) = existing {
            if prev.approved == d.approved {
                // A repeat that asks for a bypass the first decision did not grant would be
                // silently dropped: say so instead.
                if d.bypass.is_some() {
                    let granted: Option<i64> = sqlx::query_scalar(
                        "SELECT id FROM approval_bypasses WHERE tool_call_id = ? LIMIT 1",
                    )
                    .bind(d.tool_call_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    if granted.is_none() {
                        return Err(StoreError::Conflict(format!(
                            "tool call {} was already approved by {} without a bypass; ask for \
                             one with the next approval",
                            d.tool_call_id, prev.decided_by
                        )));
                    }
                }
                return Ok((prev, false));
            }
            return Err(StoreError::Conflict(format!(
                "tool call {} was already {} by {}",
                d.tool_call_id,
                if prev.approved { "approved" } else { "rejected" },
                prev.decided_by
            )));
        }
        let requested: Option<i64> =
            sqlx::query_scalar("SELECT tool_call_id FROM approval_requests WHERE tool_call_id = ?")
                .bind(d.tool_call_id)
                .fetch_optional(&mut *tx)
                .await?;
        if status != "pending" || requested.is_none() {
            return Err(StoreError::Conflict(format!(
                "tool call {} is not waiting for a decision (it is {status})",
                d.tool_call_id
            )));
        }
        let row = sqlx::query_as::<_, DecisionRow>(&format!(
            "INSERT INTO approval_decisions (tool_call_id, approved, note, decided_by, created_at) \
             VALUES (?, ?, ?, ?, ?) RETURNING {DECISION_COLUMNS}"
        ))
        .bind(d.tool_call_id)
        .bind(d.approved)
        .bind(&d.note)
        .bind(&d.decided_by)
        .bind(self.now())
        .fetch_one(&mut *tx)
        .await?;
        if let Some(b) = &d.bypass {
            self.insert_bypass(&mut tx, b).await?;
        }
        // The decision and the work it makes are one write: its continuation is never lost.
        let session_id: i64 =
            sqlx::query_scalar("SELECT session_id FROM approval_requests WHERE tool_call_id = ?")
                .bind(d.tool_call_id)
                .fetch_one(&mut *tx)
                .await?;
        crate::repo::work::enqueue_in(&mut tx, session_id, &self.now()).await?;
        self.commit(tx).await?;
        Ok((row, true))
    }

    pub async fn decision(&self, tool_call_id: i64) -> Result<Option<DecisionRow>, StoreError> {
        let sql =
            format!("SELECT {DECISION_COLUMNS} FROM approval_decisions WHERE tool_call_id = ?");
        Ok(sqlx::query_as::<_, DecisionRow>(&sql)
            .bind(tool_call_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Sessions with a decided call that no turn has settled yet (the call is still `pending`).
    pub async fn sessions_with_unsettled_decisions(&self) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT r.session_id FROM approval_requests r \
             JOIN approval_decisions d ON d.tool_call_id = r.tool_call_id \
             JOIN chat_llm_tools t ON t.id = r.tool_call_id WHERE t.status = 'pending' \
             ORDER BY r.session_id",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }
}
