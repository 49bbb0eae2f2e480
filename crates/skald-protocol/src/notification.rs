//! Notifications: facts background work reports to the person, delivered to the home source's
//! session as one briefing.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One fact reported by background work (a job's run ended, a TIC tick's `notify`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct NotificationInfo {
    #[ts(type = "number")]
    pub id: i64,
    /// Who reported it: `job`, `tic`, `task`.
    pub origin: String,
    /// What happened: `job_run_failed`, `notify`, …
    pub event_type: String,
    /// The fact, in neutral words (the home agent writes the briefing).
    pub summary: String,
    /// The session it is about (the run's, the tick's).
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    pub created_at: String,
    /// The home session it was delivered to, once delivered.
    #[ts(type = "number | null")]
    pub delivered_session_id: Option<i64>,
    pub delivered_at: Option<String>,
}

/// The source whose session receives briefings, and whether it was chosen (`/sethome`) or is
/// the default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HomeSource {
    pub source: String,
    pub chosen: bool,
}
