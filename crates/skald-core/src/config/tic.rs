//! `tic:` — the periodic ticks that read what MCP servers kept connected pushed.

use chrono::NaiveTime;
use serde::{Deserialize, Serialize};

/// `tic:` in config.yml.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TicConfig {
    /// Seconds between ticks (default 900). A tick with nothing new asks no model.
    pub interval_secs: u64,
    /// Most events one tick reads (default 50); the rest wait for the next tick.
    pub batch_size: u32,
    /// `HH:MM-HH:MM` in the local zone (`timezone`, else the system's): ticks only inside it
    /// (an end before the start spans midnight). Unset: at any hour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_hours: Option<String>,
}

impl Default for TicConfig {
    fn default() -> Self {
        Self { interval_secs: 900, batch_size: 50, active_hours: None }
    }
}

pub const MIN_INTERVAL_SECS: u64 = 10;
pub const MAX_INTERVAL_SECS: u64 = 7 * 24 * 3600;
pub const MAX_BATCH: u32 = 500;

/// A parsed `active_hours`: from `start` (inclusive) to `end` (exclusive), local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveHours {
    pub start: NaiveTime,
    pub end: NaiveTime,
}

impl ActiveHours {
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("`{text}` is not HH:MM-HH:MM (e.g. 08:00-20:00)");
        let (a, b) = text.trim().split_once('-').ok_or_else(bad)?;
        let time = |t: &str| NaiveTime::parse_from_str(t.trim(), "%H:%M").map_err(|_| bad());
        let (start, end) = (time(a)?, time(b)?);
        if start == end {
            return Err(format!("`{text}`: the start and the end are the same time"));
        }
        Ok(Self { start, end })
    }

    /// Whether local time `t` is inside.
    pub fn contains(&self, t: NaiveTime) -> bool {
        if self.start < self.end {
            self.start <= t && t < self.end
        } else {
            t >= self.start || t < self.end
        }
    }
}

impl TicConfig {
    /// What is wrong, as `(text to find in the file, message)`.
    pub(super) fn problem(&self) -> Option<(String, String)> {
        if !(MIN_INTERVAL_SECS..=MAX_INTERVAL_SECS).contains(&self.interval_secs) {
            return Some((
                "interval_secs".into(),
                format!(
                    "tic.interval_secs: from {MIN_INTERVAL_SECS} to {MAX_INTERVAL_SECS} seconds, \
                     not {}",
                    self.interval_secs
                ),
            ));
        }
        if !(1..=MAX_BATCH).contains(&self.batch_size) {
            return Some((
                "batch_size".into(),
                format!("tic.batch_size: from 1 to {MAX_BATCH}, not {}", self.batch_size),
            ));
        }
        if let Some(hours) = &self.active_hours
            && let Err(e) = ActiveHours::parse(hours)
        {
            return Some(("active_hours".into(), format!("tic.active_hours: {e}")));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use chrono::NaiveTime;

    use super::{ActiveHours, TicConfig};

    fn t(s: &str) -> NaiveTime {
        NaiveTime::parse_from_str(s, "%H:%M").unwrap()
    }

    #[test]
    fn active_hours_parse_and_span_midnight() {
        let day = ActiveHours::parse("08:00-20:00").unwrap();
        assert!(day.contains(t("08:00")) && day.contains(t("19:59")));
        assert!(!day.contains(t("20:00")) && !day.contains(t("07:59")));
        let night = ActiveHours::parse(" 22:00 - 06:30 ").unwrap();
        assert!(night.contains(t("23:00")) && night.contains(t("06:29")));
        assert!(!night.contains(t("12:00")));
        for bad in ["", "8-20", "08:00", "25:00-26:00", "08:00-08:00", "08:00-20:00-21:00"] {
            assert!(ActiveHours::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn out_of_range_settings_are_refused_naming_the_key() {
        assert_eq!(TicConfig::default().problem(), None);
        let bad = |c: TicConfig| c.problem().unwrap().1;
        assert!(
            bad(TicConfig { interval_secs: 5, ..Default::default() })
                .starts_with("tic.interval_secs")
        );
        assert!(
            bad(TicConfig { batch_size: 0, ..Default::default() }).starts_with("tic.batch_size")
        );
        assert!(
            bad(TicConfig { batch_size: 10_000, ..Default::default() })
                .starts_with("tic.batch_size")
        );
        let hours = TicConfig { active_hours: Some("8-20".into()), ..Default::default() };
        assert!(bad(hours).starts_with("tic.active_hours"));
    }
}
