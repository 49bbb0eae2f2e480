//! The Skald engine. `Engine` is the one API every shell (desktop, CLI, HTTP) calls.

pub mod config;
pub mod data_dir;
pub mod engine;
pub mod error;
pub mod session;

pub use engine::{Engine, EngineOptions};
pub use error::EngineError;
pub use skald_protocol as protocol;
