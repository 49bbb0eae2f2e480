//! Streaming through the engine: a server that cannot stream replies to requests with tools is
//! asked without streaming for the rest of the engine's life, and `stream: false` on a client.

use skald_core::turn::TurnOutcome;
use skald_testkit::Reply;

use super::turn::Rig;

fn streamed(rig: &Rig) -> Vec<bool> {
    rig.fake.requests().iter().map(|q| q.stream).collect()
}

#[tokio::test]
async fn a_server_that_breaks_streamed_tool_replies_is_asked_plainly_from_then_on() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("notes.txt"), "remember the milk\n").unwrap();
    rig.fake.push(Reply::StreamEndsBeforeDelta {
        error: Some("Automatic streaming tool choice is not supported".into()),
    });
    rig.fake.push(Reply::tool_call("read_file", r#"{"path": "notes.txt"}"#));
    rig.fake.push(Reply::text("It says to remember the milk."));
    let (_, outcome, _) = rig.turn("what do my notes say?").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "It says to remember the milk."),
        "{outcome:?}"
    );
    // The broken stream, its plain retry, then the second round plain straight away.
    assert_eq!(streamed(&rig), [true, false, false]);
    assert!(
        rig.fake
            .requests()
            .iter()
            .all(|q| q.body["tools"].as_array().is_some_and(|t| !t.is_empty()))
    );

    // The next turn's requests go out plain directly: no broken stream first.
    rig.fake.push(Reply::text("Still the milk."));
    let (_, outcome, _) = rig.turn("and now?").await;
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "Still the milk."));
    assert_eq!(streamed(&rig), [true, false, false, false]);
    assert_eq!(rig.fake.pending_replies(), 0);
}

#[tokio::test]
async fn a_client_with_stream_false_is_never_asked_to_stream() {
    let rig = Rig::configured(|url| {
        format!(
            "llm:\n  clients:\n    - name: local\n      base_url: {url}\n      model: fake-model\n      \
             stream: false\n"
        )
    })
    .await;
    rig.fake.push(Reply::text("Plain and simple."));
    let (_, outcome, _) = rig.turn("hello").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "Plain and simple.")
    );
    assert_eq!(streamed(&rig), [false]);
    let view = rig.engine.settings().await.unwrap();
    assert!(!view.clients[0].stream, "the settings page shows it");
}
