//! `ContextCache`: each frame's built history kept between rounds, per engine, within a memory
//! budget (least recently used frames go first).
//!
//! An entry is only ever a starting point: every build reads from the database what changed
//! since the entry was made (`Store::frame_delta`, one statement) and rebuilds from every row
//! when the change cannot be followed (a compaction, different history settings, a failed prompt,
//! a call added late). So another process writing to the same session is seen at the next build,
//! and a stale entry never reaches a request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use skald_store::repo::summaries::SummaryRow;

use super::incremental::IncrementalHistory;

/// Default budget: a 10,000-message frame holds ~5 MB.
pub const DEFAULT_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// One frame's cached history and the summary it was built after.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub history: IncrementalHistory,
    pub summary: Option<SummaryRow>,
}

impl Entry {
    fn memory(&self) -> usize {
        self.history.memory() + self.summary.as_ref().map_or(0, |s| s.content.len())
    }
}

/// How builds went since the cache was made (for tests and logs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Builds that extended a cached history with what changed.
    pub extended: u64,
    /// Builds that read every row (no entry, or one that could not be extended).
    pub rebuilt: u64,
    /// Entries dropped to stay within the budget.
    pub evicted: u64,
}

/// Per-engine cache of built histories, keyed by frame. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct ContextCache {
    inner: Arc<Mutex<Lru>>,
}

#[derive(Debug)]
struct Lru {
    budget: usize,
    bytes: usize,
    clock: u64,
    entries: HashMap<i64, Slot>,
    stats: CacheStats,
}

#[derive(Debug)]
struct Slot {
    entry: Entry,
    bytes: usize,
    used: u64,
}

impl Default for ContextCache {
    fn default() -> Self {
        Self::with_budget(DEFAULT_BUDGET_BYTES)
    }
}

impl ContextCache {
    /// A cache holding at most about `budget` bytes of built history.
    pub fn with_budget(budget: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Lru {
                budget,
                bytes: 0,
                clock: 0,
                entries: HashMap::new(),
                stats: CacheStats::default(),
            })),
        }
    }

    pub fn stats(&self) -> CacheStats {
        self.lock().stats
    }

    /// Bytes held now (approximate).
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Drops a frame's entry; its next build reads every row.
    pub fn forget(&self, stack_id: i64) {
        let mut lru = self.lock();
        if let Some(slot) = lru.entries.remove(&stack_id) {
            lru.bytes -= slot.bytes;
        }
    }

    /// Takes a frame's entry out while a build extends it: a concurrent build of the same frame
    /// finds none and rebuilds, and whichever finishes last is kept (both are valid).
    pub(super) fn take(&self, stack_id: i64) -> Option<Entry> {
        let mut lru = self.lock();
        let slot = lru.entries.remove(&stack_id)?;
        lru.bytes -= slot.bytes;
        Some(slot.entry)
    }

    pub(super) fn count(&self, extended: bool) {
        let mut lru = self.lock();
        if extended {
            lru.stats.extended += 1;
        } else {
            lru.stats.rebuilt += 1;
        }
    }

    /// Keeps `entry` for `stack_id`, then drops the least recently used entries over budget.
    pub(super) fn put(&self, stack_id: i64, entry: Entry) {
        let bytes = entry.memory();
        let mut lru = self.lock();
        if bytes > lru.budget {
            return;
        }
        lru.clock += 1;
        let used = lru.clock;
        if let Some(old) = lru.entries.insert(stack_id, Slot { entry, bytes, used }) {
            lru.bytes -= old.bytes;
        }
        lru.bytes += bytes;
        while lru.bytes > lru.budget {
            let Some(oldest) = lru.entries.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| *k)
            else {
                break;
            };
            if let Some(slot) = lru.entries.remove(&oldest) {
                lru.bytes -= slot.bytes;
                lru.stats.evicted += 1;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Lru> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}
