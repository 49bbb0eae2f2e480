//! New input while a call waits for a human (decision 44): it is stored as a steer and reaches
//! the model only after the open call is settled — never a fresh turn on top of the parked call,
//! whichever process (or restart) the message comes from.

use std::path::{Path, PathBuf};

use serde_json::Value;
use skald_core::Engine;
use skald_core::engine::{ChatOptions, SendReceipt};
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{DecisionInput, Event};
use skald_testkit::{FakeLlm, RecordedRequest, Reply};

use super::turn::{drain, wait_event};

const SOURCE: &str = "web";
/// The command appends a line each time it runs, so the test can count the runs.
const COUNT_CMD: &str = r#"{"command":"echo ran >> count.txt"}"#;
const STEER: &str = "and then list the directory";

struct Setup {
    dir: tempfile::TempDir,
    work: PathBuf,
    fake: FakeLlm,
}

impl Setup {
    async fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let work = std::fs::canonicalize(&work).unwrap();
        Setup { dir, work, fake: FakeLlm::start().await.unwrap() }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A fresh engine on the data dir: another process, or the app after a restart.
    async fn engine(&self, background: bool) -> Engine {
        super::auto_resume::open(&self.data(), &self.fake, background).await
    }

    /// `skald resume` in a fresh process after the decision: the turn ends with `answer`.
    /// Returns every model request (the parked turn's and the continuation's).
    async fn resume_answering(&self, sid: i64, answer: &str) -> Vec<RecordedRequest> {
        self.fake.push(Reply::text(answer));
        let outcome = self.engine(false).await.resume(sid, ParkMode::Exit).await.unwrap();
        assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == answer));
        let reqs = self.fake.requests();
        assert_eq!(reqs.len(), 2, "one request to park, one after the decision");
        reqs
    }

    fn opts(&self, park_mode: ParkMode) -> ChatOptions {
        ChatOptions { park_mode, workdir: Some(self.work.clone()), ..Default::default() }
    }

    /// `skald chat "count"`: the command parks and the process ends (exit 3). Returns the
    /// session and the parked call.
    async fn park(&self, reply: Reply) -> (i64, i64) {
        let chat = self.engine(false).await;
        self.fake.push(reply);
        let receipt = chat.send_message(SOURCE, "count", self.opts(ParkMode::Exit)).await.unwrap();
        let outcome = chat.wait_turn(receipt.session_id).await.unwrap();
        let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("{outcome:?}") };
        assert_eq!(self.fake.requests().len(), 1);
        (receipt.session_id, tool_call_ids[0])
    }

    fn runs(&self) -> usize {
        std::fs::read_to_string(self.work.join("count.txt")).map_or(0, |s| s.lines().count())
    }
}

fn decision(approved: bool, note: Option<&str>) -> DecisionInput {
    DecisionInput { approved, note: note.map(str::to_string), bypass: None }
}

fn messages(req: &RecordedRequest) -> Vec<Value> {
    req.body["messages"].as_array().cloned().unwrap_or_default()
}

/// The request after the settled call: its tool result (starting with `result`), then the steer
/// as the next user row.
fn settled_then_steer(req: &RecordedRequest, result: &str) {
    let msgs = messages(req);
    let tool_at = msgs.iter().position(|m| m["role"] == "tool").expect("the call's result");
    let content = msgs[tool_at]["content"].as_str().unwrap_or_default();
    assert!(content.starts_with(result), "{msgs:#?}");
    // The dynamic tail (a system message) closes every request; it is not conversation.
    let after: Vec<&Value> = msgs[tool_at + 1..].iter().filter(|m| m["role"] != "system").collect();
    assert_eq!(after.len(), 1, "only the steer follows the result: {msgs:#?}");
    assert_eq!(
        (after[0]["role"].as_str(), after[0]["content"].as_str()),
        (Some("user"), Some(STEER))
    );
    assert!(!req.body.to_string().contains("interrupted"), "{msgs:#?}");
}

/// The message is queued behind the parked call: no turn, no model request, one open steer,
/// and the receipt and the echo both name the call it waits for.
async fn queued(engine: &Engine, s: &Setup, sid: i64, call: i64, mode: ParkMode) -> SendReceipt {
    let mut rx = engine.subscribe();
    let receipt = engine.send_message(SOURCE, STEER, s.opts(mode)).await.unwrap();
    assert_eq!(receipt.session_id, sid);
    assert!(receipt.steered, "a turn started on top of the parked call");
    assert_eq!(engine.wait_turn(sid).await, None, "a turn started on top of the parked call");
    assert_eq!(receipt.waiting_for, [call]);
    let echo = drain(&mut rx, sid);
    assert!(
        matches!(echo.as_slice(), [Event::SteerQueued { content, waiting_for, .. }]
            if content == STEER && *waiting_for == [call]),
        "{echo:?}"
    );
    assert_eq!(s.fake.requests().len(), 1, "the model was asked again while the call waits");
    let store = skald_store::Store::open_in_dir(&s.data()).await.unwrap();
    let open: Vec<String> =
        store.open_steers(sid).await.unwrap().into_iter().map(|st| st.content).collect();
    assert_eq!(open, [STEER]);
    receipt
}

async fn open_steers(data: &Path, sid: i64) -> usize {
    let store = skald_store::Store::open_in_dir(data).await.unwrap();
    store.open_steers(sid).await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_after_chat_parked_waits_and_follows_the_approved_call() {
    let s = Setup::new().await;
    let (sid, call) = s.park(Reply::tool_call("execute_cmd", COUNT_CMD)).await;
    // A second `skald chat` (a fresh process) while the command waits for approval.
    let cli = s.engine(false).await;
    queued(&cli, &s, sid, call, ParkMode::Exit).await;
    assert_eq!(s.runs(), 0);

    cli.decide(call, decision(true, None), "test").await.unwrap();
    let reqs = s.resume_answering(sid, "Ran it, and here is the listing.").await;
    assert_eq!(s.runs(), 1, "the approved command runs exactly once");
    settled_then_steer(&reqs[1], "exit code 0");
    assert_eq!(open_steers(&s.data(), sid).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_after_chat_parked_follows_the_rejection() {
    let s = Setup::new().await;
    let (sid, call) = s.park(Reply::tool_call("execute_cmd", COUNT_CMD)).await;
    let cli = s.engine(false).await;
    queued(&cli, &s, sid, call, ParkMode::Exit).await;

    cli.decide(call, decision(false, Some("not now")), "test").await.unwrap();
    let reqs = s.resume_answering(sid, "Skipped it.").await;
    assert_eq!(s.runs(), 0, "a rejected command never runs");
    settled_then_steer(&reqs[1], "User rejected this tool call. Reason: not now");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_while_a_question_waits_follows_the_answer() {
    let s = Setup::new().await;
    let ask = r#"{"title":"Which?","question":"a or b?","suggested_answers":["a","b"]}"#;
    let (sid, call) = s.park(Reply::tool_call("ask_user_clarification", ask)).await;
    let cli = s.engine(false).await;
    queued(&cli, &s, sid, call, ParkMode::Exit).await;

    cli.answer(call, "b", "test").await.unwrap();
    let reqs = s.resume_answering(sid, "b it is.").await;
    settled_then_steer(&reqs[1], "b");
}

/// The app (or `serve`) restarted while a call was parked: a message typed into the chat waits,
/// and the decision continues the turn by itself with the call first, then the message.
#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_the_app_queues_a_message_and_the_decision_continues_with_it() {
    let s = Setup::new().await;
    let (sid, call) = s.park(Reply::tool_call("execute_cmd", COUNT_CMD)).await;
    let app = s.engine(true).await;
    let mut rx = app.subscribe();
    queued(&app, &s, sid, call, ParkMode::Wait).await;

    s.fake.push(Reply::text("Ran it, and here is the listing."));
    let decided = app.decide(call, decision(true, None), "test").await.unwrap();
    assert!(decided.resumed);
    let mut order = Vec::new();
    while order.last() != Some(&"done") {
        let ev = wait_event(&mut rx, |e| {
            matches!(e, Event::ToolDone { .. } | Event::SteerFolded { .. } | Event::Done { .. })
        })
        .await;
        order.push(match ev {
            Event::ToolDone { tool_call_id, .. } if tool_call_id == call => "call done",
            Event::SteerFolded { .. } => "steer folded",
            Event::Done { .. } => "done",
            other => panic!("{other:?}"),
        });
    }
    assert_eq!(order, ["call done", "steer folded", "done"]);
    assert_eq!(s.runs(), 1);
    let reqs = s.fake.requests();
    assert_eq!(reqs.len(), 2);
    settled_then_steer(&reqs[1], "exit code 0");
}

/// A decision recorded but not yet settled (`skald approve` without `skald resume`): a new
/// message settles the call first — it runs once — and then reaches the model.
#[tokio::test(flavor = "multi_thread")]
async fn a_message_after_an_unsettled_decision_settles_the_call_first() {
    let s = Setup::new().await;
    let (sid, call) = s.park(Reply::tool_call("execute_cmd", COUNT_CMD)).await;
    s.engine(false).await.decide(call, decision(true, None), "test").await.unwrap();

    let cli = s.engine(false).await;
    s.fake.push(Reply::text("Ran it, and here is the listing."));
    let receipt = cli.send_message(SOURCE, STEER, s.opts(ParkMode::Exit)).await.unwrap();
    assert_eq!((receipt.session_id, receipt.waiting_for.len()), (sid, 0), "nothing waits");
    let outcome = cli.wait_turn(receipt.session_id).await.expect("the session is continued");
    assert!(matches!(&outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(s.runs(), 1);
    let reqs = s.fake.requests();
    assert_eq!(reqs.len(), 2);
    settled_then_steer(&reqs[1], "exit code 0");
}
