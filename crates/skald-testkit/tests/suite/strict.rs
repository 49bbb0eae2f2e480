//! The drop check: a test fails when its script was not followed, whatever the client did with
//! the error answer.

use std::panic::{AssertUnwindSafe, catch_unwind};

use skald_testkit::{FakeLlm, FakeLlmOptions, Reply, WhenEmpty};

use super::helpers::*;

/// The panic message of dropping `fake`, or `None` when the drop passed.
fn drop_failure(fake: FakeLlm) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(move || drop(fake))).err()?;
    Some(payload.downcast_ref::<String>().cloned().unwrap_or_else(|| "non-string panic".into()))
}

#[tokio::test]
async fn an_unscripted_request_fails_the_test_with_its_body() {
    let fake = FakeLlm::start().await.unwrap();
    let (status, _) = post_chat(&fake, &chat_body(vec![user("nobody scripted this")])).await;
    assert_eq!(status, 500);
    let failure = drop_failure(fake).expect("the drop check must fail");
    assert!(failure.contains("1 request with no scripted reply queued"), "{failure}");
    assert!(failure.contains("nobody scripted this"), "the body is shown: {failure}");
}

#[tokio::test]
async fn an_echoed_request_still_fails_the_test() {
    let opts = FakeLlmOptions { when_empty: WhenEmpty::Echo, ..FakeLlmOptions::default() };
    let fake = FakeLlm::start_with(opts).await.unwrap();
    let (status, _) = post_chat(&fake, &chat_body(vec![user("echo me")])).await;
    assert_eq!(status, 200);
    let failure = drop_failure(fake).expect("an echo is not a scripted answer");
    assert!(failure.contains("echo me"), "{failure}");
}

#[tokio::test]
async fn leftover_replies_fail_the_test_and_are_named() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("used"));
    fake.push(Reply::text("also never asked for"));
    fake.push_for_model("fake-model-2", Reply::text("never asked for"));
    let (_, json) = post_chat(&fake, &chat_body(vec![user("x")])).await;
    assert_eq!(json["choices"][0]["message"]["content"], "used");
    let failure = drop_failure(fake).expect("the leftovers must fail the test");
    assert!(failure.contains("2 scripted replies never requested"), "{failure}");
    assert!(failure.contains("[for any model]") && failure.contains("also never asked for"));
    assert!(failure.contains("[for fake-model-2]") && failure.contains("\"never asked for\""));
}

#[tokio::test]
async fn a_rejected_request_fails_the_test_with_the_reason() {
    let fake = FakeLlm::start().await.unwrap();
    let (status, _) =
        post_chat(&fake, &chat_body(vec![user("a"), tool_result("ghost", "r")])).await;
    assert_eq!(status, 400);
    let failure = drop_failure(fake).expect("a rejected request must fail the test");
    assert!(failure.contains("1 request rejected as invalid"), "{failure}");
    assert!(failure.contains("rejected because:") && failure.contains("ghost"), "{failure}");
}

#[tokio::test]
async fn a_consumed_script_passes_and_explicit_opt_outs_are_honoured() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("one"));
    post_chat(&fake, &chat_body(vec![user("x")])).await;
    fake.assert_script_consumed();
    assert_eq!(fake.script_report(), None);
    assert_eq!(drop_failure(fake), None);

    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("left on purpose"));
    fake.allow_leftover_replies();
    fake.allow_unscripted_requests();
    fake.allow_rejected_requests();
    post_chat(&fake, &chat_body(vec![user("x")])).await;
    post_chat(&fake, &chat_body(vec![user("y")])).await;
    post_chat(&fake, &chat_body(vec![tool_result("ghost", "r")])).await;
    fake.push(Reply::text("also left"));
    assert_eq!(drop_failure(fake), None);
}

#[tokio::test]
async fn the_check_runs_before_the_end_of_the_test_too() {
    let fake = FakeLlm::start().await.unwrap();
    fake.push(Reply::text("pending"));
    let early = catch_unwind(AssertUnwindSafe(|| fake.assert_script_consumed()));
    assert!(early.is_err(), "a reply still queued fails the explicit check");
    post_chat(&fake, &chat_body(vec![user("x")])).await;
    fake.assert_script_consumed();
}

/// A test that already failed keeps its own message: the drop check does not panic again (which
/// would abort the whole test process).
#[test]
fn a_failing_test_is_not_masked_by_the_check() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeLlm::start()).unwrap();
    fake.push(Reply::text("never used"));
    let failed = std::thread::spawn(move || {
        let _fake = fake;
        panic!("the test's own assertion");
    })
    .join()
    .unwrap_err();
    assert_eq!(failed.downcast_ref::<&str>(), Some(&"the test's own assertion"));
}
