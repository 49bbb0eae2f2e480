//! Sessions: the debug tree now; the turn loop, context and resume arrive beside it.

pub mod debug_tree;
