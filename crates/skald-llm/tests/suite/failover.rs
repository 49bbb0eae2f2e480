//! Retries with backoff, fallback along the chain, fail-fast errors and health.

use std::time::Duration;

use skald_llm::{Health, LlmError, LlmNotice};
use skald_testkit::{FakeLlm, Reply};

use super::support::{client, endpoint, run, user};

fn models(reqs: &[skald_testkit::RecordedRequest]) -> Vec<String> {
    reqs.iter().map(|r| r.model.clone().unwrap_or_default()).collect()
}

#[tokio::test]
async fn rate_limit_then_success_waits_the_retry_after() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Status { code: 429, times: 1, retry_after: Some(7), body: None });
    fake.push(Reply::text("after the wait"));
    let (client, sleeper) = client();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi")).await;
    assert_eq!(r.turn().content, "after the wait");
    assert_eq!(*sleeper.delays.lock().unwrap(), vec![Duration::from_secs(7)]);
    match &r.notices[..] {
        [LlmNotice::Retrying { model, attempt: 1, reason, delay }] => {
            assert_eq!(model, "m1");
            assert!(reason.contains("429"), "{reason}");
            assert_eq!(*delay, Duration::from_secs(7));
        }
        other => panic!("unexpected notices {other:?}"),
    }
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(client.health().status("m1"), Health::Healthy);
}

#[tokio::test]
async fn retry_after_beyond_the_cap_is_capped() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Status { code: 503, times: 1, retry_after: Some(3600), body: None });
    fake.push(Reply::text("ok"));
    let (client, sleeper) = client();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi")).await;
    assert_eq!(r.turn().content, "ok");
    assert_eq!(*sleeper.delays.lock().unwrap(), vec![client.settings().backoff_cap]);
}

#[tokio::test]
async fn server_errors_exhaust_retries_then_fall_back_to_the_next_model() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push_for_model("m1", Reply::status(500, 4));
    fake.push_for_model("m2", Reply::text("from the second model"));
    let (client, sleeper) = client();
    let chain = [endpoint(&fake.base_url(), "m1"), endpoint(&fake.base_url(), "m2")];
    let r = run(&client, &chain, &user("hi")).await;
    assert_eq!(r.turn().content, "from the second model");
    assert_eq!(r.turn().model, "m2");
    assert_eq!(models(&fake.requests()), vec!["m1", "m1", "m1", "m1", "m2"]);

    let retries: Vec<u32> = r
        .notices
        .iter()
        .filter_map(|n| match n {
            LlmNotice::Retrying { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(retries, vec![1, 2, 3]);
    match r.notices.last() {
        Some(LlmNotice::ModelFallback { from, to, reason }) => {
            assert_eq!((from.as_str(), to.as_str()), ("m1", "m2"));
            assert!(reason.contains("500"), "{reason}");
        }
        other => panic!("expected a fallback notice last, got {other:?}"),
    }
    // Exponential: each delay at least half of base·2^n and never above the cap.
    let delays = sleeper.delays.lock().unwrap().clone();
    assert_eq!(delays.len(), 3);
    for (n, d) in delays.iter().enumerate() {
        let full = Duration::from_secs(1 << n);
        assert!(*d >= full / 2 && *d <= full, "delay {n} = {d:?}");
    }
    assert_eq!(client.health().status("m1"), Health::Degraded);
    assert_eq!(client.health().status("m2"), Health::Healthy);
}

#[tokio::test]
async fn all_models_failing_reports_llm_failed() {
    let fake = FakeLlm::start().await.unwrap();
    // First attempt + 3 retries each.
    fake.push_for_model("m1", Reply::status(502, 4));
    fake.push_for_model("m2", Reply::status(503, 4));
    let (client, _) = client();
    let chain = [endpoint(&fake.base_url(), "m1"), endpoint(&fake.base_url(), "m2")];
    let r = run(&client, &chain, &user("hi")).await;
    match &r.result {
        Err(LlmError::AllFailed { tried, last_error }) => {
            assert_eq!(tried, &vec!["m1".to_owned(), "m2".to_owned()]);
            assert!(last_error.contains("503"), "{last_error}");
        }
        other => panic!("expected AllFailed, got {other:?}"),
    }
    assert!(matches!(
        r.notices.last(),
        Some(LlmNotice::LlmFailed { tried, .. }) if tried.len() == 2
    ));
    assert_eq!(fake.requests().len(), 8);
    // A second failing round pushes m1 past the Down threshold.
    fake.push_for_model("m1", Reply::status(502, 4));
    let _ = run(&client, &chain[..1], &user("again")).await;
    assert_eq!(client.health().status("m1"), Health::Down);
}

#[tokio::test]
async fn auth_errors_fail_fast_without_fallback() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push_for_model(
        "m1",
        Reply::Status { code: 401, times: 1, retry_after: None, body: Some("bad key".into()) },
    );
    // Bait for a wrong fallback: it must stay queued.
    fake.push_for_model("m2", Reply::text("never asked"));
    fake.allow_leftover_replies();
    let (client, sleeper) = client();
    let mut ep = endpoint(&fake.base_url(), "m1");
    ep.api_key = Some("sk-super-secret".into());
    let chain = [ep, endpoint(&fake.base_url(), "m2")];
    let r = run(&client, &chain, &user("hi")).await;
    match &r.result {
        Err(e @ LlmError::Http { status: 401, .. }) => {
            assert!(!e.to_string().contains("sk-super-secret"));
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    assert_eq!(models(&fake.requests()), vec!["m1"]);
    assert!(sleeper.delays.lock().unwrap().is_empty());
    assert!(matches!(&r.notices[..], [LlmNotice::LlmFailed { .. }]));
}

#[tokio::test]
async fn model_not_found_moves_to_the_next_model_at_once() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push_for_model("gone", Reply::status(404, 1));
    fake.push_for_model("m2", Reply::text("here"));
    let (client, sleeper) = client();
    let chain = [endpoint(&fake.base_url(), "gone"), endpoint(&fake.base_url(), "m2")];
    let r = run(&client, &chain, &user("hi")).await;
    assert_eq!(r.turn().model, "m2");
    assert_eq!(models(&fake.requests()), vec!["gone", "m2"]);
    assert!(sleeper.delays.lock().unwrap().is_empty());
}

#[tokio::test]
async fn dropped_stream_is_retried() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::DropMidStream { partial: "half an ans".into() });
    fake.push(Reply::text("a whole answer"));
    let (client, _) = client();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi")).await;
    assert_eq!(r.turn().content, "a whole answer");
    assert!(
        matches!(&r.notices[..], [LlmNotice::Retrying { reason, .. }] if reason.contains("stream"))
    );
    // The partial text was streamed before the retry; the notice tells a UI to discard it.
    assert_eq!(r.content_deltas(), "half an ansa whole answer");
}

#[tokio::test]
async fn malformed_sse_is_retried() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::MalformedSse);
    fake.push(Reply::text("clean"));
    let (client, _) = client();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi")).await;
    assert_eq!(r.turn().content, "clean");
    assert!(
        matches!(&r.notices[..], [LlmNotice::Retrying { reason, .. }] if reason.contains("malformed"))
    );
}

#[tokio::test]
async fn empty_completion_is_retried() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Empty);
    fake.push(Reply::text("something"));
    let (client, _) = client();
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi")).await;
    assert_eq!(r.turn().content, "something");
    assert_eq!(fake.requests().len(), 2);
}
