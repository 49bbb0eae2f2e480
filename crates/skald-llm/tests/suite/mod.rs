//! Test modules; `support` holds the shared harness.

mod cancel_and_timeouts;
mod failover;
mod quirks;
mod raw_server;
mod streaming;
mod support;
