//! Integration tests of the engine on a real data dir.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
