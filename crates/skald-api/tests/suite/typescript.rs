//! The committed TypeScript client must equal a fresh generation from the table.

use std::path::PathBuf;

#[test]
fn committed_typescript_client_matches_the_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/backend/api.ts");
    skald_testkit::assert_generated_file_is_current(
        &path,
        &skald_api::typescript::typescript(),
        "run `UPDATE_BINDINGS=1 cargo test -p skald-api --test all typescript` and commit the result",
    );
}

#[test]
fn every_operation_is_a_method_of_the_client_and_an_entry_of_the_map() {
    let ts = skald_api::typescript::typescript();
    for op in skald_api::OPERATIONS {
        let method = format!("  {}(params: {}): Promise<", op.name, op.params);
        assert!(ts.contains(&method), "no method for `{}`", op.name);
        assert!(ts.contains(&format!("  {}: {{ params: {};", op.name, op.params)), "{}", op.name);
        assert!(ts.contains(&format!("export type {} = ", op.params)), "{}", op.params);
    }
}
