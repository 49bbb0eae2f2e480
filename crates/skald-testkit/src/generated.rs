//! Checks a committed generated file (TypeScript bindings, the API client) against a fresh
//! generation, or rewrites it when `UPDATE_BINDINGS` is set.

use std::path::Path;

/// Panics with `how_to_update` when `path` differs from `fresh`; with `UPDATE_BINDINGS` set in
/// the environment, writes `fresh` to `path` instead.
pub fn assert_generated_file_is_current(path: &Path, fresh: &str, how_to_update: &str) {
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        if let Err(e) = std::fs::write(path, fresh) {
            panic!("cannot write {}: {e}", path.display());
        }
        return;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(committed == fresh, "{} is out of date; {how_to_update}", path.display());
}
