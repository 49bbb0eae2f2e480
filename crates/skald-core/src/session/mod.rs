//! Sessions: RunContext, the per-session runner registry and the debug tree.

pub mod debug_tree;
pub mod registry;
pub mod run_context;
