//! Integration tests of the fake provider, driven over real HTTP.

mod binary;
mod control;
mod faults;
mod helpers;
mod keyed;
mod replies;
mod routing;
mod streaming;
mod strict;
mod tap;
mod validation;
