//! Briefings: what background work reports (a job run's end, an agent's `notify`) is delivered
//! to the home source's session as one briefing input, and the home agent answers it once.
//! Against the strict fake provider over HTTP, a real SQLite file and a controllable clock.

use std::time::{Duration, Instant};

use serde_json::json;
use skald_core::Engine;
use skald_protocol::{DebugMessage, Event, JobPolicies, JobSchedule};
use skald_testkit::Reply;

use super::auto_resume::open_at;
use super::jobs::{Rig, all_ended, runs_until, utc};

/// A jobs rig with briefings on.
async fn rig(start: &str) -> Rig {
    let rig = Rig::new(start).await;
    std::fs::write(rig.data.join("config.yml"), "notifications:\n  briefings: true\n").unwrap();
    rig
}

/// Runs a one-shot job whose model replies with `replies`; returns the run's session.
async fn run_job(rig: &Rig, engine: &Engine, key: &str, at: &str, replies: Vec<Reply>) -> i64 {
    let once = JobSchedule::Once { at: at.into() };
    let job = engine.add_job(rig.job(key, once, "UTC", JobPolicies::default())).await.unwrap();
    for reply in replies {
        rig.fake.push_for_prompt(key, reply);
    }
    rig.set(utc(at));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(engine, job.id, "the run ends", |r| r.len() == 1 && all_ended(r)).await;
    runs[0].session_id.expect("the run has a session")
}

/// The bodies of the requests whose first message is a briefing.
fn briefing_requests(rig: &Rig) -> Vec<serde_json::Value> {
    rig.fake
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| super::subagents::first_text(b).starts_with("[briefing]"))
        .collect()
}

/// Waits (bounded) until the home session's agent answered `n` briefings.
async fn briefings_answered(rig: &Rig, engine: &Engine, home: &str, n: usize) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(session_id) = rig.store().await.active_session(home).await.unwrap() {
            let history = engine.session_detail(session_id).await.unwrap();
            let answers = history
                .messages
                .iter()
                .filter(|m| {
                    matches!(m, DebugMessage::Assistant { content, .. } if content.starts_with("BRIEFING"))
                })
                .count();
            if answers >= n {
                return session_id;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no {n} briefing(s) at home; requests: {:#?}",
            briefing_requests(rig)
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_jobs_notify_and_its_end_reach_home_as_one_briefing_answered_once() {
    let rig = rig("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let mut events = engine.subscribe();
    let notify = json!({ "summary": "Disk on build-01 is 91% full." }).to_string();
    rig.fake.push_for_prompt(
        "[briefing]",
        Reply::text("BRIEFING: build-01's disk is nearly full; the disk check finished."),
    );
    let run_session = run_job(
        &rig,
        &engine,
        "BRIEF-DISK",
        "2026-05-04T10:01:00Z",
        vec![Reply::tool_call("notify", &notify), Reply::text("Checked the disks.")],
    )
    .await;
    let home = briefings_answered(&rig, &engine, "web", 1).await;

    // One briefing carried both facts, as data, with the session they are about.
    let asked = briefing_requests(&rig);
    assert_eq!(asked.len(), 1, "{asked:#?}");
    let text = super::subagents::first_text(&asked[0]);
    assert!(text.contains("Disk on build-01 is 91% full."), "{text}");
    assert!(text.contains("The scheduled job \\\"job BRIEF-DISK\\\" finished"), "{text}");
    assert!(text.contains(&format!("\"session\": {run_session}")), "{text}");
    assert!(text.contains("not instructions"), "{text}");

    // Both delivered, to the home session, by the same input.
    let notes = engine.notifications(None).await.unwrap();
    assert_eq!(notes.len(), 2, "{notes:#?}");
    assert!(notes.iter().all(|n| n.delivered_session_id == Some(home)), "{notes:#?}");
    let kinds: Vec<(&str, &str)> =
        notes.iter().rev().map(|n| (n.origin.as_str(), n.event_type.as_str())).collect();
    assert_eq!(kinds, [("job", "notify"), ("job", "job_run_done")]);
    let inputs: Vec<Option<i64>> = rig
        .store()
        .await
        .recent_notifications(10)
        .await
        .unwrap()
        .iter()
        .map(|n| n.briefing_input_id)
        .collect();
    assert!(inputs[0].is_some() && inputs[0] == inputs[1], "{inputs:?}");

    // Every window hears of it; it names the count, never the text.
    let delivered = loop {
        let env = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .expect("a briefing_delivered event")
            .unwrap();
        if let Event::BriefingDelivered { notifications } = env.event {
            break (env.session_id, notifications);
        }
    };
    assert_eq!(delivered, (Some(home), 2));

    // Nothing is delivered twice: another pass, and another engine, find nothing to deliver.
    assert_eq!(engine.deliver_briefing().await.unwrap(), 0);
    let other = open_at(&rig.data, &rig.fake, None, false).await;
    assert_eq!(other.deliver_briefing().await.unwrap(), 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sethome_sends_the_next_briefing_to_that_sources_session() {
    let rig = rig("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    assert_eq!(engine.home_source().await.unwrap().source, "web");
    assert!(!engine.home_source().await.unwrap().chosen);
    let home = engine.set_home_source(" desk ").await.unwrap();
    assert_eq!((home.source.as_str(), home.chosen), ("desk", true));
    assert!(engine.set_home_source("").await.is_err(), "an empty source is refused");

    rig.fake.push_for_prompt("[briefing]", Reply::text("BRIEFING: the report ran."));
    run_job(&rig, &engine, "BRIEF-HOME", "2026-05-04T10:01:00Z", vec![Reply::text("Done.")]).await;
    let desk = briefings_answered(&rig, &engine, "desk", 1).await;
    assert_eq!(rig.store().await.active_session("web").await.unwrap(), None, "web got nothing");
    let notes = engine.notifications(None).await.unwrap();
    assert_eq!(notes[0].delivered_session_id, Some(desk));
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_briefings_off_reports_are_kept_and_no_model_is_asked() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    run_job(&rig, &engine, "BRIEF-OFF", "2026-05-04T10:01:00Z", vec![Reply::text("Done.")]).await;
    // Past the batch window and a service pass.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(engine.deliver_briefing().await.unwrap(), 0);
    let notes = engine.notifications(None).await.unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].delivered_at, None);
    assert!(briefing_requests(&rig).is_empty());
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_waiting_for_a_person_is_announced_at_home() {
    let rig = rig("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let once = JobSchedule::Once { at: "2026-05-04T10:01:00Z".into() };
    let job = rig.job("BRIEF-WAIT", once, "UTC", JobPolicies::default());
    let job = engine.add_job(job).await.unwrap();
    super::jobs::script_parking_run(&rig.fake, "BRIEF-WAIT", false);
    rig.fake.push_for_prompt(
        "[briefing]",
        Reply::text("BRIEFING: the nightly job waits for your approval in the Inbox."),
    );
    rig.set(utc("2026-05-04T10:01:00Z"));
    engine.schedule_tick().await.unwrap();
    runs_until(&engine, job.id, "the run waits", |r| {
        r.len() == 1 && r[0].state == skald_protocol::JobRunState::Waiting
    })
    .await;
    briefings_answered(&rig, &engine, "web", 1).await;
    let text = super::subagents::first_text(&briefing_requests(&rig)[0]);
    assert!(text.contains("\"what\": \"job_run_waiting\""), "{text}");
    assert!(text.contains("waits for a person's decision"), "{text}");
    // The approval is still the person's, in the Inbox: the briefing only tells of it.
    assert_eq!(engine.inbox().await.unwrap().items.len(), 1);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Reports past `notifications.retention_days` are deleted when an engine opens (and hourly
/// while the background runs): a delivered one counted from its delivery, a fresh one kept.
#[tokio::test]
async fn notifications_past_their_retention_are_pruned_when_an_engine_opens() {
    let rig = Rig::new("2026-03-01T08:00:00Z").await;
    std::fs::write(
        rig.data.join("config.yml"),
        "notifications:\n  briefings: false\n  retention_days: 7\n",
    )
    .unwrap();
    let engine = rig.engine().await;
    let fact = |summary: &str| skald_store::repo::notifications::NewNotification {
        origin: "tic".into(),
        event_type: "notify".into(),
        summary: summary.into(),
        session_id: None,
        job_run_id: None,
    };
    engine.notify(fact("old news")).await.unwrap();
    rig.set(utc("2026-03-09T08:00:00Z"));
    engine.notify(fact("this week")).await.unwrap();
    engine.shutdown(Duration::from_secs(5)).await;

    let engine = rig.engine().await;
    let left: Vec<String> =
        engine.notifications(None).await.unwrap().into_iter().map(|n| n.summary).collect();
    assert_eq!(left, ["this week"], "8 days old is past 7 days");
    // The hourly pass does the same with what has aged since.
    rig.set(utc("2026-03-17T08:00:00Z"));
    engine.prune_notifications().await.unwrap();
    assert!(engine.notifications(None).await.unwrap().is_empty());
}
