//! The cached context build against the full rebuild: a property test over random session logs
//! (crashes, steers folded, queued or discarded, every call status and the texts the loop stores,
//! compaction, hidden results across turns, the count cap, a sub-agent frame, a second process
//! writing, evictions), and the cases one by one.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use skald_core::config::MemorySecrets;
use skald_core::context::{
    BuildSettings, CacheStats, ContextCache, ContextInputs, DEFAULT_BUDGET_BYTES, MessageBuilder,
    call_results,
};
use skald_core::engine::ChatOptions;
use skald_core::turn::TurnOutcome;
use skald_core::{Engine, EngineOptions};
use skald_protocol::{Event, ToolStatus};
use skald_store::repo::approvals::NewApprovalRequest;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::tools::{ALL_STATUSES, NewToolCall, transition_allowed};
use skald_store::{ManualClock, Store};
use skald_testkit::{FakeLlm, Reply};

use super::context::{Db, fixed_now, settings};

/// The session under test, a second connection pool on the same file standing in for another
/// process, and the cache of the process that builds.
struct Log {
    db: Db,
    other: Store,
    cache: ContextCache,
    /// The root frame, then the sub-agent frame once spawned.
    frames: Vec<i64>,
    settings: BuildSettings,
    prompt: String,
}

impl Log {
    async fn new(settings: BuildSettings, budget: usize) -> Log {
        let db = Db::new().await;
        let other = Store::open(
            &db.dir.path().join(skald_store::DB_FILE_NAME),
            Arc::new(ManualClock::new(fixed_now())),
        )
        .await
        .unwrap();
        let frames = vec![db.stack_id];
        Log {
            db,
            other,
            cache: ContextCache::with_budget(budget),
            frames,
            settings,
            prompt: "You are Skald.".into(),
        }
    }

    fn store(&self, elsewhere: bool) -> &Store {
        if elsewhere { &self.other } else { &self.db.store }
    }

    fn frame(&self, pick: usize) -> i64 {
        self.frames[pick % self.frames.len()]
    }

    fn inputs(&self, stack_id: i64) -> ContextInputs {
        let mut inputs = self.db.inputs();
        inputs.stack_id = stack_id;
        inputs.agent_prompt = self.prompt.clone();
        inputs
    }

    async fn rows(&self, stack: i64) -> Vec<skald_store::repo::history::MessageRow> {
        self.db.store.messages_for_stack(stack).await.unwrap()
    }

    async fn open_calls(&self, stack: i64) -> Vec<skald_store::repo::tools::ToolCallRow> {
        self.db.store.open_tool_calls_for_stack(stack).await.unwrap()
    }

    async fn all_calls(&self) -> Vec<skald_store::repo::tools::ToolCallRow> {
        self.db.store.tool_calls_for_session(self.db.session_id).await.unwrap()
    }

    /// Builds every frame both ways and asserts the requests are byte-equal.
    async fn check(&self, step: usize) {
        for &stack in &self.frames {
            let inputs = self.inputs(stack);
            let full = MessageBuilder::new(self.db.store.clone(), self.settings.clone())
                .build(&inputs)
                .await
                .unwrap();
            let cached = MessageBuilder::new(self.db.store.clone(), self.settings.clone())
                .with_cache(self.cache.clone())
                .build_request(&inputs)
                .await
                .unwrap();
            let full_json = serde_json::to_string(&full.messages).unwrap();
            let cached_json = serde_json::to_string(&cached.messages).unwrap();
            assert_eq!(cached_json, full_json, "step {step}, frame {stack}");
            assert_eq!(cached.estimated_tokens, full.estimated_tokens, "step {step}");
            assert_eq!(cached.boundary_message_id, full.boundary_message_id, "step {step}");
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// A prompt (the user's, or a parent agent's), maybe with an attachment.
    Prompt {
        text: &'static str,
        agent: bool,
        attach: bool,
    },
    /// A message sent mid-turn: folded into the root frame at this round boundary, dropped by a
    /// stop, or left queued (behind a call waiting for a decision) for a later boundary.
    Steer {
        text: &'static str,
        then: SteerFate,
    },
    Reply {
        text: &'static str,
    },
    /// A reply with calls (`true` = valid JSON arguments); calls start pending.
    Calls {
        text: &'static str,
        calls: Vec<bool>,
    },
    /// An open call moves along the state machine, with a result of `len` chars or one of the
    /// texts the loop stores when it settles a call itself (`context/call_results.rs`).
    Settle {
        pick: usize,
        to: usize,
        len: usize,
        stored: Option<usize>,
    },
    /// A pending call starts waiting for an approval or an answer.
    Await {
        pick: usize,
        question: bool,
    },
    /// A crashed turn is retried: its unanswered prompt is marked failed.
    Orphan,
    /// Any row marked failed (the store refuses what the model already answered).
    MarkFailed {
        pick: usize,
    },
    Compact {
        pick: usize,
    },
    /// A call added later to an existing reply (the store allows it).
    LateCall {
        pick: usize,
    },
    Note {
        key: usize,
        value: &'static str,
    },
    /// The agent's prompt changes (the static system message).
    NewPrompt,
    NewSettings(BuildSettings),
    /// A sub-agent frame linked to a call of the root frame.
    Spawn {
        pick: usize,
    },
}

#[derive(Debug, Clone, Copy)]
enum SteerFate {
    Fold,
    Discard,
    Queue,
}

/// What the loop stores as a result when it settles a call itself, plus a result stored by an
/// earlier version with its label already on (replay says `Error:` once).
const STORED_RESULTS: [&str; 6] = [
    call_results::INTERRUPTED_RUNNING,
    call_results::CANCELLED_RUNNING,
    call_results::CANCELLED_AWAITING_APPROVAL,
    call_results::CANCELLED_AWAITING_ANSWER,
    call_results::CANCELLED_UNSTARTED,
    "Error: the command exited with status 2",
];

/// One step: an operation on a frame, written by this process or the other, then maybe a check.
#[derive(Debug, Clone)]
struct Step {
    op: Op,
    frame: usize,
    elsewhere: bool,
    check: bool,
}

fn text() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", " ", "ok", "a longer message with some words in it", "ünïcödé"])
}

/// Now and then one of `STORED_RESULTS` instead of a plain result.
fn stored_result() -> impl Strategy<Value = Option<usize>> {
    prop::option::weighted(0.3, 0..STORED_RESULTS.len())
}

fn build_settings() -> impl Strategy<Value = BuildSettings> {
    (any::<bool>(), 0usize..10, prop::option::of(8usize..160)).prop_map(
        |(compaction, cap, hide)| BuildSettings {
            compaction_enabled: compaction,
            max_history_messages: cap,
            max_tool_result_chars: hide,
            ..settings()
        },
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (text(), any::<bool>(), any::<bool>())
            .prop_map(|(text, agent, attach)| Op::Prompt { text, agent, attach }),
        2 => (text(), prop_oneof![
                Just(SteerFate::Fold),
                Just(SteerFate::Discard),
                Just(SteerFate::Queue)
            ])
            .prop_map(|(text, then)| Op::Steer { text, then }),
        2 => text().prop_map(|text| Op::Reply { text }),
        5 => (text(), prop::collection::vec(any::<bool>(), 1..4))
            .prop_map(|(text, calls)| Op::Calls { text, calls }),
        6 => (any::<usize>(), 0usize..6, 0usize..300, stored_result())
            .prop_map(|(pick, to, len, stored)| Op::Settle { pick, to, len, stored }),
        1 => (any::<usize>(), any::<bool>())
            .prop_map(|(pick, question)| Op::Await { pick, question }),
        1 => Just(Op::Orphan),
        1 => any::<usize>().prop_map(|pick| Op::MarkFailed { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Compact { pick }),
        1 => any::<usize>().prop_map(|pick| Op::LateCall { pick }),
        1 => (0usize..3, text()).prop_map(|(key, value)| Op::Note { key, value }),
        1 => Just(Op::NewPrompt),
        1 => build_settings().prop_map(Op::NewSettings),
        1 => any::<usize>().prop_map(|pick| Op::Spawn { pick }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    (op(), 0usize..2, prop::bool::weighted(0.3), prop::bool::weighted(0.7))
        .prop_map(|(op, frame, elsewhere, check)| Step { op, frame, elsewhere, check })
}

async fn append(
    store: &Store,
    stack: i64,
    role: Role,
    text: &str,
    metadata: Option<String>,
) -> i64 {
    store
        .append_message(&NewMessage {
            stack_id: stack,
            role: Some(role),
            content: text.into(),
            metadata,
            ..Default::default()
        })
        .await
        .unwrap()
}

async fn apply(log: &mut Log, step: &Step) {
    let stack = log.frame(step.frame);
    let store = log.store(step.elsewhere).clone();
    match &step.op {
        Op::Prompt { text, agent, attach } => {
            let role = if *agent { Role::Agent } else { Role::User };
            let metadata = attach.then(|| {
                json!({ "attachments": [{ "name": "log.txt", "path": "/tmp/log.txt" }] })
                    .to_string()
            });
            append(&store, stack, role, text, metadata).await;
        }
        Op::Steer { text, then } => {
            store.add_steer(log.db.session_id, text, None).await.unwrap();
            match then {
                SteerFate::Fold => {
                    store.fold_root_inputs(log.db.session_id, log.db.stack_id).await.unwrap();
                }
                SteerFate::Discard => {
                    store.discard_steers(log.db.session_id).await.unwrap();
                }
                SteerFate::Queue => {}
            }
        }
        Op::Reply { text } => {
            append(&store, stack, Role::Assistant, text, None).await;
        }
        Op::Calls { text, calls } => {
            let specs: Vec<(String, String, Option<String>)> = calls
                .iter()
                .enumerate()
                .map(|(i, valid)| {
                    let args = if *valid { format!(r#"{{"path":"f{i}"}}"#) } else { "{".into() };
                    (["read_file", "execute_cmd", "grep"][i % 3].to_string(), args, None)
                })
                .collect();
            let msg =
                NewMessage { stack_id: stack, content: text.to_string(), ..Default::default() };
            store.append_assistant_with_calls(&msg, &specs).await.unwrap();
        }
        Op::Settle { pick, to, len, stored } => {
            let open = log.open_calls(stack).await;
            if open.is_empty() {
                return;
            }
            let call = &open[pick % open.len()];
            let to = ALL_STATUSES[*to];
            if transition_allowed(call.status().unwrap(), to) {
                let result = match stored {
                    Some(i) => STORED_RESULTS[*i].to_string(),
                    None => "r".repeat(*len),
                };
                let result = (to != ToolStatus::Running).then_some(result.as_str());
                store.set_tool_status(call.id, to, result).await.unwrap();
            }
        }
        Op::Await { pick, question } => {
            let pending: Vec<_> =
                log.open_calls(stack).await.into_iter().filter(|c| c.status == "pending").collect();
            if pending.is_empty() {
                return;
            }
            let call = &pending[pick % pending.len()];
            if *question {
                let (sid, title) = (log.db.session_id, "Which?");
                store.create_question(call.id, sid, stack, title, "a or b?", "[]").await.unwrap();
            } else {
                let request = NewApprovalRequest {
                    tool_call_id: call.id,
                    session_id: log.db.session_id,
                    stack_id: stack,
                    kind: skald_protocol::ApprovalKind::Tool,
                    tool_name: call.name.clone(),
                    arguments: "{}".into(),
                    path: None,
                    command: None,
                    workdir: None,
                    diff: None,
                    summary: "a call".into(),
                };
                let _ = store.create_approval_request(&request).await;
            }
        }
        Op::Orphan => {
            if let Some(last) = store.last_live_message(stack).await.unwrap()
                && last.role != "assistant"
            {
                store.mark_message_failed(last.id).await.unwrap();
            }
        }
        Op::MarkFailed { pick } => {
            let rows = log.rows(stack).await;
            if !rows.is_empty() {
                store.mark_message_failed(rows[pick % rows.len()].id).await.unwrap();
            }
        }
        Op::Compact { pick } => {
            let rows = log.rows(stack).await;
            if !rows.is_empty() {
                let upto = rows[pick % rows.len()].id;
                store.append_summary(stack, &format!("up to {upto}"), upto, 9, 1).await.unwrap();
            }
        }
        Op::LateCall { pick } => {
            let replies: Vec<i64> = log
                .rows(stack)
                .await
                .into_iter()
                .filter(|r| r.role == "assistant")
                .map(|r| r.id)
                .collect();
            if !replies.is_empty() {
                let call = NewToolCall {
                    message_id: replies[pick % replies.len()],
                    name: "grep".into(),
                    arguments: "{}".into(),
                    provider_call_id: None,
                };
                store.append_tool_calls(&[call]).await.unwrap();
            }
        }
        Op::Note { key, value } => {
            store.set_scratchpad(log.db.session_id, &format!("k{key}"), value).await.unwrap();
        }
        Op::NewPrompt => log.prompt.push_str(" Be brief."),
        Op::NewSettings(s) => log.settings = s.clone(),
        Op::Spawn { pick } => {
            let calls = log.all_calls().await;
            if log.frames.len() > 1 || calls.is_empty() {
                return;
            }
            let parent = calls[pick % calls.len()].id;
            let (sid, prompt) = (log.db.session_id, "look into it");
            let child = store.create_child_frame(sid, "helper", prompt, 1, parent).await.unwrap();
            append(&store, child, Role::Agent, prompt, None).await;
            log.frames.push(child);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// After every step of a random session log, the cached build sends exactly the bytes the
    /// build from every row sends, with the same token estimate and boundary.
    #[test]
    fn the_cached_build_equals_the_full_rebuild_after_every_step(
        start in build_settings(),
        steps in prop::collection::vec(step(), 1..40),
        tight_budget in prop::bool::weighted(0.2),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let budget = if tight_budget { 4_000 } else { DEFAULT_BUDGET_BYTES };
            let mut log = Log::new(start, budget).await;
            for (i, step) in steps.iter().enumerate() {
                apply(&mut log, step).await;
                if step.check {
                    log.check(i).await;
                }
            }
            log.check(steps.len()).await;
        });
    }
}

/// A scripted three-turn session run on two engines, one with the cache of built histories and
/// one without: the provider receives the same requests, byte for byte, and the cached engine
/// extended its history at every round after a turn's first. The third turn is steered while its
/// command runs, so the steer is folded into the turn after the call's result.
#[tokio::test]
async fn an_engine_with_the_cache_sends_what_an_engine_without_it_sends() {
    async fn run(cache_bytes: usize) -> (Vec<String>, CacheStats) {
        let fake = FakeLlm::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (data, work) = (dir.path().join("data"), dir.path().join("work"));
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        // Results of earlier turns over 40 chars are hidden: the boundary moves at turn 2.
        std::fs::write(data.join("config.yml"), "llm:\n  max_tool_result_chars: 40\n").unwrap();
        std::fs::write(work.join("a.txt"), "alpha ".repeat(20)).unwrap();
        std::fs::write(work.join("b.txt"), "beta ".repeat(20)).unwrap();
        let engine = Engine::open(EngineOptions {
            data_dir: Some(data),
            env: Some(super::turn::fake_env(&fake)),
            clock: Some(Arc::new(ManualClock::new(fixed_now()))),
            secrets: Some(Arc::new(MemorySecrets::default())),
            context_cache_bytes: Some(cache_bytes),
            ..Default::default()
        })
        .await
        .unwrap();
        let read = |path: &str| Reply::tool_call("read_file", &json!({ "path": path }).to_string());
        let opts =
            ChatOptions { workdir: Some(work.clone()), approve_all: true, ..Default::default() };
        for (prompt, script) in [
            ("read both", vec![read("a.txt"), read("b.txt"), Reply::text("both read")]),
            ("again", vec![read("a.txt"), Reply::text("read again")]),
        ] {
            for reply in script {
                fake.push(reply);
            }
            let receipt = engine.send_message("test", prompt, opts.clone()).await.unwrap();
            let (_, outcome) = super::turn::finish(&engine, receipt).await;
            assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
        }
        let until_go = json!({ "command": "until [ -e go ]; do sleep 0.01; done" }).to_string();
        fake.push(Reply::tool_call("execute_cmd", &until_go));
        fake.push(Reply::text("went, and noted"));
        let mut events = engine.subscribe();
        let receipt = engine.send_message("test", "wait for go", opts.clone()).await.unwrap();
        super::turn::wait_event(&mut events, |e| matches!(e, Event::ToolStart { .. })).await;
        assert!(engine.send_message("test", "note this", opts.clone()).await.unwrap().steered);
        std::fs::write(work.join("go"), "").unwrap();
        let (_, outcome) = super::turn::finish(&engine, receipt).await;
        assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
        let work = work.display().to_string();
        let requests = fake
            .requests()
            .iter()
            .map(|r| {
                assert_eq!(r.validation_error, None);
                r.body["messages"].to_string().replace(&work, "<work>")
            })
            .collect();
        (requests, engine.context_cache_stats())
    }
    let (cached, stats) = run(DEFAULT_BUDGET_BYTES).await;
    let (uncached, none) = run(0).await;
    assert_eq!(cached.len(), 7);
    assert_eq!(cached, uncached);
    assert!(cached[3].contains("hidden"), "turn 1's results are hidden in turn 2");
    assert!(cached[6].contains("note this"), "the steer is folded into turn 3");
    assert!(stats.extended >= 5, "{stats:?}");
    assert_eq!(none.extended, 0, "{none:?}");
}

/// The cases the property test draws at random, one by one, with what the cache did.
#[tokio::test]
async fn each_kind_of_change_is_extended_or_rebuilt_as_designed() {
    let mut log = Log::new(
        BuildSettings { max_tool_result_chars: Some(20), ..settings() },
        DEFAULT_BUDGET_BYTES,
    )
    .await;
    log.settings.compaction_enabled = true;
    let stack = log.db.stack_id;
    let expect = |log: &Log, extended: u64, rebuilt: u64| {
        let s = log.cache.stats();
        assert_eq!((s.extended, s.rebuilt), (extended, rebuilt), "{s:?}");
    };
    let first = log.db.user("first").await;
    log.check(0).await;
    expect(&log, 0, 1);
    // A reply with a call, then its result from the other process.
    let msg = NewMessage { stack_id: stack, ..Default::default() };
    let call = ("read_file".to_string(), "{}".to_string(), None);
    let (_, ids) = log.other.append_assistant_with_calls(&msg, &[call]).await.unwrap();
    log.check(1).await;
    log.other.set_tool_status(ids[0], ToolStatus::Done, Some(&"x".repeat(50))).await.unwrap();
    log.check(2).await;
    // A new prompt hides that result (an earlier turn's now).
    log.db.user("second").await;
    log.check(3).await;
    expect(&log, 3, 1);
    let built = MessageBuilder::new(log.db.store.clone(), log.settings.clone())
        .build(&log.inputs(stack))
        .await
        .unwrap();
    assert!(
        built.messages.iter().any(|m| m["content"].as_str().is_some_and(|c| c.contains("hidden")))
    );
    // A crash's orphan prompt marked failed: the turn moves back, rebuilt.
    log.db
        .store
        .mark_message_failed(log.db.store.last_live_message(stack).await.unwrap().unwrap().id)
        .await
        .unwrap();
    log.check(4).await;
    expect(&log, 3, 2);
    // A compaction in the other process: rebuilt.
    log.other.append_summary(stack, "so far", first, 9, 1).await.unwrap();
    log.check(5).await;
    expect(&log, 3, 3);
}
