//! Waiting on state in tests: a bound that only catches hangs, never a timing claim.

use std::time::Duration;

/// How long a test waits for something that takes milliseconds before calling it a hang. Far
/// above any real wait on a loaded machine: a test that hits it is broken, not slow.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// Polls `cond` every 10 ms until it holds, for state no event announces (a file a child
/// process writes, a process that exits). Panics with `what` after [`HANG_GUARD`].
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let waited = tokio::time::timeout(HANG_GUARD, async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "still waiting after {HANG_GUARD:?} for {what}");
}
