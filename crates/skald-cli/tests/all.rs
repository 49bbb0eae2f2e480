//! The `skald` binary, driven as a user would: arguments in, stdout/stderr and exit code out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
