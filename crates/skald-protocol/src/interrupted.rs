//! Calls a crash cut off while they ran, and what the user says happened to them (decision 3).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ToolStatus;

/// What the user says about a call that was interrupted while it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReconcileChoice {
    /// It had its effects: the model is told not to run it again.
    Ran,
    /// It had none: the model is told it may run it again if still needed.
    DidNotRun,
    /// Run it now (through the approval rules); the model is told the outcome.
    RunAgain,
}

impl ReconcileChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ran => "ran",
            Self::DidNotRun => "did_not_run",
            Self::RunAgain => "run_again",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Ran, Self::DidNotRun, Self::RunAgain].into_iter().find(|c| c.as_str() == s)
    }
}

/// A call that was `running` when its process ended and is not safe to run again by itself: the
/// model got the interrupted result, and the user reconciles it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct InterruptedCall {
    #[ts(type = "number")]
    pub tool_call_id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub tool_name: String,
    /// What the call does, as labelled live (`execute_cmd make install`).
    pub label: String,
    pub flagged_at: String,
    /// `None` until the user says; then set once.
    pub choice: Option<ReconcileChoice>,
    pub decided_by: Option<String>,
    pub decided_at: Option<String>,
    /// `run_again`: how the re-run ended (`None` while it runs) and its result text.
    pub rerun_status: Option<ToolStatus>,
    pub rerun_result: Option<String>,
}
