//! The Skald engine. `Engine` is the one API every shell (desktop, CLI, HTTP) calls.

pub mod agents;
pub mod approval;
pub mod async_runtime;
pub mod config;
pub mod context;
pub mod data_dir;
pub mod engine;
pub mod error;
pub mod events;
pub mod jobs;
pub mod launch_env;
pub mod memory;
pub mod regular_file;
pub mod session;
pub mod tools;
pub mod turn;

pub use engine::{Engine, EngineOptions};
pub use error::EngineError;
pub use skald_protocol as protocol;
