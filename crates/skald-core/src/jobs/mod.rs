//! Scheduled jobs: their schedules (`schedule`) and the engine's scheduler (`engine/jobs.rs`).

pub mod schedule;

pub use schedule::{Schedule, ScheduleError, machine_timezone};
