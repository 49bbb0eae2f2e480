//! How a turn ended: one typed, stored outcome, sent as `turn_ended` and read back with the
//! session, so no client has to guess from message text.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a turn (or one resume of it) ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnEnd {
    /// A final answer was stored as history row `message_id`.
    Final {
        #[ts(type = "number")]
        message_id: i64,
    },
    /// A person stopped it (`/stop`, the stop button, `skald stop`).
    Cancelled {},
    /// The round limit was used up without a final answer.
    Exhausted { rounds: u32 },
    /// Calls wait for a human; a decision continues the turn.
    Parked {
        #[ts(type = "number[]")]
        tool_call_ids: Vec<i64>,
    },
    /// The model could not be reached, or the engine failed; `reason` says what happened.
    Failed { reason: String },
}

impl TurnEnd {
    /// The stored name of the outcome (`turn_ends.outcome`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Final { .. } => "final",
            Self::Cancelled {} => "cancelled",
            Self::Exhausted { .. } => "exhausted",
            Self::Parked { .. } => "parked",
            Self::Failed { .. } => "failed",
        }
    }

    /// Whether the turn ended without an answer for a reason a person did not choose (worth a
    /// notification when nobody watches).
    pub fn is_failure(&self) -> bool {
        matches!(self, Self::Exhausted { .. } | Self::Failed { .. })
    }
}

/// A stored turn end, as the session detail returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct EndedTurn {
    #[ts(type = "number")]
    pub id: i64,
    /// The frame whose turn ended (the root frame until sub-agents run turns of their own).
    #[ts(type = "number")]
    pub stack_id: i64,
    pub outcome: TurnEnd,
    /// The newest history row of the session when the turn ended (where the end goes in the
    /// transcript); `null` when the session had none.
    #[ts(type = "number | null")]
    pub after_message_id: Option<i64>,
    pub ended_at: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_wire_names_the_outcome_as_it_is_stored() {
        let ends = [
            TurnEnd::Final { message_id: 3 },
            TurnEnd::Cancelled {},
            TurnEnd::Exhausted { rounds: 2 },
            TurnEnd::Parked { tool_call_ids: vec![4] },
            TurnEnd::Failed { reason: "boom".into() },
        ];
        for end in ends {
            assert_eq!(serde_json::to_value(&end).unwrap()["kind"], end.as_str());
        }
        let failed = serde_json::to_value(TurnEnd::Failed { reason: "no model".into() }).unwrap();
        assert_eq!(failed, serde_json::json!({ "kind": "failed", "reason": "no model" }));
    }
}
