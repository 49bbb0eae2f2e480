//! The operation table: its generated TypeScript, its dispatcher and its declarations.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
