//! The committed TypeScript bindings must equal a fresh generation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

fn bindings_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/backend/bindings.ts")
}

#[test]
fn committed_bindings_match_the_rust_types() {
    let fresh = skald_protocol::bindings::typescript();
    let path = bindings_path();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/backend/bindings.ts is out of date with crates/skald-protocol; run \
         `UPDATE_BINDINGS=1 cargo test -p skald-protocol --test bindings` and commit the result"
    );
}
