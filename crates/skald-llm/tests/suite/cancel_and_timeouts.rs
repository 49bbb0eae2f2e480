//! Cancellation (in flight and during backoff), request timeouts and the idle-stream timeout.

use std::time::{Duration, Instant};

use skald_llm::{CancellationToken, HealthTracker, LlmClient, LlmError, LlmSettings, TokioSleeper};
use skald_testkit::{FakeLlm, Reply};

use super::raw_server::{Step, send, serve, sse_headers};
use super::support::{client_with, endpoint, run, run_with_cancel, settings, user};

async fn wait_until(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn cancel_during_a_stalled_call_returns_promptly_and_closes_the_request() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Stall { ms: 60_000, then_hang: true });
    let (client, _) = client_with(settings());
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let ep = endpoint(&fake.base_url(), "m1");
    let started = std::sync::Arc::new(std::sync::Mutex::new(None::<Instant>));
    let started2 = started.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        *started2.lock().unwrap() = Some(Instant::now());
        trigger.cancel();
    });
    let r = run_with_cancel(&client, &[ep], &user("hi"), cancel).await;
    let took = started.lock().unwrap().map(|t| t.elapsed()).unwrap_or_default();
    assert!(matches!(r.result, Err(LlmError::Cancelled)), "{:?}", r.result);
    assert!(took < Duration::from_secs(1), "cancel took {took:?}");
    assert!(r.notices.is_empty(), "a cancel is not a failure: {:?}", r.notices);
    assert_eq!(fake.requests().len(), 1, "the request reached the server");
    // The server sees the connection go away: its handler ends.
    assert!(wait_until(|| fake.in_flight() == 0).await, "request still in flight at the server");
    assert_eq!(client.health().consecutive_failures("m1"), 0);
}

#[tokio::test]
async fn cancel_during_a_backoff_sleep_returns_promptly() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::status(503, 5));
    let slow = LlmSettings { backoff_base: Duration::from_secs(20), ..settings() };
    let client = LlmClient::with_parts(
        slow,
        std::sync::Arc::new(HealthTracker::new()),
        std::sync::Arc::new(TokioSleeper),
    )
    .unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let t0 = Instant::now();
    let r =
        run_with_cancel(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi"), cancel).await;
    assert!(matches!(r.result, Err(LlmError::Cancelled)));
    assert!(t0.elapsed() < Duration::from_secs(5), "waited out the backoff: {:?}", t0.elapsed());
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_that_goes_silent_hits_the_idle_timeout_and_is_retried() {
    let chunk = "data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n";
    let url = serve(vec![sse_headers(), send(chunk), Step::Hang]).await;
    let s = LlmSettings { idle_timeout: Duration::from_millis(300), max_retries: 1, ..settings() };
    let (client, sleeper) = client_with(s);
    let t0 = Instant::now();
    let r = run(&client, &[endpoint(&url, "m1")], &user("hi")).await;
    match &r.result {
        Err(LlmError::AllFailed { last_error, .. }) => {
            assert!(last_error.contains("idle"), "{last_error}")
        }
        other => panic!("expected an idle timeout, got {other:?}"),
    }
    assert_eq!(sleeper.delays.lock().unwrap().len(), 1, "idle timeouts are retried");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_lively_stream_longer_than_the_idle_timeout_completes() {
    let mut steps = vec![sse_headers()];
    for i in 0..6 {
        steps.push(send(&format!(
            "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{i}\"}}}}]}}\n\n"
        )));
        steps.push(Step::Sleep(Duration::from_millis(200)));
    }
    steps.push(send(
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    ));
    let url = serve(steps).await;
    let s = LlmSettings { idle_timeout: Duration::from_millis(700), ..settings() };
    let (client, _) = client_with(s);
    let r = run(&client, &[endpoint(&url, "m1")], &user("hi")).await;
    assert_eq!(r.turn().content, "012345");
}

#[tokio::test]
async fn no_response_headers_hits_the_request_timeout() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::Stall { ms: 60_000, then_hang: true });
    let s =
        LlmSettings { request_timeout: Duration::from_millis(300), max_retries: 0, ..settings() };
    let (client, _) = client_with(s);
    let r = run(&client, &[endpoint(&fake.base_url(), "m1")], &user("hi")).await;
    match &r.result {
        Err(LlmError::AllFailed { last_error, .. }) => {
            assert!(last_error.contains("timed out"), "{last_error}")
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_and_falls_back() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("backup"));
    // Bind then drop to get a port nobody listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let s = LlmSettings { max_retries: 1, ..settings() };
    let (client, _) = client_with(s);
    let chain = [endpoint(&format!("http://{dead}/v1"), "dead"), endpoint(&fake.base_url(), "m2")];
    let r = run(&client, &chain, &user("hi")).await;
    assert_eq!(r.turn().model, "m2");
    assert!(r.notices.iter().any(|n| matches!(n,
        skald_llm::LlmNotice::ModelFallback { reason, .. } if reason.contains("connection failed"))));
}
