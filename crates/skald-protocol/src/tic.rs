//! TIC ticks as the TIC page and `skald tic` show them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a tick stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TickState {
    Running,
    Done,
    Failed,
    Cancelled,
    /// Nothing new: no session, no model request.
    Empty,
}

impl TickState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Empty => "empty",
        }
    }

    /// A name this build does not know reads as `failed`.
    pub fn from_name(name: &str) -> Self {
        match name {
            "running" => Self::Running,
            "done" => Self::Done,
            "cancelled" => Self::Cancelled,
            "empty" => Self::Empty,
            _ => Self::Failed,
        }
    }
}

/// One event a tick read, as a server sent it (params as stored: cut when too large).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TicEventInfo {
    #[ts(type = "number")]
    pub id: i64,
    pub server: String,
    pub method: String,
    /// The params as JSON text (a JSON string when they were cut).
    pub params: Option<String>,
    pub received_at: String,
}

/// One tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TicTickInfo {
    #[ts(type = "number")]
    pub id: i64,
    /// The interval it belongs to (RFC 3339 UTC), or when a manual run was asked for.
    pub slot: String,
    /// Started by `skald tic run` / the page, not by the interval.
    pub manual: bool,
    pub state: TickState,
    /// How many events it read.
    #[ts(type = "number")]
    pub events: i64,
    /// The servers those events came from.
    pub servers: Vec<String>,
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub reason: Option<String>,
}

/// A tick with the events it read (`tic_tick`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TicTickDetail {
    pub tick: TicTickInfo,
    pub events: Vec<TicEventInfo>,
}

/// What the TIC page shows above the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TicStatus {
    /// Seconds between ticks (`tic.interval_secs`).
    #[ts(type = "number")]
    pub interval_secs: u64,
    pub batch_size: u32,
    pub active_hours: Option<String>,
    /// Events stored and not read by a tick yet.
    #[ts(type = "number")]
    pub pending_events: i64,
    /// Servers marked `keep_connected` (only their events are stored).
    pub kept_connected: Vec<String>,
    /// Newest first (empty ticks left out).
    pub ticks: Vec<TicTickInfo>,
}
