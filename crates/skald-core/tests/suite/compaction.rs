//! Compaction against the strict fake provider: trigger and accounting, safe cuts, the
//! summariser request, failure handling, and the engine end to end (events, replay, restart).

use std::sync::Arc;

use serde_json::Value;
use skald_core::config::{self, CompactionConfig, EnvOverrides, MemorySecrets};
use skald_core::context::{BuildSettings, ContextCompactor, MessageBuilder};
use skald_core::engine::ChatOptions;
use skald_core::turn::TurnOutcome;
use skald_core::{Engine, EngineOptions};
use skald_llm::{CancellationToken, LlmClient, LlmSettings, ModelEndpoint};
use skald_protocol::{Event, ToolStatus};
use skald_store::ManualClock;
use skald_store::repo::history::{Role, TokenUsage};
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall, Usage};

use super::context::{Db, settings, text_of};
use super::turn::{Rig, fake_env, open_engine};

fn config(threshold: u64, keep: u64) -> CompactionConfig {
    CompactionConfig {
        enabled: true,
        threshold_tokens: Some(threshold),
        reserve_tokens: 0,
        keep_recent_tokens: keep,
        strength: None,
    }
}

fn build_settings(cfg: CompactionConfig) -> BuildSettings {
    BuildSettings { compaction_enabled: true, compaction: Some(cfg), ..settings() }
}

fn usage(input: i64) -> Option<TokenUsage> {
    Some(TokenUsage { input_tokens: input, output_tokens: 10, ..Default::default() })
}

struct Llm {
    fake: FakeLlm,
    client: LlmClient,
    chain: Vec<ModelEndpoint>,
}

async fn llm() -> Llm {
    let fake = FakeLlm::start().await.unwrap();
    let settings = LlmSettings { max_retries: 0, ..LlmSettings::default() };
    let client = LlmClient::new(settings).unwrap();
    let chain = vec![ModelEndpoint::new("fake", fake.base_url(), "fake-model")];
    Llm { fake, client, chain }
}

/// Three turns of about 250 tokens each, the last one still open (its prompt only).
async fn three_turns(db: &Db) -> Vec<i64> {
    let mut prompts = Vec::new();
    for i in 0..3 {
        prompts.push(db.user(&format!("question {i}")).await);
        if i < 2 {
            db.read(&format!("file{i}.txt"), &format!("{i}").repeat(1_000)).await;
            db.message(Role::Assistant, &format!("answer {i}"), usage(3_000)).await;
        }
    }
    prompts
}

#[tokio::test]
async fn over_the_threshold_the_older_history_is_summarised_and_replay_starts_after_it() {
    let db = Db::new().await;
    let prompts = three_turns(&db).await;
    let llm = llm().await;
    llm.fake.push(Reply::text("## Goal\nSUMMARY-ONE"));
    let cfg = config(2_000, 200);
    let builder = MessageBuilder::new(db.store.clone(), build_settings(cfg));
    let compactor = ContextCompactor::new(&db.store, &llm.client, &llm.chain, cfg);
    let mut started = false;
    let report = compactor
        .maybe_compact(&builder, &db.inputs(), &CancellationToken::new(), || started = true)
        .await
        .unwrap()
        .expect("compacted");
    assert!(started);
    // 3 000 reported + the open prompt after it.
    assert!((3_010..3_100).contains(&report.tokens_before), "{report:?}");
    assert!(report.tokens_after < report.tokens_before / 2, "{report:?}");

    // The summariser request: plain, no tools, low temperature, template and shortened results.
    let req = &llm.fake.requests()[0];
    assert_eq!(req.validation_error, None);
    assert!(req.body.get("tools").is_none());
    assert!((req.body["temperature"].as_f64().unwrap() - 0.3).abs() < 1e-6);
    let prompt = text_of(&req.body["messages"][1]);
    for section in ["## Goal", "## Constraints & Preferences", "### Done", "### In Progress"] {
        assert!(prompt.contains(section), "{section}");
    }
    assert!(prompt.contains("## Key Decisions") && prompt.contains("## Next Steps"));
    assert!(prompt.contains("## Critical Context") && prompt.contains("## Files Touched"));
    assert!(prompt.contains("[USER]: question 0") && prompt.contains("- file0.txt"));
    assert!(!prompt.contains("question 2"), "the open turn is never summarised");

    // The stored row and the next build.
    let row = db.store.latest_summary(db.stack_id).await.unwrap().unwrap();
    assert_eq!(row.id, report.summary_id);
    assert_eq!(row.content, "## Goal\nSUMMARY-ONE");
    assert_eq!(row.covers_up_to_message_id, report.covers_up_to_message_id);
    assert!(report.covers_up_to_message_id < prompts[2]);
    let built = builder.build(&db.inputs()).await.unwrap();
    let all: Vec<String> = built.messages.iter().map(text_of).collect();
    assert!(all[1].contains("SUMMARY-ONE"));
    assert!(!all.iter().any(|t| t == "question 0"), "old rows are gone from the request");
    assert!(all.iter().any(|t| t == "question 2"));
    // The full log stays for the debug view.
    assert!(db.store.messages_for_stack(db.stack_id).await.unwrap().len() >= 7);

    // Right after compaction the old usage (3 000, written before the summary) is stale: the
    // estimate of the compacted replay is used and nothing re-triggers.
    let tokens = compactor.context_tokens(&builder, &db.inputs()).await.unwrap();
    assert_eq!(tokens, built.estimated_tokens);
    let again = compactor
        .maybe_compact(&builder, &db.inputs(), &CancellationToken::new(), || {})
        .await
        .unwrap();
    assert_eq!(again, None);
    assert_eq!(llm.fake.requests().len(), 1);
}

#[tokio::test]
async fn under_the_threshold_or_with_an_unknown_window_nothing_happens() {
    let db = Db::new().await;
    three_turns(&db).await;
    let llm = llm().await;
    let builder = MessageBuilder::new(db.store.clone(), build_settings(config(5_000, 200)));
    let cancel = CancellationToken::new();
    let under = ContextCompactor::new(&db.store, &llm.client, &llm.chain, config(5_000, 200));
    assert_eq!(under.maybe_compact(&builder, &db.inputs(), &cancel, || {}).await.unwrap(), None);
    let unknown = CompactionConfig { threshold_tokens: None, ..config(0, 200) };
    let c = ContextCompactor::new(&db.store, &llm.client, &llm.chain, unknown);
    assert_eq!(c.trigger_tokens(), None);
    assert_eq!(c.maybe_compact(&builder, &db.inputs(), &cancel, || {}).await.unwrap(), None);
    // A known window minus the reserve is the trigger.
    let mut chain = llm.chain.clone();
    chain[0].context_window = Some(10_000);
    let reserve = CompactionConfig { reserve_tokens: 7_500, ..unknown };
    let windowed = ContextCompactor::new(&db.store, &llm.client, &chain, reserve);
    assert_eq!(windowed.trigger_tokens(), Some(2_500));
    llm.fake.push(Reply::text("windowed summary"));
    let report = windowed.maybe_compact(&builder, &db.inputs(), &cancel, || {}).await.unwrap();
    assert!(report.is_some());
    assert_eq!(llm.fake.requests().len(), 1, "only the windowed compactor called the model");
}

#[tokio::test]
async fn a_failing_or_empty_summariser_leaves_the_history_uncompacted() {
    let db = Db::new().await;
    three_turns(&db).await;
    let llm = llm().await;
    let cfg = config(1_000, 200);
    let builder = MessageBuilder::new(db.store.clone(), build_settings(cfg));
    let c = ContextCompactor::new(&db.store, &llm.client, &llm.chain, cfg);
    let cancel = CancellationToken::new();
    llm.fake.push(Reply::status(400, 1));
    assert_eq!(c.maybe_compact(&builder, &db.inputs(), &cancel, || {}).await.unwrap(), None);
    llm.fake.push(Reply::Empty);
    assert_eq!(c.maybe_compact(&builder, &db.inputs(), &cancel, || {}).await.unwrap(), None);
    assert_eq!(db.store.latest_summary(db.stack_id).await.unwrap(), None);
    assert_eq!(llm.fake.requests().len(), 2);
}

#[tokio::test]
async fn the_cut_never_swallows_an_open_call_and_keeps_call_and_result_together() {
    let db = Db::new().await;
    db.user("q0").await;
    let (parked_msg, ids) = db.calls("", &[("write_file", r#"{"path":"x"}"#)]).await;
    db.settle(ids[0], ToolStatus::Pending, None).await; // still open
    for i in 0..4 {
        db.read(&format!("f{i}"), &"z".repeat(2_000)).await;
    }
    db.user("q1").await;
    let llm = llm().await;
    let cfg = config(0, 100);
    let builder = MessageBuilder::new(db.store.clone(), build_settings(cfg));
    let c = ContextCompactor::new(&db.store, &llm.client, &llm.chain, cfg);
    llm.fake.push(Reply::text("summary"));
    let report = c
        .compact_now(
            &builder,
            &db.inputs(),
            Some("the login bug"),
            &CancellationToken::new(),
            || {},
        )
        .await
        .unwrap()
        .expect("q0 can be summarised");
    assert!(report.covers_up_to_message_id < parked_msg, "the parked call stays in the replay");
    let prompt = text_of(&llm.fake.requests()[0].body["messages"][1]);
    assert!(prompt.ends_with("Focus especially on: the login bug"));
    let built = builder.build(&db.inputs()).await.unwrap();
    assert!(
        built.messages.iter().any(|m| m["role"] == "tool"
            && text_of(m) == skald_core::context::call_results::NEVER_STARTED)
    );
    let body = serde_json::json!({ "model": "m", "messages": built.messages });
    skald_testkit::validate_chat_request(&body).unwrap();

    // A tail that would cut between a call and its result snaps to the assistant row instead.
    let db = Db::new().await;
    db.user("q").await;
    let call_msg = {
        let (m, ids) = db.calls("", &[("read_file", r#"{"path":"a"}"#)]).await;
        db.settle(ids[0], ToolStatus::Done, Some(&"r".repeat(4_000))).await;
        m
    };
    db.assistant("read it").await;
    db.user("next").await;
    let builder = MessageBuilder::new(db.store.clone(), build_settings(cfg));
    let c = ContextCompactor::new(&db.store, &llm.client, &llm.chain, config(0, 50));
    llm.fake.push(Reply::text("summary two"));
    let report = c
        .compact_now(&builder, &db.inputs(), None, &CancellationToken::new(), || {})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.covers_up_to_message_id, call_msg - 1, "cut at the requesting row");
}

#[tokio::test]
async fn nothing_to_compact_when_the_whole_history_fits_in_the_kept_tail() {
    let db = Db::new().await;
    three_turns(&db).await;
    let llm = llm().await;
    let cfg = config(0, 1_000_000);
    let builder = MessageBuilder::new(db.store.clone(), build_settings(cfg));
    let c = ContextCompactor::new(&db.store, &llm.client, &llm.chain, cfg);
    let mut started = false;
    let r = c
        .compact_now(&builder, &db.inputs(), None, &CancellationToken::new(), || started = true)
        .await
        .unwrap();
    assert_eq!(r, None);
    assert!(!started, "no compacting event without a summariser call");
    assert!(llm.fake.requests().is_empty());
}

// ---------------------------------------------------------------------------------------------
// End to end through the engine

const CONFIG: &str = "llm:\n  compaction:\n    enabled: true\n    threshold_tokens: 4000\n    \
     keep_recent_tokens: 300\n";

fn with_usage(reply: Reply, prompt_tokens: u64) -> Reply {
    let u = Some(Usage { prompt_tokens, completion_tokens: 5, cost: None });
    match reply {
        Reply::Text { content, reasoning, .. } => Reply::Text { content, reasoning, usage: u },
        Reply::ToolCalls { content, calls, .. } => Reply::ToolCalls { content, calls, usage: u },
        other => other,
    }
}

fn read(path: &str) -> Reply {
    Reply::tool_calls(vec![ScriptedToolCall::new("read_file", &format!(r#"{{"path":"{path}"}}"#))])
}

fn is_summariser(body: &Value) -> bool {
    body.get("tools").is_none() && text_of(&body["messages"][1]).contains("<conversation>")
}

#[tokio::test]
async fn a_long_session_is_compacted_at_turn_start_with_events_and_survives_a_restart() {
    let rig = Rig::new(CONFIG).await;
    std::fs::write(rig.work.join("big.txt"), "b".repeat(6_000)).unwrap();
    std::fs::write(rig.work.join("small.txt"), "s".repeat(1_600)).unwrap();
    // Turn 1: small usage. Turn 2: reports a large context.
    rig.fake.push(with_usage(read("big.txt"), 100));
    rig.fake.push(with_usage(Reply::text("big read"), 100));
    let (_, o1, e1) = rig.turn("first: read big.txt").await;
    assert!(matches!(o1, TurnOutcome::Final { .. }), "{o1:?}");
    assert!(!e1.iter().any(|e| matches!(e, Event::Compacting {})));
    rig.fake.push(with_usage(read("small.txt"), 4_500));
    rig.fake.push(with_usage(Reply::text("small read"), 4_600));
    rig.turn("second: read small.txt").await;
    let before = rig.fake.requests().len();

    // Turn 3 starts over the threshold: summary first, then the turn's own request, which the
    // provider refuses, so no fresh usage is stored after the summary.
    rig.fake.push(Reply::text("## Goal\nE2E-SUMMARY"));
    rig.fake.push(Reply::status(401, 1));
    let (sid, o3, e3) = rig.turn("third: what did you read?").await;
    assert!(matches!(o3, TurnOutcome::Failed { .. }), "{o3:?}");
    let requests = rig.fake.requests();
    assert_eq!(requests.len(), before + 2);
    assert!(is_summariser(&requests[before].body));
    let turn_req = &requests[before + 1];
    assert_eq!(turn_req.validation_error, None);
    let texts: Vec<String> =
        turn_req.body["messages"].as_array().unwrap().iter().map(text_of).collect();
    assert!(texts[1].contains("E2E-SUMMARY"), "summary in the third slot: {:?}", texts[1]);
    assert!(!texts.iter().any(|t| t.contains("first: read big.txt")), "old rows left out");
    assert!(!texts.iter().any(|t| t.contains(&"b".repeat(100))), "old big result left out");
    assert!(texts.iter().any(|t| t.contains("third: what did you read?")));

    let compacting = e3.iter().position(|e| matches!(e, Event::Compacting {})).expect("compacting");
    let (done_at, tokens_before, tokens_after, covers) = e3
        .iter()
        .enumerate()
        .find_map(|(i, e)| match e {
            Event::CompactionDone {
                tokens_before, tokens_after, covers_up_to_message_id, ..
            } => Some((i, *tokens_before, *tokens_after, *covers_up_to_message_id)),
            _ => None,
        })
        .expect("compaction_done");
    assert!(compacting < done_at);
    assert!(tokens_before >= 4_605, "{tokens_before}");
    assert!(tokens_after > 0 && tokens_after < 4_000, "{tokens_after}");

    // `/context` and the meter: the 4 600 the kept tail's row reported describe the request
    // before the summary; until a reply reports fresh usage, the compacted request is estimated.
    let u = rig.engine.session_usage(sid).await.unwrap();
    assert_eq!((u.last_input_tokens, u.last_output_tokens, &u.model), (None, None, &None));
    assert!(u.context_estimated);
    let estimate = u.context_tokens.expect("the session has replies");
    assert!((estimate - tokens_after).abs() <= 3, "{estimate} vs {tokens_after}");

    // Restart: a new engine on the same dir. The kept tail still holds the row that reported
    // 4 600 tokens, but it was written before the summary: the estimate counts, no re-trigger.
    let Rig { dir, work, fake, engine } = rig;
    drop(engine);
    let data = dir.path().join("data");
    let engine = open_engine(&data, fake_env(&fake)).await;
    fake.push(with_usage(Reply::text("fourth answer"), 900));
    let mut rx = engine.subscribe();
    let opts = skald_core::engine::ChatOptions {
        workdir: Some(work),
        approve_all: true,
        ..Default::default()
    };
    // Long enough that a cut exists (the prompt alone fills the kept tail), so only the
    // accounting decides.
    let fourth = format!("fourth question {}", "q".repeat(1_500));
    let receipt = engine.send_message("test", &fourth, opts).await.unwrap();
    let (sid4, o4) = super::turn::finish(&engine, receipt).await;
    assert_eq!(sid4, sid);
    assert!(matches!(o4, TurnOutcome::Final { ref content, .. } if content == "fourth answer"));
    let e4 = super::turn::drain(&mut rx, sid);
    assert!(!e4.iter().any(|e| matches!(e, Event::Compacting {})), "{e4:?}");
    let all = fake.requests();
    assert_eq!(all.len(), before + 3, "no second summariser call");
    let last = all.last().unwrap();
    assert_eq!(last.validation_error, None);
    assert!(text_of(&last.body["messages"][1]).contains("E2E-SUMMARY"), "replay still uses it");
    // The first reply after the summary reports fresh usage: it counts again.
    let u = engine.session_usage(sid).await.unwrap();
    assert_eq!((u.last_input_tokens, u.last_output_tokens), (Some(900), Some(5)));
    assert!(!u.context_estimated);
    assert_eq!(u.context_tokens, Some(905), "usage of the last reply, nothing after it");
    let store = skald_store::Store::open_in_dir(&data).await.unwrap();
    let root = store.root_frame(sid).await.unwrap();
    let summary = store.latest_summary(root.id).await.unwrap().unwrap();
    assert_eq!(summary.covers_up_to_message_id, covers);
    assert_eq!(
        (summary.tokens_before, summary.tokens_after),
        (Some(tokens_before), Some(tokens_after))
    );
}

#[tokio::test]
async fn a_compact_the_model_cannot_write_is_an_llm_error_not_nothing_to_compact() {
    // Automatic compaction stays off, so only the explicit /compact calls the summariser.
    let rig =
        Rig::new("llm:\n  compaction:\n    enabled: false\n    keep_recent_tokens: 300\n").await;
    std::fs::write(rig.work.join("big.txt"), "b".repeat(6_000)).unwrap();
    rig.fake.push(read("big.txt"));
    rig.fake.push(Reply::text("big read"));
    let (sid, first, _) = rig.turn("read big.txt").await;
    assert!(matches!(first, TurnOutcome::Final { .. }), "{first:?}");
    rig.fake.push(Reply::text("noted"));
    rig.turn("and now?").await;

    // The provider refuses the summariser: the human who asked for /compact hears why.
    rig.fake.push(Reply::status(401, 1));
    let err = rig.engine.compact_session(sid, None).await.unwrap_err();
    assert_eq!(err.code(), skald_protocol::ErrorCode::Llm, "{err}");
    assert!(err.to_string().contains("could not summarise"), "{err}");
    let store = skald_store::Store::open_in_dir(&rig.dir.path().join("data")).await.unwrap();
    let root = store.root_frame(sid).await.unwrap();
    assert_eq!(store.latest_summary(root.id).await.unwrap(), None, "no summary was stored");
}

/// `/compact`, then `/context` before and after the next answer. The clock stands still until
/// the last turn: rows written in the compaction's millisecond count as written before it.
#[tokio::test]
async fn after_compact_usage_counts_the_compacted_request_until_a_reply_reports_again() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = "llm:\n  compaction:\n    enabled: true\n    threshold_tokens: 100000\n    \
                  keep_recent_tokens: 50\n";
    std::fs::write(dir.path().join("config.yml"), config).unwrap();
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let engine = Engine::open(EngineOptions {
        data_dir: Some(dir.path().to_path_buf()),
        env: Some(fake_env(&fake)),
        clock: Some(clock.clone()),
        secrets: Some(Arc::new(MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap();
    let turn = |text: &'static str| {
        let engine = engine.clone();
        async move {
            let receipt = engine.send_message("test", text, ChatOptions::default()).await.unwrap();
            super::turn::finish(&engine, receipt).await
        }
    };
    let reply = |text: String, prompt| Reply::Text {
        content: text,
        reasoning: None,
        usage: Some(Usage { prompt_tokens: prompt, completion_tokens: 7, cost: None }),
    };
    fake.push(reply("a".repeat(400), 3_000));
    let (sid, _) = turn("first").await;
    fake.push(reply("b".repeat(400), 4_000));
    turn("second").await;
    let u = engine.session_usage(sid).await.unwrap();
    let counted = (u.last_input_tokens, u.context_tokens, u.context_estimated);
    assert_eq!(counted, (Some(4_000), Some(4_007), false));

    // The kept tail ("second" and its 400-char answer) still holds the row that reported 4 000.
    fake.push(Reply::text("## Goal\nsummary"));
    let r = engine.compact_session(sid, None).await.unwrap();
    assert!(r.compacted, "{r:?}");
    let u = engine.session_usage(sid).await.unwrap();
    assert_eq!((u.last_input_tokens, u.last_output_tokens, &u.model), (None, None, &None));
    assert!(u.context_estimated);
    let estimate = u.context_tokens.unwrap();
    let after = r.tokens_after.unwrap();
    assert!((estimate - after).abs() <= 3, "{estimate} vs {after}");
    assert!(estimate < 1_000, "the compacted request is small: {estimate}");

    clock.advance(chrono::Duration::seconds(1));
    fake.push(reply("c".into(), 321));
    turn("third").await;
    let u = engine.session_usage(sid).await.unwrap();
    let counted = (u.last_input_tokens, u.context_tokens, u.context_estimated);
    assert_eq!(counted, (Some(321), Some(328), false));
    assert_eq!(fake.pending_replies(), 0);
}

// ---------------------------------------------------------------------------------------------
// Configuration

/// Compaction lifts the history's count cap, so it must be able to trigger.
#[test]
fn compaction_on_without_a_window_or_threshold_is_a_config_error_that_says_what_to_add() {
    let load = |text: &str, env: &EnvOverrides| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.yml"), text).unwrap();
        config::load(dir.path(), env)
    };
    let none = EnvOverrides::default();
    let client = |model: &str, extra: &str| {
        format!(
            "llm:\n  clients:\n    - name: local\n      base_url: http://127.0.0.1:1/v1\n      \
             model: {model}\n{extra}"
        )
    };
    let tuned = "  compaction:\n    keep_recent_tokens: 8000\n";
    let err = load(&client("my-local-model", tuned), &none).unwrap_err().to_string();
    assert!(err.contains("config.yml: llm.compaction is on"), "{err}");
    assert!(err.contains("`local` (model `my-local-model`)"), "{err}");
    assert!(err.contains("add `context_window: <tokens>` to each of these clients"), "{err}");
    assert!(err.contains("`threshold_tokens: <tokens>` under `llm.compaction`"), "{err}");

    // Each way out loads: a threshold, the client's window, compaction off, a well-known model,
    // no compaction block at all (then an unknown window keeps the count cap).
    let threshold = "  compaction:\n    threshold_tokens: 6000\n";
    let window = "      context_window: 32768\n  compaction:\n    enabled: true\n";
    let off = "  compaction:\n    enabled: false\n";
    for ok in [
        client("my-local-model", threshold),
        client("my-local-model", window),
        client("my-local-model", off),
        client("gpt-4o", tuned),
        client("my-local-model", ""),
    ] {
        load(&ok, &none).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }

    // The client from SKALD_LLM_BASE_URL has no config entry to put a window on.
    let env = EnvOverrides {
        base_url: Some("http://127.0.0.1:1/v1".into()),
        model: Some("my-local-model".into()),
        api_key: None,
    };
    let err = load("llm:\n  compaction:\n    enabled: true\n", &env).unwrap_err().to_string();
    assert!(err.contains("`env` (model `my-local-model`)"), "{err}");
    assert!(err.contains("add `threshold_tokens: <tokens>` under `llm.compaction`"), "{err}");
    assert!(err.contains("SKALD_LLM_BASE_URL"), "{err}");
}
