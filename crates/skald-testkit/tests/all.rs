//! The one integration-test binary of skald-testkit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
