//! The one integration-test binary of skald-links.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
