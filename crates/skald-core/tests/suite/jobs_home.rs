//! What a job's runs tell the rest of the app: a run that ends leaves a notice the home
//! conversation shows (the first lines of its answer or why it did not finish, with its session),
//! and adding, editing, switching and deleting a job puts a `job_changed` event in the outbox in
//! the same transaction, so every process's Jobs page follows without polling.

use std::time::Duration;

use skald_core::Engine;
use skald_protocol::{ErrorCode, Event, HomeNotice, JobPolicies, JobRunState, JobSchedule};
use skald_testkit::Reply;

use super::auto_resume::open_at;
use super::jobs::{Rig, all_ended, cron, runs_until, script_parking_run, utc};

/// Runs a one-shot job whose model replies with `replies`; returns the job id once it ended.
async fn run_once(rig: &Rig, engine: &Engine, key: &str, at: &str, replies: Vec<Reply>) -> i64 {
    let once = JobSchedule::Once { at: at.into() };
    let job = engine.add_job(rig.job(key, once, "UTC", JobPolicies::default())).await.unwrap();
    for reply in replies {
        rig.fake.push_for_prompt(key, reply);
    }
    rig.set(utc(at));
    engine.schedule_tick().await.unwrap();
    runs_until(engine, job.id, "the run ends", |r| r.len() == 1 && all_ended(r)).await;
    job.id
}

/// The next `home_notice` event on `events`.
async fn next_notice(
    events: &mut tokio::sync::broadcast::Receiver<skald_protocol::EventEnvelope>,
) -> HomeNotice {
    loop {
        let env = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
        if let Event::HomeNotice { notice } = env.expect("a home_notice event").unwrap().event {
            return notice;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_run_that_ends_leaves_a_notice_for_the_home_conversation_until_dismissed() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let mut events = engine.subscribe();

    // Done: the first three lines of the answer, cut where it goes on.
    let answer = "\nThe build is green.\nTwo warnings in \u{1b}[31mcore\u{1b}[0m.\nNo new issues.\nDetails follow.";
    let done =
        run_once(&rig, &engine, "HOME-OK", "2026-05-04T10:01:00Z", vec![Reply::text(answer)]).await;
    let notice = next_notice(&mut events).await;
    let run = engine.list_job_runs(done, None).await.unwrap().remove(0);
    assert_eq!(
        (notice.job_id, notice.job_run_id, notice.state, notice.session_id),
        (done, run.id, JobRunState::Done, run.session_id)
    );
    assert_eq!(notice.job_title, "job HOME-OK");
    // Stored as the model wrote it (escape sequence included): each display escapes it.
    assert_eq!(
        notice.summary,
        "The build is green.\nTwo warnings in \u{1b}[31mcore\u{1b}[0m.\nNo new issues.…"
    );

    // Failed: the provider refused the request; the notice says why.
    let refusal = Reply::Status {
        code: 401,
        times: 1,
        retry_after: None,
        body: Some(r#"{"error":{"message":"invalid api key","type":"auth"}}"#.into()),
    };
    let failed = run_once(&rig, &engine, "HOME-FAIL", "2026-05-04T10:02:00Z", vec![refusal]).await;
    let notice = next_notice(&mut events).await;
    assert_eq!((notice.job_id, notice.state), (failed, JobRunState::Failed));
    assert!(notice.summary.contains("401"), "{notice:?}");
    let run = engine.list_job_runs(failed, None).await.unwrap().remove(0);
    assert_eq!(run.state, JobRunState::Failed);
    assert_eq!(Some(notice.summary.as_str()), run.reason.as_deref(), "a one-line reason whole");

    // Killed while it waited for a person.
    let once = JobSchedule::Once { at: "2026-05-04T10:03:00Z".into() };
    let job = rig.job("HOME-KILL", once, "UTC", JobPolicies::default());
    let killed = engine.add_job(job).await.unwrap().id;
    script_parking_run(&rig.fake, "HOME-KILL", false);
    rig.set(utc("2026-05-04T10:03:00Z"));
    engine.schedule_tick().await.unwrap();
    let runs = runs_until(&engine, killed, "the run waits", |r| {
        r.first().is_some_and(|r| r.state == JobRunState::Waiting)
    })
    .await;
    assert_eq!(engine.home_notices(None).await.unwrap().len(), 2, "a waiting run has none yet");
    engine.kill_job_run(runs[0].id).await.unwrap();
    let notice = next_notice(&mut events).await;
    assert_eq!((notice.job_id, notice.state), (killed, JobRunState::Killed));
    assert_eq!(notice.summary, "killed");

    // Newest first; another process (a `skald` command) reads the same.
    let other = open_at(&rig.data, &rig.fake, None, false).await;
    let listed = other.home_notices(None).await.unwrap();
    let jobs: Vec<i64> = listed.iter().map(|n| n.job_id).collect();
    assert_eq!(jobs, [killed, failed, done]);

    // Dismissed from one window: every window hears it, and it is gone for good.
    let first = listed[2].id;
    engine.dismiss_home_notice(first).await.unwrap();
    loop {
        let env = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
        if let Event::HomeNoticeDismissed { notice_id } = env.unwrap().unwrap().event {
            assert_eq!(notice_id, first);
            break;
        }
    }
    let left: Vec<i64> = other.home_notices(None).await.unwrap().iter().map(|n| n.id).collect();
    assert_eq!(left, [listed[0].id, listed[1].id]);
    other.dismiss_home_notice(first).await.unwrap();
    let missing = other.dismiss_home_notice(9_999).await;
    assert_eq!(missing.unwrap_err().code(), ErrorCode::NotFound);

    // A job deleted with its history takes its notices along; kept history keeps them.
    engine.delete_job(failed, true).await.unwrap();
    engine.delete_job(killed, false).await.unwrap();
    let left: Vec<i64> = other.home_notices(None).await.unwrap().iter().map(|n| n.job_id).collect();
    assert_eq!(left, [killed]);
    other.shutdown(Duration::from_secs(5)).await;
    engine.shutdown(Duration::from_secs(5)).await;
}

/// The `job_changed` events the outbox holds after `after`, as (job id, deleted).
async fn job_changes(store: &skald_store::Store, after: i64) -> Vec<(i64, bool)> {
    let rows = store.outbox_after(after, 1000).await.unwrap();
    rows.iter()
        .filter_map(|row| match row.envelope().unwrap().event {
            Event::JobChanged { job_id, deleted } => Some((job_id, deleted)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn adding_editing_switching_and_deleting_a_job_each_put_an_event_in_the_outbox() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let store = skald_store::Store::open_in_dir(&rig.data).await.unwrap();
    let head = store.outbox_head().await.unwrap();
    let input = rig.job("EVENTS", cron("0 0 9 * * * *"), "UTC", JobPolicies::default());
    let job = engine.add_job(input.clone()).await.unwrap();
    // In the outbox when the call returns: it rode the insert's transaction, no flush needed.
    assert_eq!(job_changes(&store, head).await, [(job.id, false)]);
    let mut edited = input.clone();
    edited.title = "renamed".into();
    engine.edit_job(job.id, edited).await.unwrap();
    engine.set_job_enabled(job.id, false).await.unwrap();
    engine.set_job_enabled(job.id, true).await.unwrap();
    // A refused change stores nothing, so says nothing.
    let mut bad = input.clone();
    bad.timezone = Some("Europe/Berln".into());
    assert!(engine.edit_job(job.id, bad).await.is_err());
    let other = engine.add_job(input.clone()).await.unwrap();
    engine.delete_job(other.id, true).await.unwrap();
    engine.delete_job(job.id, false).await.unwrap();
    assert_eq!(
        job_changes(&store, head).await,
        [
            (job.id, false),
            (job.id, false),
            (job.id, false),
            (job.id, false),
            (other.id, false),
            (other.id, true),
            (job.id, true)
        ]
    );
    // Deleting it again finds nothing and says nothing.
    assert!(engine.delete_job(job.id, false).await.is_err());
    assert_eq!(job_changes(&store, head).await.len(), 7);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A job whose stored schedule no longer parses (its zone gone from the time-zone database) is
/// disabled by the scheduler rather than left due forever, and open pages hear of it.
#[tokio::test(flavor = "multi_thread")]
async fn the_scheduler_disabling_a_job_whose_zone_is_gone_tells_every_process() {
    let rig = Rig::new("2026-05-04T10:00:30Z").await;
    let engine = rig.engine().await;
    let store = skald_store::Store::open_in_dir(&rig.data).await.unwrap();
    let input = rig.job("GONE", cron("0 * * * * * *"), "UTC", JobPolicies::default());
    let job = engine.add_job(input).await.unwrap();
    sqlx::query("UPDATE scheduled_jobs SET timezone = 'Mars/Base' WHERE id = ?")
        .bind(job.id)
        .execute(store.pool())
        .await
        .unwrap();
    let head = store.outbox_head().await.unwrap();
    rig.set(utc("2026-05-04T10:01:00Z"));
    engine.schedule_tick().await.unwrap();
    let after = engine.job(job.id).await.unwrap();
    assert!(!after.enabled, "{after:?}");
    assert_eq!(after.next_run_at, None);
    assert_eq!(job_changes(&store, head).await, [(job.id, false)]);
    assert!(engine.list_job_runs(job.id, None).await.unwrap().is_empty());
    engine.shutdown(Duration::from_secs(5)).await;
}
