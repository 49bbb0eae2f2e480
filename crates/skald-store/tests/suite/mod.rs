mod open;
mod replay;
mod sessions;
mod steers;
mod tools;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use skald_store::{ManualClock, Store};

/// A fresh database in a temp dir, with a clock the test controls.
pub async fn fresh() -> (tempfile::TempDir, Store, Arc<ManualClock>) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap()));
    let store = Store::open(&dir.path().join("skald.db"), clock.clone()).await.unwrap();
    (dir, store, clock)
}
