//! Cancellation (in flight and during backoff), request timeouts and the idle-stream timeout.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use skald_llm::{CancellationToken, HealthTracker, LlmClient, LlmError, LlmSettings, Sleeper};
use skald_testkit::{FakeLlm, HANG_GUARD, Reply};
use tokio::sync::Notify;

use super::raw_server::{Step, send, serve, sse_headers};
use super::support::{client_with, endpoint, run, run_with_cancel, settings, user};

/// Sleeps for real and says when a sleep starts, so a test can act during the backoff.
#[derive(Default)]
struct SignallingSleeper {
    started: Notify,
}

impl Sleeper for SignallingSleeper {
    fn sleep(&self, delay: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>> {
        self.started.notify_one();
        Box::pin(tokio::time::sleep(delay))
    }
}

#[tokio::test]
async fn cancel_during_a_stalled_call_returns_cancelled_and_closes_the_request() {
    let fake = FakeLlm::start().await.unwrap();
    // The server never answers: only the cancel can end the call before the request timeout,
    // which would be a different error. (How fast a stop is: the `stop` bench of skald-core.)
    fake.push(Reply::Stall { ms: 60_000, then_hang: true });
    let (client, _) = client_with(settings());
    let cancel = CancellationToken::new();
    let (chain, request) = ([endpoint(&fake.base_url(), "m1")], user("hi"));
    let cancel_once_in_flight = async {
        fake.wait_in_flight(1).await;
        cancel.cancel();
    };
    let call = run_with_cancel(&client, &chain, &request, cancel.clone());
    let (r, ()) =
        tokio::time::timeout(HANG_GUARD, async { tokio::join!(call, cancel_once_in_flight) })
            .await
            .expect("the cancel did not end the call");
    assert!(matches!(r.result, Err(LlmError::Cancelled)), "{:?}", r.result);
    assert!(r.notices.is_empty(), "a cancel is not a failure: {:?}", r.notices);
    assert_eq!(fake.requests().len(), 1, "the request reached the server");
    // The server sees the connection go away: its handler ends.
    fake.wait_in_flight(0).await;
    assert_eq!(client.health().consecutive_failures("m1"), 0);
}

#[tokio::test]
async fn cancel_during_a_backoff_sleep_returns_cancelled() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::status(503, 1));
    // An hour's backoff: only the cancel can end it within the test.
    let hour = Duration::from_secs(3600);
    let slow = LlmSettings { backoff_base: hour, backoff_cap: hour, ..settings() };
    let sleeper = Arc::new(SignallingSleeper::default());
    let client =
        LlmClient::with_parts(slow, Arc::new(HealthTracker::new()), sleeper.clone()).unwrap();
    let cancel = CancellationToken::new();
    let cancel_in_backoff = async {
        sleeper.started.notified().await;
        cancel.cancel();
    };
    let (chain, request) = ([endpoint(&fake.base_url(), "m1")], user("hi"));
    let call = run_with_cancel(&client, &chain, &request, cancel.clone());
    let (r, ()) = tokio::time::timeout(HANG_GUARD, async { tokio::join!(call, cancel_in_backoff) })
        .await
        .expect("the backoff was waited out");
    assert!(matches!(r.result, Err(LlmError::Cancelled)), "{:?}", r.result);
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_that_goes_silent_hits_the_idle_timeout_and_is_retried() {
    let chunk = "data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n";
    let url = serve(vec![sse_headers(), send(chunk), Step::Hang]).await;
    let s = LlmSettings { idle_timeout: Duration::from_millis(300), max_retries: 1, ..settings() };
    let (client, sleeper) = client_with(s);
    let r = tokio::time::timeout(HANG_GUARD, run(&client, &[endpoint(&url, "m1")], &user("hi")))
        .await
        .expect("the silent stream was never given up");
    match &r.result {
        Err(LlmError::AllFailed { last_error, .. }) => {
            assert!(last_error.contains("idle"), "{last_error}")
        }
        other => panic!("expected an idle timeout, got {other:?}"),
    }
    assert_eq!(sleeper.delays.lock().unwrap().len(), 1, "idle timeouts are retried");
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
    // A key in the URL's query must not reach the message; the server it tried must.
    let dead_url = format!("http://{dead}/v1?key=SECRET-IN-URL");
    let chain = [endpoint(&dead_url, "dead"), endpoint(&fake.base_url(), "m2")];
    let r = run(&client, &chain, &user("hi")).await;
    assert_eq!(r.turn().model, "m2");
    let reason = r
        .notices
        .iter()
        .find_map(|n| match n {
            skald_llm::LlmNotice::ModelFallback { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .expect("a fallback notice");
    assert!(reason.contains("connection failed"), "{reason}");
    assert!(reason.contains(&format!("http://{dead}")), "names the server it tried: {reason}");
    assert!(!reason.contains("SECRET-IN-URL"), "{reason}");
}
