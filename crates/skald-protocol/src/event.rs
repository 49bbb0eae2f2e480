//! Events the engine emits after the rows they describe are committed ("persist, then emit").

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An event with the session and source it belongs to (absent for global events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct EventEnvelope {
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    pub source: Option<String>,
    pub event: Event,
}

/// Every observable change. Names and fields follow the client protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A session was created or the session list changed.
    SessionsChanged {},
    /// The engine's configuration was (re)loaded from disk.
    ConfigReloaded { ok: bool, error: Option<String> },
}
