//! Integration tests of the store against a real SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
