//! Sessions: the per-session runner registry and the debug tree.

pub mod debug_tree;
pub mod process;
pub mod registry;
