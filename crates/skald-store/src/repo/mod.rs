//! Typed repositories, one module per table family.

pub mod history;
pub mod sessions;
pub mod sources;
pub mod stack;
pub mod tools;
