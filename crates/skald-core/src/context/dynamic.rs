//! The dynamic tail: fresh context placed after the history so the cached prefix survives.

use chrono::{DateTime, Duration, TimeZone, Timelike, Utc};
use serde_json::{Value, json};

/// What goes into the tail system message.
#[derive(Debug, Clone, Default)]
pub struct DynamicTail {
    /// Memories, RunContext prompt fragments and similar per-turn text, in order.
    pub fragments: Vec<String>,
    /// Pre-formatted date line, or `None` when the date is disabled.
    pub now: Option<String>,
    pub os: String,
    pub workdir: String,
}

impl DynamicTail {
    pub fn message(&self) -> Value {
        let mut parts: Vec<String> =
            self.fragments.iter().map(|f| f.trim().to_string()).filter(|f| !f.is_empty()).collect();
        let mut env = String::from("<environment>");
        if let Some(now) = &self.now {
            env.push_str(&format!("\nCurrent date and time: {now}"));
        }
        env.push_str(&format!("\nOperating system: {}", self.os));
        env.push_str(&format!(
            "\nWorking directory: {} (file tools and execute_cmd resolve relative paths against \
             it; no need to cd)",
            self.workdir
        ));
        env.push_str("\n</environment>");
        parts.push(env);
        json!({ "role": "system", "content": parts.join("\n\n") })
    }
}

/// `2026-06-17T21:15:00+01:00 (Europe/Rome)`, rounded down to `round_minutes` so consecutive
/// requests share the cached prefix for a while.
pub fn format_now(now: DateTime<Utc>, tz_name: &str, round_minutes: Option<u32>) -> String {
    let rounded = match round_minutes.filter(|m| *m > 0) {
        Some(m) => {
            let minute = now.minute() - now.minute() % m.min(60);
            now.with_minute(minute)
                .and_then(|t| t.with_second(0))
                .and_then(|t| t.with_nanosecond(0))
                .unwrap_or(now)
        }
        None => now.with_nanosecond(0).unwrap_or(now),
    };
    match tz_name.parse::<chrono_tz::Tz>() {
        Ok(tz) => {
            let local = tz.from_utc_datetime(&rounded.naive_utc());
            format!("{} ({tz_name})", local.to_rfc3339_opts(chrono::SecondsFormat::Secs, false))
        }
        Err(_) => format!(
            "{} (UTC)",
            (rounded + Duration::zero()).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
    }
}

/// The OS line, computed once per process.
pub fn os_description() -> String {
    static OS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OS.get_or_init(|| {
        let info = os_info::get();
        format!("{} {} [{}]", info.os_type(), info.version(), info.bitness())
    })
    .clone()
}

/// The zone to show: configured, else the OS zone, else UTC.
pub fn effective_timezone(configured: Option<&str>) -> String {
    configured
        .map(str::to_string)
        .or_else(|| iana_time_zone::get_timezone().ok())
        .unwrap_or_else(|| "UTC".to_string())
}
