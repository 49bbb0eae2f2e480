//! The agent turn end to end: a real engine on a temp data dir against the strict fake provider
//! over loopback HTTP — tool rounds, retries and fallback, malformed model output, the round
//! limit, `/stop` (model call and child process), and steering.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skald_core::config::{EnvOverrides, MemorySecrets};
use skald_core::engine::{ChatOptions, SendReceipt};
use skald_core::turn::TurnOutcome;
use skald_core::{Engine, EngineOptions};
use skald_protocol::{DebugMessage, Event, EventEnvelope, ToolStatus, TurnEnd};
use skald_testkit::{FakeLlm, RecordedRequest, Reply, eventually};
use tokio::sync::broadcast;

const SOURCE: &str = "test";

/// A data dir, a working directory and an engine wired to a fake provider.
pub struct Rig {
    pub dir: tempfile::TempDir,
    pub work: PathBuf,
    pub fake: FakeLlm,
    pub engine: Engine,
}

impl Rig {
    /// The env-defined client (`fake-model`) plus `extra_yaml` as the whole `config.yml`.
    pub async fn new(extra_yaml: &str) -> Rig {
        let fake = FakeLlm::start().await.unwrap();
        let env = fake_env(&fake);
        Rig::open(fake, env, |_| extra_yaml.to_string()).await
    }

    /// Two configured clients on the same fake: `primary` (`fake-model`) first, then `backup`
    /// (`fake-model-2`); no env client.
    pub async fn two_models() -> Rig {
        let fake = FakeLlm::start().await.unwrap();
        Rig::open(fake, EnvOverrides::default(), |url| {
            format!(
                "llm:\n  clients:\n    - name: primary\n      base_url: {url}\n      model: \
                 fake-model\n    - name: backup\n      base_url: {url}\n      model: fake-model-2\n"
            )
        })
        .await
    }

    /// No env client; `config` (given the fake's base URL) is the whole `config.yml`.
    pub async fn configured(config: impl FnOnce(&str) -> String) -> Rig {
        let fake = FakeLlm::start().await.unwrap();
        Rig::open(fake, EnvOverrides::default(), config).await
    }

    async fn open(fake: FakeLlm, env: EnvOverrides, config: impl FnOnce(&str) -> String) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let work = std::fs::canonicalize(&work).unwrap();
        std::fs::write(data.join("config.yml"), config(&fake.base_url())).unwrap();
        let engine = open_engine(&data, env).await;
        Rig { dir, work, fake, engine }
    }

    pub fn opts(&self) -> ChatOptions {
        ChatOptions { workdir: Some(self.work.clone()), approve_all: true, ..Default::default() }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Sends a message that starts a turn and waits for it; returns the outcome and every event
    /// of the session emitted meanwhile.
    pub async fn turn(&self, text: &str) -> (i64, TurnOutcome, Vec<Event>) {
        let mut rx = self.engine.subscribe();
        let receipt = self.engine.send_message(SOURCE, text, self.opts()).await.unwrap();
        let (sid, outcome) = finish(&self.engine, receipt).await;
        (sid, outcome, drain(&mut rx, sid))
    }

    pub async fn store(&self) -> skald_store::Store {
        skald_store::Store::open_in_dir(&self.data_dir()).await.unwrap()
    }
}

/// The env-defined client `fake-model` on `fake`.
pub fn fake_env(fake: &FakeLlm) -> EnvOverrides {
    EnvOverrides {
        base_url: Some(fake.base_url()),
        model: Some("fake-model".into()),
        api_key: None,
    }
}

/// An engine on `data` with in-memory secrets (so no test touches the OS keychain).
pub async fn open_engine(data: &Path, env: EnvOverrides) -> Engine {
    Engine::open(EngineOptions {
        data_dir: Some(data.to_path_buf()),
        env: Some(env),
        secrets: Some(Arc::new(MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap()
}

pub async fn finish(engine: &Engine, receipt: SendReceipt) -> (i64, TurnOutcome) {
    assert!(!receipt.steered, "expected a new turn, got a steer");
    let waited = engine.wait_turn(receipt.session_id);
    let outcome = tokio::time::timeout(Duration::from_secs(30), waited).await.expect("turn hung");
    (receipt.session_id, outcome.expect("no turn ran"))
}

pub fn drain(rx: &mut broadcast::Receiver<EventEnvelope>, sid: i64) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if ev.session_id == Some(sid) {
            out.push(ev.event);
        }
    }
    out
}

/// Waits (bounded) for an event matching `pred` and returns it.
pub async fn wait_event(
    rx: &mut broadcast::Receiver<EventEnvelope>,
    mut pred: impl FnMut(&Event) -> bool,
) -> Event {
    let fut = async {
        loop {
            let ev = rx.recv().await.unwrap();
            if pred(&ev.event) {
                return ev.event;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), fut).await.expect("event never came")
}

/// A tool command that runs until the test creates `go` in the workdir, so the test acts while
/// a tool surely runs (no guessing how long a `sleep` takes).
const UNTIL_GO: &str = r#"{"command": "until [ -e go ]; do sleep 0.01; done"}"#;

fn name(ev: &Event) -> &'static str {
    match ev {
        Event::UserMessage { .. } => "user_message",
        Event::TurnRunning { .. } => "turn_running",
        Event::TokenDelta { .. } => "token_delta",
        Event::Thinking { .. } => "thinking",
        Event::ToolStart { .. } => "tool_start",
        Event::ToolDone { .. } => "tool_done",
        Event::ToolError { .. } => "tool_error",
        Event::ToolCancelled { .. } => "tool_cancelled",
        Event::FileChanged { .. } => "file_changed",
        Event::ModelFallback { .. } => "model_fallback",
        Event::LlmFailed { .. } => "llm_failed",
        Event::Done { .. } => "done",
        Event::TurnEnded { .. } => "turn_ended",
        Event::SessionsChanged {} => "sessions_changed",
        Event::BypassesChanged {} => "bypasses_changed",
        _ => "other",
    }
}

/// Event names of the turn itself: without the streamed deltas, the running flag, the
/// session-list notice of a session created by the message and the rig's `approve_all` bypass.
fn names(events: &[Event]) -> Vec<&'static str> {
    events
        .iter()
        .map(name)
        .filter(|n| {
            !matches!(*n, "token_delta" | "turn_running" | "sessions_changed" | "bypasses_changed")
        })
        .collect()
}

fn messages(req: &RecordedRequest) -> Vec<Value> {
    req.body["messages"].as_array().cloned().unwrap_or_default()
}

fn text_of(msg: &Value) -> String {
    match &msg["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

/// The tool results (role `tool`) of a request, in order.
fn tool_results(req: &RecordedRequest) -> Vec<String> {
    messages(req).iter().filter(|m| m["role"] == "tool").map(text_of).collect()
}

fn tool_rows(detail: &skald_protocol::SessionDetail) -> Vec<(String, ToolStatus, String)> {
    detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::Tool { name, status, result, .. } => {
                Some((name.clone(), *status, result.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .collect()
}

fn args(v: Value) -> String {
    v.to_string()
}

#[tokio::test]
async fn a_multi_round_tool_turn_reads_writes_and_answers_with_every_step_recorded() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("in.txt"), "hello from disk\n").unwrap();
    rig.fake.push(Reply::tool_call("read_file", &args(json!({"path": "in.txt"}))));
    rig.fake.push(Reply::tool_call(
        "write_file",
        &args(json!({"path": "out.txt", "content": "copied: hello from disk\n"})),
    ));
    rig.fake.push(Reply::text("I copied the file."));

    let (sid, outcome, events) = rig.turn("copy in.txt to out.txt").await;

    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "I copied the file."),
        "{outcome:?}"
    );
    assert_eq!(
        std::fs::read_to_string(rig.work.join("out.txt")).unwrap(),
        "copied: hello from disk\n"
    );
    assert_eq!(
        names(&events),
        [
            "user_message",
            "thinking",
            "tool_start",
            "tool_done",
            "thinking",
            "tool_start",
            "tool_done",
            "file_changed",
            "done",
            "turn_ended"
        ],
        "{events:#?}"
    );
    assert!(matches!(events.last(), Some(Event::TurnRunning { running: false })));
    let Some(Event::FileChanged { path, tool_call_id, diff }) =
        events.iter().find(|e| matches!(e, Event::FileChanged { .. }))
    else {
        unreachable!()
    };
    assert!(path.ends_with("out.txt"), "{path}");
    // What the write did travels with the event: a new file of one line.
    assert_eq!(diff.kind, skald_protocol::DiffKind::Create, "{diff:?}");
    assert_eq!((diff.added, diff.removed), (1, 0));
    assert!(diff.unified.contains("+copied: hello from disk"), "{}", diff.unified);
    assert_eq!(diff.path, "out.txt", "named relative to the working directory");

    // The model saw the file content, then the write confirmation.
    let reqs = rig.fake.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs.iter().all(|r| r.validation_error.is_none()));
    assert!(tool_results(&reqs[1])[0].contains("hello from disk"), "{:?}", tool_results(&reqs[1]));
    assert_eq!(tool_results(&reqs[2]).len(), 2);

    let detail = rig.engine.session_detail(sid).await.unwrap();
    let kinds: Vec<&str> = detail
        .messages
        .iter()
        .map(|m| match m {
            DebugMessage::User { .. } => "user",
            DebugMessage::Thinking { .. } => "thinking",
            DebugMessage::Assistant { .. } => "assistant",
            DebugMessage::Tool { .. } => "tool",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["user", "thinking", "tool", "thinking", "tool", "assistant"]);
    let tools = tool_rows(&detail);
    assert_eq!(tools[0].0, "read_file");
    assert_eq!(tools[1].0, "write_file");
    assert!(tools.iter().all(|t| t.1 == ToolStatus::Done), "{tools:?}");
    assert!(matches!(&detail.messages[5],
        DebugMessage::Assistant { content, .. } if content == "I copied the file."));
    // Reloaded calls carry the label they had live, not just the tool's name.
    let live: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolStart { label_full, .. } => Some(label_full.as_str()),
            _ => None,
        })
        .collect();
    let stored: Vec<&str> = detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::Tool { label, .. } => Some(label.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(stored, live);
    assert_eq!(stored, ["read_file in.txt", "write_file out.txt"]);
    // The write's change is recorded with its call; the read changed nothing.
    let diffs: Vec<(i64, Option<&skald_protocol::FileDiff>)> = detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::Tool { tool_call_id, diff, .. } => Some((*tool_call_id, diff.as_ref())),
            _ => None,
        })
        .collect();
    assert!(diffs[0].1.is_none(), "{diffs:?}");
    assert_eq!(diffs[1], (*tool_call_id, Some(diff)));
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_as_the_server_asks_then_the_answer_arrives() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::Status { code: 429, times: 1, retry_after: Some(1), body: None });
    rig.fake.push(Reply::text("after the wait"));
    let started = Instant::now();
    let (_, outcome, events) = rig.turn("hi").await;
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "after the wait"));
    // A lower bound only: a sleep never ends early, so this fails only when the wait was skipped.
    assert!(started.elapsed() >= Duration::from_millis(900), "Retry-After: 1 was not honoured");
    assert_eq!(rig.fake.requests().len(), 2);
    assert!(events.contains(&Event::TurnEnded { outcome: outcome.end() }));
    assert!(matches!(outcome.end(), TurnEnd::Final { .. }), "{outcome:?}");
}

#[tokio::test]
async fn a_failing_model_falls_back_to_the_next_with_an_event_and_the_turn_stays_there() {
    let rig = Rig::two_models().await;
    // First attempt + 3 retries, all 500; `Retry-After: 0` keeps the test fast.
    rig.fake.push_for_model(
        "fake-model",
        Reply::Status { code: 500, times: 4, retry_after: Some(0), body: None },
    );
    rig.fake.push_for_model("fake-model-2", Reply::tool_call("list_dir", r#"{"path": "."}"#));
    rig.fake.push_for_model("fake-model-2", Reply::text("from the backup"));
    let (_, outcome, events) = rig.turn("hi").await;
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "from the backup"));
    let fallback = events.iter().find_map(|e| match e {
        Event::ModelFallback { from, to, reason } => Some((from, to, reason)),
        _ => None,
    });
    let (from, to, reason) = fallback.expect("no model_fallback event");
    assert_eq!((from.as_str(), to.as_str()), ("primary", "backup"));
    assert!(reason.contains("500"), "{reason}");
    let models: Vec<String> =
        rig.fake.requests().iter().map(|r| r.model.clone().unwrap_or_default()).collect();
    // The second round goes straight to the backup instead of retrying the broken model.
    assert_eq!(
        models,
        ["fake-model", "fake-model", "fake-model", "fake-model", "fake-model-2", "fake-model-2"]
    );
}

#[tokio::test]
async fn a_model_that_keeps_failing_goes_last_in_later_turns() {
    let rig = Rig::two_models().await;
    for turn in 0..2 {
        // Every attempt (first + 3 retries) fails: health is engine-wide, so the failures add up.
        rig.fake.push_for_model(
            "fake-model",
            Reply::Status { code: 500, times: 4, retry_after: Some(0), body: None },
        );
        rig.fake.push_for_model("fake-model-2", Reply::text(&format!("backup {turn}")));
        let (_, outcome, _) = rig.turn("hi").await;
        assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    }
    let before = rig.fake.requests().len();
    rig.fake.push_for_model("fake-model-2", Reply::text("straight to the backup"));
    let (_, outcome, events) = rig.turn("again").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "straight to the backup")
    );
    let models: Vec<String> =
        rig.fake.requests()[before..].iter().map(|r| r.model.clone().unwrap_or_default()).collect();
    assert_eq!(models, ["fake-model-2"], "the down model is not tried first any more");
    assert!(!events.iter().any(|e| matches!(e, Event::ModelFallback { .. })), "{events:#?}");
}

#[tokio::test]
async fn when_every_model_fails_the_turn_reports_it_and_the_session_stays_usable() {
    let rig = Rig::two_models().await;
    for model in ["fake-model", "fake-model-2"] {
        rig.fake.push_for_model(
            model,
            Reply::Status { code: 503, times: 4, retry_after: Some(0), body: None },
        );
    }
    let (sid, outcome, events) = rig.turn("are you there?").await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }), "{outcome:?}");
    let tried = events.iter().find_map(|e| match e {
        Event::LlmFailed { tried, .. } => Some(tried.clone()),
        _ => None,
    });
    assert_eq!(tried.expect("no llm_failed event"), ["primary", "backup"]);
    assert!(
        matches!(
            events.iter().rev().nth(1),
            Some(Event::TurnEnded { outcome: TurnEnd::Failed { reason } }) if reason.contains("503")
        ),
        "{events:#?}"
    );

    rig.fake.push(Reply::text("back again"));
    let (sid2, outcome, _) = rig.turn("now?").await;
    assert_eq!(sid, sid2);
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "back again"));
    // The unanswered prompt is kept but marked failed, so the model is not asked it twice.
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let users: Vec<(String, bool)> = detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::User { content, failed, .. } => Some((content.clone(), *failed)),
            _ => None,
        })
        .collect();
    assert_eq!(users, [("are you there?".to_string(), true), ("now?".to_string(), false)]);
    let last = rig.fake.requests().pop().unwrap();
    assert!(!messages(&last).iter().any(|m| text_of(m).contains("are you there?")));
}

#[tokio::test]
async fn a_stream_dropped_mid_reply_is_retried_and_the_answer_is_stored_once() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::DropMidStream { partial: "Hel".into() });
    rig.fake.push(Reply::text("Hello in full"));
    let (sid, outcome, events) = rig.turn("greet me").await;
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "Hello in full"));
    assert_eq!(rig.fake.requests().len(), 2);
    let done: Vec<&Event> = events.iter().filter(|e| matches!(e, Event::Done { .. })).collect();
    assert_eq!(done.len(), 1);
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let answers: Vec<&str> = detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::Assistant { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(answers, ["Hello in full"]);
}

#[tokio::test]
async fn invalid_tool_arguments_go_back_to_the_model_as_an_error_it_can_correct() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("notes.txt"), "the notes\n").unwrap();
    rig.fake.push(Reply::tool_call("read_file", "{not json"));
    rig.fake.push(Reply::tool_call("read_file", r#"{"path": "notes.txt"}"#));
    rig.fake.push(Reply::text("read it"));
    let (sid, outcome, events) = rig.turn("read notes.txt").await;
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "read it"));
    let err = events.iter().find_map(|e| match e {
        Event::ToolError { error, .. } => Some(error.clone()),
        _ => None,
    });
    assert!(err.expect("no tool_error").contains("not valid JSON"));
    let reqs = rig.fake.requests();
    let first = tool_results(&reqs[1]);
    assert_eq!(first.len(), 1);
    assert!(first[0].starts_with("Error:") && first[0].contains("JSON"), "{first:?}");
    // The broken call is echoed back verbatim-safe: the strict server accepted the request.
    assert!(reqs.iter().all(|r| r.validation_error.is_none()));
    assert!(tool_results(&reqs[2])[1].contains("the notes"));
    let statuses: Vec<ToolStatus> =
        tool_rows(&rig.engine.session_detail(sid).await.unwrap()).iter().map(|t| t.1).collect();
    assert_eq!(statuses, [ToolStatus::Failed, ToolStatus::Done]);
}

#[tokio::test]
async fn a_write_that_cannot_apply_is_answered_at_once_instead_of_waiting_for_a_human() {
    let rig = Rig::new("").await;
    std::fs::write(rig.work.join("main.rs"), "fn main() {\n    run();\n}\n").unwrap();
    // Wrong argument names, then text that is not in the file: neither can ever run.
    rig.fake.push(Reply::tool_call(
        "edit_file",
        &args(json!({"path": "main.rs", "old_string": "    run", "new_string": "\trun"})),
    ));
    rig.fake.push(Reply::tool_call(
        "edit_file",
        &args(json!({"path": "main.rs", "old": "  walk", "new": "\twalk"})),
    ));
    rig.fake.push(Reply::text("I could not apply the edit."));
    let mut rx = rig.engine.subscribe();
    // Approvals on: a call that reached the gate would wait in the inbox and the turn would hang.
    let opts = ChatOptions { approve_all: false, ..rig.opts() };
    let receipt = rig.engine.send_message(SOURCE, "indent main.rs", opts).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "I could not apply the edit."),
        "{outcome:?}"
    );
    let events = drain(&mut rx, sid);
    assert!(!events.iter().any(|e| matches!(e, Event::ApprovalRequested { .. })), "{events:#?}");
    assert_eq!(rig.engine.inbox().await.unwrap().total, 0);
    let reqs = rig.fake.requests();
    let first = tool_results(&reqs[1]);
    assert!(first[0].contains("`old` is required"), "{first:?}");
    assert!(first[0].contains("`old_string` is not an argument"), "{first:?}");
    let second = tool_results(&reqs[2]);
    assert!(second[1].starts_with("Error:") && second[1].contains("not found"), "{second:?}");
    assert_eq!(
        std::fs::read_to_string(rig.work.join("main.rs")).unwrap(),
        "fn main() {\n    run();\n}\n"
    );
}

#[tokio::test]
async fn with_a_known_context_window_old_turns_stay_in_the_request_instead_of_being_cut() {
    // Without an `llm.compaction` block: a known window turns compaction on (the summariser
    // owns the budget), so the count cap no longer drops the session's first turns.
    let with_window = |window: &'static str| {
        move |url: &str| {
            format!(
                "llm:\n  max_history_messages: 4\n  clients:\n    - name: main\n      \
                 base_url: {url}\n      model: fake-model\n{window}"
            )
        }
    };
    for (window, first_turn_kept) in [("      context_window: 100000\n", true), ("", false)] {
        let rig = Rig::configured(with_window(window)).await;
        for i in 0..4 {
            rig.fake.push(Reply::text(&format!("answer {i}")));
            let (_, outcome, _) = rig.turn(&format!("question {i}")).await;
            assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
        }
        let last = rig.fake.requests().pop().unwrap();
        let texts: Vec<String> = messages(&last).iter().map(text_of).collect();
        assert!(texts.iter().any(|t| t == "question 3"), "{texts:?}");
        assert_eq!(
            texts.iter().any(|t| t == "question 0"),
            first_turn_kept,
            "window {window:?}: {texts:?}"
        );
    }
}

#[tokio::test]
async fn session_usage_reports_the_last_request_the_window_and_the_spend() {
    let rig = Rig::configured(|url| {
        format!(
            "llm:\n  clients:\n    - name: main\n      base_url: {url}\n      model: fake-model\n      \
             context_window: 100000\n"
        )
    })
    .await;
    let reply = |text: &str, prompt, completion| Reply::Text {
        content: text.into(),
        reasoning: None,
        usage: Some(skald_testkit::Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cost: None,
        }),
    };
    rig.fake.push(reply("one", 1234, 56));
    let (sid, _, _) = rig.turn("first").await;
    rig.fake.push(reply("two", 2000, 70));
    rig.turn("second").await;
    let u = rig.engine.session_usage(sid).await.unwrap();
    assert_eq!((u.last_input_tokens, u.last_output_tokens), (Some(2000), Some(70)));
    assert_eq!(u.context_window, Some(100_000));
    assert_eq!(u.model.as_deref(), Some("main"));
    assert_eq!((u.input_tokens_total, u.output_tokens_total, u.replies), (3234, 126, 2));
    assert_eq!((u.cost_usd, u.priced_replies), (None, 0), "the fake reports no prices");

    // A reply a provider priced (as OpenRouter does) counts; the unpriced ones stay visible.
    let store = rig.store().await;
    let root = store.root_frame(sid).await.unwrap();
    store
        .append_message(&skald_store::repo::history::NewMessage {
            stack_id: root.id,
            role: Some(skald_store::repo::history::Role::Assistant),
            content: "priced".into(),
            cost: Some(0.0125),
            ..Default::default()
        })
        .await
        .unwrap();
    let u = rig.engine.session_usage(sid).await.unwrap();
    assert_eq!((u.cost_usd, u.priced_replies, u.replies), (Some(0.0125), 1, 3));
    // The newest reply without usage does not hide the last reported one.
    assert_eq!(u.last_input_tokens, Some(2000));

    // Four short messages leave nothing worth summarising.
    let r = rig.engine.compact_session(sid, Some("focus".into())).await.unwrap();
    assert!(!r.compacted, "{r:?}");
    assert!(rig.engine.session_usage(424_242).await.is_err(), "an unknown session is an error");

    // `/resettools` revokes what the session's agents activated, and only that session's.
    store.grant_session_tool_group(sid, "github").await.unwrap();
    store.grant_session_tool_group(sid, "config").await.unwrap();
    store.grant_session_tool_group(sid, "github").await.unwrap();
    let other = rig.engine.new_session("elsewhere").await.unwrap();
    store.grant_session_tool_group(other, "github").await.unwrap();
    assert_eq!(rig.engine.reset_tool_groups(sid).await.unwrap(), 2);
    assert!(store.session_tool_groups(sid).await.unwrap().is_empty());
    assert_eq!(rig.engine.reset_tool_groups(sid).await.unwrap(), 0);
    assert_eq!(store.session_tool_groups(other).await.unwrap(), ["github"]);
    assert!(rig.engine.reset_tool_groups(424_242).await.is_err());
}

#[tokio::test]
async fn an_unknown_tool_name_is_answered_with_the_available_tools() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::tool_call("summon_dragon", "{}"));
    rig.fake.push(Reply::text("sorry, no dragons"));
    let (_, outcome, events) = rig.turn("do magic").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "sorry, no dragons")
    );
    assert!(events.iter().any(|e| matches!(e, Event::ToolError { .. })));
    let results = tool_results(&rig.fake.requests()[1]);
    assert!(results[0].starts_with("Error:"), "{results:?}");
    assert!(results[0].contains("summon_dragon") && results[0].contains("read_file"));
}

#[tokio::test]
async fn the_round_limit_ends_the_turn_as_exhausted_with_an_error() {
    let rig = Rig::new("llm:\n  max_tool_rounds: 3\n").await;
    // The model would go on; the limit stops it with replies left.
    rig.fake.allow_leftover_replies();
    for i in 0..5 {
        rig.fake.push(Reply::tool_call(
            "update_scratchpad",
            &args(json!({"key": format!("k{i}"), "value": "v"})),
        ));
    }
    let (_, outcome, events) = rig.turn("loop forever").await;
    assert_eq!(outcome, TurnOutcome::Exhausted { rounds: 3 });
    // Three rounds, then one request that forbids calls: the model called a tool anyway.
    let requests = rig.fake.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[3].body["tool_choice"], "none");
    assert!(events.contains(&Event::TurnEnded { outcome: TurnEnd::Exhausted { rounds: 3 } }));
    assert!(!events.iter().any(|e| matches!(e, Event::Done { .. })));
    // The call it asked for after its last round never ran.
    let store = rig.store().await;
    let calls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_llm_tools")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(calls, 3);
}

#[tokio::test]
async fn at_the_round_limit_the_model_is_asked_once_more_without_calls_and_answers() {
    let rig = Rig::new("llm:\n  max_tool_rounds: 2\n").await;
    for i in 0..2 {
        rig.fake.push(Reply::tool_call(
            "update_scratchpad",
            &args(json!({"key": format!("k{i}"), "value": "v"})),
        ));
    }
    rig.fake.push(Reply::text("I noted k0 and k1; the rest is undone."));
    let (_, outcome, events) = rig.turn("note many things").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content.contains("undone")),
        "{outcome:?}"
    );
    assert!(events.iter().any(|e| matches!(e, Event::Done { .. })));
    let requests = rig.fake.requests();
    assert_eq!(requests.len(), 3);
    // The same tools are listed (the cached prefix holds); calling them is forbidden, and the
    // last thing the model reads says why.
    assert_eq!(requests[2].body["tools"], requests[1].body["tools"]);
    assert_eq!(requests[1].body["tool_choice"], "auto");
    assert_eq!(requests[2].body["tool_choice"], "none");
    let last = requests[2].body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "system", "{last}");
    assert!(text_of(&last).contains("All 2 tool rounds of this turn are used"), "{last}");
    // An ordinary round's request carries no such note.
    assert!(!requests[1].body.to_string().contains("tool rounds of this turn"));
}

#[tokio::test]
async fn stop_during_a_stalled_model_call_aborts_the_request_and_the_session_goes_on() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::Stall { ms: 30_000, then_hang: true });
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "take your time", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    rig.fake.wait_in_flight(1).await;
    assert!(rig.engine.is_running(sid).await.unwrap());

    // The model never answers, so only the stop can end the turn (`finish` guards the hang; how
    // fast a stop is, is measured by the `stop` benchmark).
    assert!(rig.engine.stop(sid).await.unwrap());
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    // The fake sees the connection close.
    rig.fake.wait_in_flight(0).await;
    let events = drain(&mut rx, sid);
    assert!(events.contains(&Event::TurnEnded { outcome: TurnEnd::Cancelled {} }));
    let stored = rig.engine.session_detail(sid).await.unwrap().turn_ends;
    assert_eq!(stored.last().map(|t| &t.outcome), Some(&TurnEnd::Cancelled {}), "stored too");
    assert!(!rig.engine.is_running(sid).await.unwrap());

    rig.fake.push(Reply::text("normal answer"));
    let (sid2, outcome, _) = rig.turn("and now?").await;
    assert_eq!(sid2, sid);
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "normal answer"));
}

fn process_alive(pid: &str) -> bool {
    // A zombie still has a /proc entry; it is dead for every purpose a user cares about, but it
    // would mean nobody reaped the child, so only a vanished entry counts as gone.
    Path::new("/proc").join(pid).exists()
}

#[cfg(unix)]
#[tokio::test]
async fn stop_during_execute_cmd_kills_the_child() {
    let rig = Rig::new("").await;
    let pidfile = rig.work.join("pid");
    // Sleeps longer than any wait below, so only a kill ends it in time.
    rig.fake.push(Reply::tool_call(
        "execute_cmd",
        &args(json!({"command": format!("echo $$ > {}; exec sleep 600", pidfile.display())})),
    ));
    let receipt = rig.engine.send_message(SOURCE, "sleep", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    let pf = pidfile.clone();
    eventually("the child to start", || {
        std::fs::read_to_string(&pf).is_ok_and(|s| s.ends_with('\n'))
    })
    .await;
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_string();
    assert!(process_alive(&pid));

    rig.engine.stop(sid).await.unwrap();
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    eventually("the child to die", || !process_alive(&pid)).await;
    let tools = tool_rows(&rig.engine.session_detail(sid).await.unwrap());
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].1, ToolStatus::Cancelled);
}

#[tokio::test]
async fn messages_sent_mid_turn_are_echoed_at_once_and_folded_in_after_the_tool_result() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::tool_call("execute_cmd", UNTIL_GO));
    rig.fake.push(Reply::text("handled both"));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "first", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    wait_event(&mut rx, |e| matches!(e, Event::ToolStart { .. })).await;

    let mut queued = Vec::new();
    for text in ["also this", "and that"] {
        let steer = rig.engine.send_message(SOURCE, text, rig.opts()).await.unwrap();
        assert!(steer.steered);
        assert!(steer.waiting_for.is_empty(), "nothing waits for a human");
        assert_eq!(steer.session_id, sid);
        // At once: the echo is out before send_message returns, while the tool still runs.
        let echo = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.event)
            .find(|e| matches!(e, Event::SteerQueued { .. }))
            .expect("no echo by the time send_message returned");
        let Event::SteerQueued { pending_input_id, content, waiting_for } = echo else {
            unreachable!()
        };
        assert_eq!((content.as_str(), waiting_for.len()), (text, 0));
        queued.push(pending_input_id);
    }
    // A reloaded chat sees them as queued too, not yet as messages.
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let pending: Vec<(i64, &str)> =
        detail.pending_inputs.iter().map(|p| (p.id, p.content.as_str())).collect();
    assert_eq!(pending, [(queued[0], "also this"), (queued[1], "and that")]);
    assert!(
        !rig.engine
            .session_detail(sid)
            .await
            .unwrap()
            .messages
            .iter()
            .any(|m| matches!(m, DebugMessage::User { content, .. } if content == "also this"))
    );
    std::fs::write(rig.work.join("go"), "").unwrap();
    let (_, outcome) = finish(&rig.engine, receipt).await;
    // Each pending input is mapped to the history row it became, in order.
    let folded: Vec<(i64, i64)> = drain(&mut rx, sid)
        .into_iter()
        .filter_map(|e| match e {
            Event::SteerFolded { pending_input_id, message_id, .. } => {
                Some((pending_input_id, message_id))
            }
            _ => None,
        })
        .collect();
    let detail = rig.engine.session_detail(sid).await.unwrap();
    assert!(detail.pending_inputs.is_empty());
    let rows: Vec<i64> = detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::User { message_id, content, .. }
                if content == "also this" || content == "and that" =>
            {
                Some(*message_id)
            }
            _ => None,
        })
        .collect();
    assert_eq!(folded, [(queued[0], rows[0]), (queued[1], rows[1])]);
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "handled both"));

    let reqs = rig.fake.requests();
    assert_eq!(reqs.len(), 2);
    let msgs = messages(&reqs[1]);
    let tool_at = msgs.iter().position(|m| m["role"] == "tool").unwrap();
    let after: Vec<&Value> = msgs[tool_at + 1..].iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(after.len(), 1, "steers must coalesce into one user turn: {msgs:#?}");
    let folded = text_of(after[0]);
    assert!(folded.contains("also this") && folded.contains("and that"), "{folded}");
    assert!(folded.find("also this") < folded.find("and that"));
    let steers = rig.store().await.all_steers(sid).await.unwrap();
    assert!(steers.iter().all(|s| s.consumed_message_id.is_some()), "{steers:?}");
}

/// A steer that arrives while the model writes its answer: that answer is saved and closed with
/// `interim_answer` (so a client stops streaming into it), then the steer is folded and answered.
#[tokio::test]
async fn a_steer_sent_while_the_model_answers_closes_that_answer_and_gets_its_own() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::Stall { ms: 1_000, then_hang: false });
    rig.fake.push(Reply::text("the long answer"));
    rig.fake.push(Reply::text("the short answer"));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "tell me", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    rig.fake.wait_in_flight(1).await;
    assert!(rig.engine.send_message(SOURCE, "shorter", rig.opts()).await.unwrap().steered);
    let interim = wait_event(&mut rx, |e| matches!(e, Event::InterimAnswer { .. })).await;
    let Event::InterimAnswer { message_id, content, .. } = interim else { unreachable!() };
    assert_eq!(content, "the long answer");
    // Persist, then emit: the row is there when the event arrives.
    let detail = rig.engine.session_detail(sid).await.unwrap();
    assert!(detail.messages.iter().any(|m| matches!(m,
        DebugMessage::Assistant { message_id: id, content, .. }
            if *id == message_id && content == "the long answer")));
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "the short answer")
    );
    let order: Vec<&str> = drain(&mut rx, sid)
        .iter()
        .map(|e| match e {
            Event::SteerFolded { .. } => "steer_folded",
            Event::InterimAnswer { .. } => "interim_answer",
            other => name(other),
        })
        .filter(|n| matches!(*n, "steer_folded" | "interim_answer" | "done"))
        .collect();
    assert_eq!(order, ["steer_folded", "done"], "one done, for the second answer");
    let last = rig.fake.requests().pop().unwrap();
    let msgs = messages(&last);
    let conversation: Vec<(&str, String)> = msgs
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| (m["role"].as_str().unwrap(), text_of(m)))
        .collect();
    let tail = &conversation[conversation.len() - 2..];
    assert_eq!(tail, [("assistant", "the long answer".into()), ("user", "shorter".into())]);
}

#[tokio::test]
async fn a_steer_does_not_reset_the_round_budget() {
    let rig = Rig::new("llm:\n  max_tool_rounds: 2\n").await;
    // The model would go on; the limit stops it with replies left.
    rig.fake.allow_leftover_replies();
    rig.fake.push(Reply::tool_call("execute_cmd", UNTIL_GO));
    for i in 0..3 {
        rig.fake.push(Reply::tool_call(
            "update_scratchpad",
            &args(json!({"key": format!("k{i}"), "value": "v"})),
        ));
    }
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "work", rig.opts()).await.unwrap();
    wait_event(&mut rx, |e| matches!(e, Event::ToolStart { .. })).await;
    assert!(rig.engine.send_message(SOURCE, "hurry", rig.opts()).await.unwrap().steered);
    std::fs::write(rig.work.join("go"), "").unwrap();
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert_eq!(outcome, TurnOutcome::Exhausted { rounds: 2 });
    // Two rounds and the request after the last (which called a tool anyway).
    assert_eq!(rig.fake.requests().len(), 3);
}

#[tokio::test]
async fn stop_discards_open_steers_and_a_crash_left_steer_seeds_the_next_turn() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::Stall { ms: 30_000, then_hang: true });
    let receipt = rig.engine.send_message(SOURCE, "slow", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    rig.fake.wait_in_flight(1).await;
    assert!(rig.engine.send_message(SOURCE, "never mind", rig.opts()).await.unwrap().steered);
    rig.engine.stop(sid).await.unwrap();
    assert_eq!(finish(&rig.engine, receipt).await.1, TurnOutcome::Cancelled);
    let store = rig.store().await;
    let steers = store.all_steers(sid).await.unwrap();
    assert_eq!(steers.len(), 1);
    assert!(steers[0].discarded_at.is_some() && steers[0].consumed_message_id.is_none());

    // A steer stored by a process that died before folding it.
    store.add_steer(sid, "left over from a crash", None).await.unwrap();
    rig.fake.push(Reply::text("caught up"));
    let (_, outcome, _) = rig.turn("fresh question").await;
    assert!(matches!(&outcome, TurnOutcome::Final { content, .. } if content == "caught up"));
    let last = rig.fake.requests().pop().unwrap();
    let all: String = messages(&last).iter().map(text_of).collect::<Vec<_>>().join("\n");
    let crash = all.find("left over from a crash").expect("crash steer not folded");
    assert!(crash < all.find("fresh question").unwrap());
    assert!(!all.contains("never mind"), "a discarded steer must not reach the model");
    let steers = store.all_steers(sid).await.unwrap();
    assert!(steers[1].consumed_message_id.is_some());
}

/// A message sent the moment a turn reports `done` lands in the gap between the turn's last
/// steer check and the release of its lock; it must still be answered, never left queued.
#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_as_a_turn_ends_is_answered_not_stranded() {
    let rig = Rig::new("").await;
    for i in 0..12 {
        let mut rx = rig.engine.subscribe();
        rig.fake.push(Reply::text(&format!("answer {i}")));
        rig.fake.push(Reply::text(&format!("follow-up answer {i}")));
        let (question, follow_up) = (format!("question {i}"), format!("follow-up {i}"));
        let first = rig.engine.send_message(SOURCE, &question, rig.opts()).await.unwrap();
        wait_event(&mut rx, |e| matches!(e, Event::Done { .. })).await;
        let second = rig.engine.send_message(SOURCE, &follow_up, rig.opts()).await.unwrap();
        let sid = first.session_id;
        // Waits for the run of the first message and whatever ran the second one after it.
        let _ = tokio::time::timeout(Duration::from_secs(10), rig.engine.wait_turn(sid)).await;
        let want = format!("follow-up answer {i}");
        let start = Instant::now();
        loop {
            let detail = rig.engine.session_detail(sid).await.unwrap();
            let answered = detail
                .messages
                .iter()
                .any(|m| matches!(m, DebugMessage::Assistant { content, .. } if *content == want));
            if answered {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "round {i}: follow-up stranded (steered: {}): {:#?} steers {:?}",
                second.steered,
                detail.messages,
                rig.store().await.all_steers(sid).await.unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(rig.store().await.open_steers(sid).await.unwrap().is_empty());
    }
}

/// A session's first prompt names it, once: a later prompt does not rename it, and a name a
/// person gave before the first prompt stays.
#[tokio::test]
async fn the_first_prompt_names_an_unnamed_session() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::text("ok"));
    let (sid, _, events) = rig.turn("  Rename the   parser module\nand its tests").await;
    let title = rig.engine.session_detail(sid).await.unwrap().session.title;
    assert_eq!(title.as_deref(), Some("Rename the parser module"));
    assert!(events.contains(&Event::SessionsChanged {}), "lists are told: {events:?}");
    rig.fake.push(Reply::text("ok"));
    rig.turn("something else").await;
    let title = rig.engine.session_detail(sid).await.unwrap().session.title;
    assert_eq!(title.as_deref(), Some("Rename the parser module"), "named once");

    let named = rig.engine.new_session(SOURCE).await.unwrap();
    rig.engine.rename_session(named, Some("Mine".into())).await.unwrap();
    rig.fake.push(Reply::text("ok"));
    let (sid, _, _) = rig.turn("a prompt").await;
    assert_eq!(sid, named);
    let title = rig.engine.session_detail(named).await.unwrap().session.title;
    assert_eq!(title.as_deref(), Some("Mine"), "a person's name stays");
}
