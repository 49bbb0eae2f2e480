//! A job's schedule: the seven-field cron with seconds and year, a one-shot time, or a plain
//! interval, in an IANA time zone; its fire times (as instants) and a preview in words.
//!
//! Cron patterns are evaluated by `croner` in the job's zone. Over a daylight-saving change it
//! does what it documents: a fixed time inside the skipped hour fires once, at the first valid
//! second after the gap; a fixed time inside the repeated hour fires once, on its first pass;
//! a wildcard or stepped time fires on each pass of the repeated hour and not in the gap.

use std::str::FromStr;

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use skald_protocol::{JobSchedule, SchedulePreview};

/// Occurrences closer than this are refused: every run is a model's turn that costs money, and
/// a pattern firing each second (from a typo or a model) would start one per tick.
pub const MIN_GAP: Duration = Duration::seconds(60);

/// The longest plain interval: a year.
const MAX_INTERVAL_SECS: u64 = 366 * 24 * 3600;

/// How many fire times a preview shows.
const PREVIEW_COUNT: usize = 5;

/// Why a schedule was refused; the text is meant for the person who wrote it, and `field` names
/// what they wrote wrong (`schedule` or `timezone`, as a job's input names them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ScheduleError {
    field: &'static str,
    message: String,
}

impl ScheduleError {
    fn new(msg: impl Into<String>) -> Self {
        Self { field: "schedule", message: msg.into() }
    }

    /// The input field the error is about: `schedule` or `timezone`.
    pub fn field(&self) -> &'static str {
        self.field
    }
}

/// A parsed schedule in its zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    kind: Kind,
    tz: Tz,
}

#[derive(Debug, Clone)]
enum Kind {
    Cron {
        cron: Box<Cron>,
        fields: Vec<String>,
    },
    Once(DateTime<Utc>),
    /// Fires at `anchor + k * every`, k ≥ 1.
    Every {
        every: Duration,
        anchor: DateTime<Utc>,
    },
}

/// The machine's IANA zone; UTC when it cannot be told.
pub fn machine_timezone() -> String {
    iana_time_zone::get_timezone()
        .ok()
        .filter(|name| Tz::from_str(name).is_ok())
        .unwrap_or_else(|| "UTC".to_string())
}

/// Reads an IANA zone name (`None`: the machine's).
pub fn parse_timezone(name: Option<&str>) -> Result<Tz, ScheduleError> {
    let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => n.to_string(),
        None => machine_timezone(),
    };
    Tz::from_str(&name).map_err(|_| ScheduleError {
        field: "timezone",
        message: format!(
            "unknown time zone {name:?}: give an IANA name such as Europe/Berlin or UTC"
        ),
    })
}

impl Schedule {
    /// Parses `spec` in zone `tz` (`None`: the machine's). `anchor` is where an interval counts
    /// from (the job's creation).
    pub fn parse(
        spec: &JobSchedule,
        tz: Option<&str>,
        anchor: DateTime<Utc>,
    ) -> Result<Self, ScheduleError> {
        let tz = parse_timezone(tz)?;
        let kind = match spec {
            JobSchedule::Cron { expr } => parse_cron(expr)?,
            JobSchedule::Once { at } => Kind::Once(parse_once(at, tz)?),
            JobSchedule::Every { seconds } => {
                let secs = *seconds;
                if secs < MIN_GAP.num_seconds().unsigned_abs() || secs > MAX_INTERVAL_SECS {
                    return Err(ScheduleError::new(format!(
                        "an interval must be between {} seconds and {MAX_INTERVAL_SECS} seconds \
                         (a year); got {secs}",
                        MIN_GAP.num_seconds()
                    )));
                }
                let every = Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX));
                Kind::Every { every, anchor }
            }
        };
        let schedule = Self { kind, tz };
        schedule.check_gap(anchor)?;
        Ok(schedule)
    }

    /// The zone's IANA name.
    pub fn timezone(&self) -> &'static str {
        self.tz.name()
    }

    /// The first fire time strictly after `after`; `None` when none is left.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.kind {
            Kind::Cron { cron, .. } => cron
                .find_next_occurrence(&after.with_timezone(&self.tz), false)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
            Kind::Once(at) => (*at > after).then_some(*at),
            Kind::Every { every, anchor } => {
                if after < *anchor {
                    return Some(*anchor + *every);
                }
                let step = every.num_milliseconds().max(1);
                let passed = (after - *anchor).num_milliseconds() / step + 1;
                Some(*anchor + Duration::milliseconds(passed.saturating_mul(step)))
            }
        }
    }

    /// The fire times in `(after, until]`, oldest first, at most `cap` of them.
    pub fn between(
        &self,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        cap: usize,
    ) -> Vec<DateTime<Utc>> {
        let mut out = Vec::new();
        let mut cursor = after;
        while out.len() < cap {
            match self.next_after(cursor) {
                Some(t) if t <= until => {
                    out.push(t);
                    cursor = t;
                }
                _ => break,
            }
        }
        out
    }

    /// The schedule in words and its next fire times after `now`, in the zone.
    pub fn preview(&self, now: DateTime<Utc>) -> SchedulePreview {
        let mut next = Vec::new();
        let mut cursor = now;
        while next.len() < PREVIEW_COUNT {
            let Some(t) = self.next_after(cursor) else { break };
            next.push(t.with_timezone(&self.tz).to_rfc3339());
            cursor = t;
        }
        SchedulePreview { description: self.describe(), timezone: self.tz.name().to_string(), next }
    }

    /// "every weekday at 09:00, Europe/Berlin".
    pub fn describe(&self) -> String {
        let words = match &self.kind {
            Kind::Cron { cron, fields } => {
                describe_fields(fields).unwrap_or_else(|| cron.describe().trim().to_string())
            }
            Kind::Once(at) => {
                format!("once, at {}", at.with_timezone(&self.tz).format("%Y-%m-%d %H:%M:%S"))
            }
            Kind::Every { every, .. } => format!("every {}", duration_words(*every)),
        };
        format!("{words}, {}", self.tz.name())
    }

    /// Refuses a schedule whose next occurrences come closer than `MIN_GAP`.
    fn check_gap(&self, from: DateTime<Utc>) -> Result<(), ScheduleError> {
        let times = self.between(from, DateTime::<Utc>::MAX_UTC, 12);
        if times.windows(2).any(|w| w[1] - w[0] < MIN_GAP) {
            return Err(ScheduleError::new(format!(
                "the schedule fires more often than once every {} seconds",
                MIN_GAP.num_seconds()
            )));
        }
        Ok(())
    }
}

fn parse_cron(expr: &str) -> Result<Kind, ScheduleError> {
    let fields: Vec<String> = expr.split_whitespace().map(str::to_string).collect();
    if fields.len() != 7 {
        return Err(ScheduleError::new(format!(
            "a cron schedule has seven fields `sec min hour day-of-month month day-of-week \
             year` (e.g. `0 0 9 * * 1-5 *`); got {} in {expr:?}",
            fields.len()
        )));
    }
    let parser = CronParser::builder().seconds(Seconds::Required).year(Year::Required).build();
    let cron = parser
        .parse(&fields.join(" "))
        .map_err(|e| ScheduleError::new(format!("invalid cron schedule {expr:?}: {e}")))?;
    Ok(Kind::Cron { cron: Box::new(cron), fields })
}

/// An instant with an offset, or a local time in `tz` (a time the clock skips is refused; a
/// repeated one is its first pass).
fn parse_once(at: &str, tz: Tz) -> Result<DateTime<Utc>, ScheduleError> {
    let at = at.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(at) {
        return Ok(t.with_timezone(&Utc));
    }
    let local = ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(at, f).ok())
        .ok_or_else(|| {
            ScheduleError::new(format!(
                "cannot read the time {at:?}: give `2026-12-24T09:00` (in the job's zone) or \
                 an RFC 3339 instant"
            ))
        })?;
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => Ok(t.with_timezone(&Utc)),
        LocalResult::None => Err(ScheduleError::new(format!(
            "{at} does not exist in {} (the clocks skip it)",
            tz.name()
        ))),
    }
}

const DAYS: [&str; 7] =
    ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// Words for the common shapes (a fixed time on some weekdays, every n minutes or hours);
/// `None` for the rest, which `croner`'s own description covers.
fn describe_fields(f: &[String]) -> Option<String> {
    let [sec, min, hour, dom, month, dow, year] = f else { return None };
    if dom != "*" || month != "*" || year != "*" {
        return None;
    }
    let num = |s: &str| s.parse::<u32>().ok();
    if let (Some(s), Some(m), Some(h)) = (num(sec), num(min), num(hour)) {
        let time = if s == 0 { format!("{h:02}:{m:02}") } else { format!("{h:02}:{m:02}:{s:02}") };
        return Some(format!("{} at {time}", days_words(dow)?));
    }
    if dow != "*" || num(sec) != Some(0) {
        return None;
    }
    if hour == "*" {
        if let Some(n) = min.strip_prefix("*/").and_then(num) {
            return Some(format!("every {n} minutes"));
        }
        if let Some(m) = num(min) {
            return Some(format!("every hour at minute {m}"));
        }
    }
    if let (Some(m), Some(n)) = (num(min), hour.strip_prefix("*/").and_then(num)) {
        return Some(format!("every {n} hours at minute {m}"));
    }
    None
}

fn days_words(dow: &str) -> Option<String> {
    let day = |s: &str| -> Option<&'static str> {
        let n: usize = s.parse().ok()?;
        DAYS.get(n % 7).copied()
    };
    Some(match dow {
        "*" | "?" => "every day".to_string(),
        "1-5" => "every weekday".to_string(),
        "0,6" | "6,0" => "every weekend day".to_string(),
        list => {
            let names: Option<Vec<&str>> = list.split(',').map(day).collect();
            format!("every {}", names?.join(", "))
        }
    })
}

fn duration_words(d: Duration) -> String {
    let secs = d.num_seconds();
    let (n, unit) = if secs % 86_400 == 0 {
        (secs / 86_400, "day")
    } else if secs % 3600 == 0 {
        (secs / 3600, "hour")
    } else if secs % 60 == 0 {
        (secs / 60, "minute")
    } else {
        (secs, "second")
    };
    if n == 1 { unit.to_string() } else { format!("{n} {unit}s") }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
