//! Where events go: the engine's in-process bus, the outbox pump that gives each event its place
//! in the sequence every process shares (and publishes what other processes appended), and the
//! feed a client subscribes to, resuming from a sequence.

mod bus;
mod feed;

pub use bus::{EventBus, outboxed};
pub use feed::EventFeed;

/// How often an engine with feed subscribers looks for events other processes appended (one
/// primary-key range read of the outbox).
pub const TAIL_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
