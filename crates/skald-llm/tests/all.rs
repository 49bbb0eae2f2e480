//! Integration tests of the LLM client against a real loopback HTTP server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
