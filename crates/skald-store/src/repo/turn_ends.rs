//! `turn_ends`: how each run of a turn ended, stored as typed columns and read back as the
//! protocol's `EndedTurn`.

use skald_protocol::{EndedTurn, TurnEnd};
use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::staged_events::events_staged;

#[derive(Debug, Clone, FromRow)]
struct TurnEndRow {
    id: i64,
    stack_id: i64,
    outcome: String,
    message_id: Option<i64>,
    rounds: Option<i64>,
    tool_call_ids: Option<String>,
    reason: Option<String>,
    after_message_id: Option<i64>,
    ended_at: String,
}

impl TurnEndRow {
    fn decode(self) -> Result<EndedTurn, StoreError> {
        let corrupt = |value: String| StoreError::Corrupt { column: "turn_ends.outcome", value };
        let outcome = match (self.outcome.as_str(), self.message_id, self.rounds) {
            ("final", Some(message_id), _) => TurnEnd::Final { message_id },
            ("cancelled", ..) => TurnEnd::Cancelled {},
            ("exhausted", _, Some(rounds)) => TurnEnd::Exhausted {
                rounds: u32::try_from(rounds).map_err(|_| corrupt(format!("rounds {rounds}")))?,
            },
            ("parked", ..) => {
                let ids = self.tool_call_ids.unwrap_or_default();
                TurnEnd::Parked {
                    tool_call_ids: serde_json::from_str(&ids)
                        .map_err(|_| corrupt(format!("tool_call_ids {ids}")))?,
                }
            }
            ("failed", ..) => TurnEnd::Failed { reason: self.reason.unwrap_or_default() },
            (other, ..) => return Err(corrupt(other.to_string())),
        };
        Ok(EndedTurn {
            id: self.id,
            stack_id: self.stack_id,
            outcome,
            after_message_id: self.after_message_id,
            ended_at: self.ended_at,
        })
    }
}

impl Store {
    /// Records how a run of frame `stack_id`'s turn ended, placed after the session's newest
    /// history row.
    pub async fn record_turn_end(
        &self,
        session_id: i64,
        stack_id: i64,
        end: &TurnEnd,
    ) -> Result<EndedTurn, StoreError> {
        let (mut message_id, mut rounds, mut calls, mut reason) = (None, None, None, None);
        match end {
            TurnEnd::Final { message_id: id } => message_id = Some(*id),
            TurnEnd::Cancelled {} => {}
            TurnEnd::Exhausted { rounds: r } => rounds = Some(i64::from(*r)),
            TurnEnd::Parked { tool_call_ids } => {
                calls = Some(serde_json::Value::from(tool_call_ids.clone()).to_string());
            }
            TurnEnd::Failed { reason: r } => reason = Some(r.clone()),
        }
        let row = sqlx::query_as::<_, TurnEndRow>(
            "INSERT INTO turn_ends (session_id, stack_id, outcome, message_id, rounds, \
             tool_call_ids, reason, after_message_id, ended_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, \
               (SELECT MAX(h.id) FROM chat_history h \
                JOIN chat_sessions_stack s ON s.id = h.session_stack_id WHERE s.session_id = ?), \
               ?) \
             RETURNING id, stack_id, outcome, message_id, rounds, tool_call_ids, reason, \
             after_message_id, ended_at",
        )
        .bind(session_id)
        .bind(stack_id)
        .bind(end.as_str())
        .bind(message_id)
        .bind(rounds)
        .bind(calls)
        .bind(reason)
        .bind(session_id)
        .bind(self.now());
        let row = if events_staged() {
            let mut tx = self.begin_write().await?;
            let row = row.fetch_one(&mut *tx).await?;
            self.commit(tx).await?;
            row
        } else {
            row.fetch_one(&mut *self.read().await?).await?
        };
        row.decode()
    }

    /// How each run of the session's turns ended, oldest first.
    pub async fn turn_ends(&self, session_id: i64) -> Result<Vec<EndedTurn>, StoreError> {
        sqlx::query_as::<_, TurnEndRow>(
            "SELECT id, stack_id, outcome, message_id, rounds, tool_call_ids, reason, \
             after_message_id, ended_at FROM turn_ends WHERE session_id = ? ORDER BY id",
        )
        .bind(session_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .into_iter()
        .map(TurnEndRow::decode)
        .collect()
    }

    /// The turn ends placed between two history rows (inclusive; `None` leaves that side open),
    /// oldest first: what one window of the transcript shows. An end recorded before the session
    /// had any row counts as the oldest.
    pub async fn turn_ends_between(
        &self,
        session_id: i64,
        from_message_id: Option<i64>,
        to_message_id: Option<i64>,
    ) -> Result<Vec<EndedTurn>, StoreError> {
        sqlx::query_as::<_, TurnEndRow>(
            "SELECT id, stack_id, outcome, message_id, rounds, tool_call_ids, reason, \
             after_message_id, ended_at FROM turn_ends WHERE session_id = ? \
             AND (? IS NULL OR after_message_id >= ?) AND (? IS NULL OR after_message_id <= ?) \
             ORDER BY id",
        )
        .bind(session_id)
        .bind(from_message_id)
        .bind(from_message_id)
        .bind(to_message_id)
        .bind(to_message_id)
        .fetch_all(&mut *self.read().await?)
        .await?
        .into_iter()
        .map(TurnEndRow::decode)
        .collect()
    }
}
