//! In-memory health per model alias, from consecutive failures.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// ≥ `DEGRADED_AFTER` consecutive failures: Degraded; ≥ `DOWN_AFTER`: Down; any success: Healthy.
pub const DEGRADED_AFTER: u32 = 3;
pub const DOWN_AFTER: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Healthy,
    Degraded,
    Down,
}

/// How long a Down model is passed over before it is tried in its place again: an outage ends,
/// and only a request can tell (a failure re-marks it Down for another cooldown).
pub const DOWN_COOLDOWN: Duration = Duration::from_secs(120);

/// Shared by every round of every session of one engine; one owner passes it in (no global).
#[derive(Debug)]
pub struct HealthTracker {
    /// Consecutive failures and when the last one happened, per alias.
    failures: Mutex<HashMap<String, (u32, Instant)>>,
    cooldown: Duration,
}

impl Default for HealthTracker {
    fn default() -> Self {
        Self::with_cooldown(DOWN_COOLDOWN)
    }
}

impl HealthTracker {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_cooldown(cooldown: Duration) -> Self {
        Self { failures: Mutex::new(HashMap::new()), cooldown }
    }

    pub fn status(&self, model: &str) -> Health {
        let (n, last) = self.lock().get(model).copied().unwrap_or((0, Instant::now()));
        match n {
            // Past the cooldown a Down model gets one more chance in its configured place.
            n if n >= DOWN_AFTER && last.elapsed() < self.cooldown => Health::Down,
            n if n >= DEGRADED_AFTER => Health::Degraded,
            _ => Health::Healthy,
        }
    }

    pub fn consecutive_failures(&self, model: &str) -> u32 {
        self.lock().get(model).map_or(0, |(n, _)| *n)
    }

    pub fn record_success(&self, model: &str) {
        self.lock().remove(model);
    }

    pub fn record_failure(&self, model: &str) {
        let mut map = self.lock();
        let entry = map.entry(model.to_owned()).or_insert((0, Instant::now()));
        *entry = (entry.0.saturating_add(1), Instant::now());
    }

    /// Every model with a non-healthy status, for a status view.
    pub fn snapshot(&self) -> Vec<(String, Health)> {
        let names: Vec<String> = self.lock().keys().cloned().collect();
        let mut out: Vec<(String, Health)> = names
            .into_iter()
            .map(|n| {
                let h = self.status(&n);
                (n, h)
            })
            .filter(|(_, h)| *h != Health::Healthy)
            .collect();
        out.sort();
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u32, Instant)>> {
        // A panic while holding this lock cannot leave the counters inconsistent.
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_recovery() {
        let h = HealthTracker::new();
        assert_eq!(h.status("a"), Health::Healthy);
        for _ in 0..2 {
            h.record_failure("a");
        }
        assert_eq!(h.status("a"), Health::Healthy);
        h.record_failure("a");
        assert_eq!(h.status("a"), Health::Degraded);
        h.record_failure("a");
        h.record_failure("a");
        assert_eq!(h.status("a"), Health::Down);
        assert_eq!(h.snapshot(), vec![("a".to_owned(), Health::Down)]);
        h.record_success("a");
        assert_eq!(h.status("a"), Health::Healthy);
        assert!(h.snapshot().is_empty());
    }

    #[test]
    fn a_down_model_gets_another_chance_after_the_cooldown() {
        let h = HealthTracker::with_cooldown(Duration::from_millis(30));
        for _ in 0..DOWN_AFTER {
            h.record_failure("a");
        }
        assert_eq!(h.status("a"), Health::Down);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(h.status("a"), Health::Degraded, "tried again, not yet trusted");
        h.record_failure("a");
        assert_eq!(h.status("a"), Health::Down, "a failed probe starts a new cooldown");
    }
}
