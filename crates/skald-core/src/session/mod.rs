//! Sessions: the per-session runner registry, the debug tree and frame origins.

pub mod debug_tree;
pub mod interrupted;
pub mod items;
pub mod origin;
pub mod process;
pub mod registry;
pub mod title;
pub mod window;
