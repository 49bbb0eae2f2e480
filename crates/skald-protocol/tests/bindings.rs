//! The committed TypeScript bindings must equal a fresh generation.

use std::path::PathBuf;

#[test]
fn committed_bindings_match_the_rust_types() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/backend/bindings.ts");
    skald_testkit::assert_generated_file_is_current(
        &path,
        &skald_protocol::bindings::typescript(),
        "run `UPDATE_BINDINGS=1 cargo test -p skald-protocol --test bindings` and commit the result",
    );
}
