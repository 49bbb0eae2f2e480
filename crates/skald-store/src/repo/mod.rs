//! Typed repositories, one module per table family.

pub mod approvals;
mod bulk;
pub mod bypasses;
pub mod grants;
pub mod history;
pub mod instances;
pub mod interrupted;
pub mod jobs;
pub mod outbox;
pub mod processes;
pub mod questions;
pub mod replay;
pub mod replay_delta;
pub mod request_log;
pub mod root_inbox;
pub mod runners;
pub mod scratchpad;
pub mod search;
pub mod sessions;
pub mod sources;
pub mod stack;
pub mod summaries;
pub mod tasks;
pub mod tools;
pub mod tree_page;
pub mod turn_ends;
pub mod work;
