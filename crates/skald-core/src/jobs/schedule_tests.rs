#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, Utc};
use skald_protocol::JobSchedule;

use super::*;

fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn cron(expr: &str, tz: &str) -> Schedule {
    let spec = JobSchedule::Cron { expr: expr.into() };
    Schedule::parse(&spec, Some(tz), utc("2026-01-01T00:00:00Z")).unwrap()
}

fn err(spec: JobSchedule, tz: Option<&str>) -> String {
    Schedule::parse(&spec, tz, utc("2026-01-01T00:00:00Z")).unwrap_err().to_string()
}

#[test]
fn weekday_schedule_fires_in_its_zone_and_says_so() {
    let s = cron("0 0 9 * * 1-5 *", "Europe/Berlin");
    // Friday 2026-01-02 08:00 UTC is 09:00 in Berlin (CET, +01:00).
    let p = s.preview(utc("2026-01-01T12:00:00Z"));
    assert_eq!(p.description, "every weekday at 09:00, Europe/Berlin");
    assert_eq!(
        p.next,
        [
            "2026-01-02T09:00:00+01:00",
            "2026-01-05T09:00:00+01:00",
            "2026-01-06T09:00:00+01:00",
            "2026-01-07T09:00:00+01:00",
            "2026-01-08T09:00:00+01:00",
        ]
    );
}

#[test]
fn spring_forward_runs_a_time_in_the_skipped_hour_once_right_after_the_gap() {
    // Berlin skips 02:00–03:00 on 2026-03-29: 02:30 does not exist that day.
    let s = cron("0 30 2 * * * *", "Europe/Berlin");
    let fires = s.between(utc("2026-03-28T00:00:00Z"), utc("2026-03-31T00:00:00Z"), 10);
    assert_eq!(
        fires,
        [
            utc("2026-03-28T01:30:00Z"), // 02:30 CET
            utc("2026-03-29T01:00:00Z"), // 03:00 CEST, the first time after the gap: once
            utc("2026-03-30T00:30:00Z"), // 02:30 CEST
        ]
    );
}

#[test]
fn fall_back_runs_a_time_in_the_repeated_hour_once() {
    // Berlin repeats 02:00–03:00 on 2026-10-25: 02:30 happens at 00:30Z and again at 01:30Z.
    let s = cron("0 30 2 * * * *", "Europe/Berlin");
    let fires = s.between(utc("2026-10-24T00:00:00Z"), utc("2026-10-27T00:00:00Z"), 10);
    assert_eq!(
        fires,
        [
            utc("2026-10-24T00:30:00Z"), // 02:30 CEST
            utc("2026-10-25T00:30:00Z"), // the first pass only
            utc("2026-10-26T01:30:00Z"), // 02:30 CET
        ]
    );
}

#[test]
fn a_stepped_schedule_fires_on_each_pass_of_the_repeated_hour_and_not_in_the_gap() {
    let s = cron("0 */30 * * * * *", "Europe/Berlin");
    let back = s.between(utc("2026-10-24T23:59:00Z"), utc("2026-10-25T02:00:00Z"), 20);
    // 02:00 02:30 CEST, 02:00 02:30 CET, 03:00 CET: every real half hour, both passes.
    assert_eq!(back.len(), 5);
    assert!(back.windows(2).all(|w| w[1] - w[0] == Duration::minutes(30)));
    let forward = s.between(utc("2026-03-28T23:59:00Z"), utc("2026-03-29T01:00:00Z"), 20);
    // 01:00 CET, 01:30 CET, then 03:00 CEST: nothing in the skipped hour.
    assert_eq!(
        forward,
        [utc("2026-03-29T00:00:00Z"), utc("2026-03-29T00:30:00Z"), utc("2026-03-29T01:00:00Z")]
    );
}

#[test]
fn a_one_shot_time_is_read_in_the_zone_and_fires_once() {
    let spec = JobSchedule::Once { at: "2026-07-01T09:00".into() };
    let s = Schedule::parse(&spec, Some("America/New_York"), utc("2026-01-01T00:00:00Z")).unwrap();
    let at = utc("2026-07-01T13:00:00Z"); // EDT, -04:00
    assert_eq!(s.next_after(utc("2026-06-01T00:00:00Z")), Some(at));
    assert_eq!(s.next_after(at), None);
    assert_eq!(s.describe(), "once, at 2026-07-01 09:00:00, America/New_York");
    let gap = JobSchedule::Once { at: "2026-03-29T02:30".into() };
    assert!(err(gap, Some("Europe/Berlin")).contains("does not exist in Europe/Berlin"));
}

#[test]
fn an_interval_counts_from_its_anchor() {
    let spec = JobSchedule::Every { seconds: 3600 };
    let anchor = utc("2026-01-01T00:00:10Z");
    let s = Schedule::parse(&spec, Some("UTC"), anchor).unwrap();
    assert_eq!(s.next_after(anchor), Some(utc("2026-01-01T01:00:10Z")));
    assert_eq!(s.next_after(utc("2026-01-01T01:00:10Z")), Some(utc("2026-01-01T02:00:10Z")));
    assert_eq!(s.next_after(utc("2026-01-01T05:30:00Z")), Some(utc("2026-01-01T06:00:10Z")));
    assert_eq!(s.describe(), "every hour, UTC");
}

#[test]
fn invalid_schedules_say_what_is_wrong() {
    let c = |e: &str| JobSchedule::Cron { expr: e.into() };
    assert!(err(c("0 9 * * *"), None).contains("seven fields"));
    assert!(err(c("0 0 25 * * * *"), None).starts_with("invalid cron schedule"));
    assert!(err(c("0 0 9 * * 1-5 *"), Some("Mars/Olympus")).contains("unknown time zone"));
    assert!(err(c("* * * * * * *"), None).contains("more often than once every 60 seconds"));
    assert!(err(JobSchedule::Every { seconds: 5 }, None).contains("between 60 seconds"));
    assert!(err(JobSchedule::Once { at: "tomorrow".into() }, None).contains("cannot read"));
}

#[test]
fn a_pattern_that_never_fires_again_has_no_next_time() {
    let s = cron("0 0 9 1 1 * 2020", "UTC");
    assert_eq!(s.next_after(utc("2026-01-01T00:00:00Z")), None);
}

#[test]
fn a_pattern_that_never_matches_has_no_fire_time_and_is_told_quickly() {
    // 31 February: the search gives up at its limit instead of looping; adding such a job is
    // refused because it has no fire time (the engine's check).
    let started = std::time::Instant::now();
    let s = cron("0 0 0 31 2 * *", "UTC");
    assert!(s.preview(utc("2026-01-01T00:00:00Z")).next.is_empty());
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
}
