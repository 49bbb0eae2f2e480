//! A model whose window is smaller than the request: the provider's HTTP 400
//! `context_length_exceeded` (OpenAI's shape, as LiteLLM and llama-cpp-python send it) teaches
//! the window (stored per client and model, kept across a restart), the turn summarises the
//! conversation and asks once more, and the person is told; a request that still does not fit
//! fails with the provider's words. Against the strict fake provider over HTTP, on a real
//! SQLite file.

use skald_core::turn::TurnOutcome;
use skald_protocol::Event;
use skald_testkit::Reply;

use super::turn::{Rig, fake_env, open_engine};

/// OpenAI's overflow answer with the numbers in its message.
const OVERFLOW_4096: &str = r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (5000 in the messages, 0 in the completion). Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;

fn overflow(body: &str) -> Reply {
    Reply::Status { code: 400, times: 1, retry_after: None, body: Some(body.to_string()) }
}

/// Two turns of history, one with a large tool result the summary replaces.
async fn history(rig: &Rig) -> i64 {
    std::fs::write(rig.work.join("big.txt"), format!("BIG-FILE {}", "b".repeat(6_000))).unwrap();
    rig.fake.push(Reply::tool_call("read_file", r#"{"path":"big.txt"}"#));
    rig.fake.push(Reply::text("big read"));
    let (sid, first, _) = rig.turn("read big.txt").await;
    assert!(matches!(first, TurnOutcome::Final { .. }), "{first:?}");
    rig.fake.push(Reply::text("noted"));
    rig.turn("remember that").await;
    sid
}

fn text(body: &serde_json::Value) -> String {
    body["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overflow_teaches_the_window_compacts_and_asks_once_more() {
    let rig = Rig::new("").await;
    let sid = history(&rig).await;
    let before = rig.fake.requests().len();

    rig.fake.push(overflow(OVERFLOW_4096));
    rig.fake.push(Reply::text("SUMMARY: the user had big.txt read."));
    rig.fake.push(Reply::text("It fits now."));
    let (_, outcome, events) = rig.turn("and now?").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "It fits now."),
        "{outcome:?}"
    );

    // The person is told what happened and why.
    let told = events.iter().find_map(|e| match e {
        Event::ModelRetry { model, reason, .. } => Some((model.clone(), reason.clone())),
        _ => None,
    });
    let (model, reason) = told.expect("no notice of the overflow");
    assert_eq!(model, "env");
    assert!(reason.contains("context window is 4096 tokens as the server said"), "{reason}");
    assert!(reason.contains("needs 5000 tokens") && reason.contains("summarising"), "{reason}");
    assert!(events.iter().any(|e| matches!(e, Event::Compacting {})), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, Event::CompactionDone { .. })), "{events:?}");
    assert!(!events.iter().any(|e| matches!(e, Event::LlmFailed { .. })), "{events:?}");

    // Refused, summarised, asked again: the retry carries the summary, not the big result.
    let requests = rig.fake.requests();
    assert_eq!(requests.len() - before, 3, "overflow, summary, retry");
    let (refused, retry) = (text(&requests[before].body), text(&requests[before + 2].body));
    assert!(refused.contains("BIG-FILE"), "the refused request had the big result");
    assert!(retry.contains("SUMMARY: the user had big.txt read."), "{retry}");
    assert!(!retry.contains("BIG-FILE"), "the retry still carries the big result");
    assert!(retry.contains("and now?"), "{retry}");

    // Stored per client and model; a restarted engine counts with it.
    let learned = rig.store().await.learned_context_windows().await.unwrap();
    let learned: Vec<_> = learned
        .iter()
        .map(|w| (w.client.as_str(), w.model.as_str(), w.window_tokens, w.exact))
        .collect();
    assert_eq!(learned, [("env", "fake-model", 4096, true)]);
    assert_eq!(rig.engine.session_usage(sid).await.unwrap().context_window, Some(4096));
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
    let again = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    assert_eq!(again.session_usage(sid).await.unwrap().context_window, Some(4096));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overflow_without_usable_numbers_guesses_and_a_second_one_fails_the_turn() {
    let rig = Rig::new("").await;
    history(&rig).await;
    let before = rig.fake.requests().len();

    // A number no model has is no window: the window is guessed from the request instead.
    let absurd = r#"{"error":{"message":"maximum context length is 99999999999999999999999999 tokens","code":"context_length_exceeded"}}"#;
    rig.fake.push(overflow(absurd));
    rig.fake.push(Reply::text("SUMMARY: short."));
    rig.fake.push(overflow(absurd));
    let (_, outcome, events) = rig.turn("and now?").await;
    let TurnOutcome::Failed { message } = &outcome else { panic!("{outcome:?}") };
    assert!(
        message.contains("context window") && message.contains("even after summarising"),
        "{message}"
    );
    assert!(message.contains("context_length_exceeded"), "the provider's words: {message}");
    // Asked once more, not again and again.
    assert_eq!(rig.fake.requests().len() - before, 3, "overflow, summary, one retry");
    assert_eq!(events.iter().filter(|e| matches!(e, Event::ModelRetry { .. })).count(), 1);

    let learned = rig.store().await.learned_context_windows().await.unwrap();
    assert_eq!(learned.len(), 1, "{learned:?}");
    let guess = learned[0].window_tokens;
    assert!(!learned[0].exact);
    // Three quarters of the refused request's estimate (a few thousand tokens), never absurd.
    assert!((512..5_000).contains(&guess), "{guess}");
}

/// What a request costs a window before any history: its messages and tool definitions as
/// sent, in bytes, and ≈ tokens (bytes / 4; no tokenizer).
fn cost(body: &serde_json::Value) -> (usize, usize, usize) {
    let messages = body["messages"].to_string().len();
    let tools = body["tools"].to_string().len();
    (messages, tools, (messages + tools) / 4)
}

/// The first request of each built-in agent (`main` answering "hello", `generalist` given a
/// one-line brief) stays within its budget, so a small local model's 4,096-token window keeps
/// room for the conversation. The numbers are in docs/benchmarks.md ("First request per
/// built-in agent"), printed by
/// `cargo nextest run -p skald-core --test all first_request --no-capture`.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_of_each_built_in_agent_stays_small() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::text("Hi."));
    rig.turn("hello").await;
    let main = cost(&rig.fake.requests()[0].body);

    let args =
        serde_json::json!({ "mode": "sync", "agent_id": "generalist", "prompt": "BRIEF: say hi" });
    rig.fake.push(Reply::tool_call("execute_task", &args.to_string()));
    rig.fake.push_for_prompt("BRIEF", Reply::text("hi"));
    rig.fake.push(Reply::text("It said hi."));
    rig.turn("ask the generalist to say hi").await;
    let requests = rig.fake.requests();
    let child = requests
        .iter()
        .find(|r| super::subagents::first_text(&r.body).starts_with("BRIEF"))
        .expect("the generalist was never asked");
    let generalist = cost(&child.body);

    let bodies = [("main", &requests[0].body), ("generalist", &child.body)];
    for ((agent, body), (messages, tools, tokens)) in bodies.into_iter().zip([main, generalist]) {
        println!(
            "first request of {agent}: {messages} B messages + {tools} B tools ≈ {tokens} tokens"
        );
        let mut each: Vec<(usize, String)> = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (t.to_string().len(), t["function"]["name"].as_str().unwrap_or("?").to_string())
            })
            .collect();
        each.sort_unstable_by(|a, b| b.cmp(a));
        let each: Vec<String> = each.iter().map(|(n, name)| format!("{name} {n}")).collect();
        println!("  tools (B): {}", each.join(", "));
    }
    // The `config` group is advertised where an agent may manage servers (the root of a chat a
    // person attends), and nowhere else: the generalist is offered no `activate_tools` at all.
    let names = super::subagents::tool_names;
    let activate = |body: &serde_json::Value| {
        body["tools"].as_array().into_iter().flatten().find_map(|t| {
            (t["function"]["name"] == "activate_tools").then(|| {
                t["function"]["parameters"]["properties"]["groups"]["items"]["enum"].clone()
            })
        })
    };
    assert_eq!(activate(&requests[0].body), Some(serde_json::json!(["config"])));
    assert_eq!(activate(&child.body), None, "{:?}", names(&child.body));
    // Budgets a little over today's sizes: a prompt or tool description that grows past them
    // is a decision, made here and in docs/benchmarks.md.
    assert!(main.2 <= MAIN_BUDGET, "main's first request ≈ {} tokens", main.2);
    assert!(generalist.2 <= GENERALIST_BUDGET, "generalist's ≈ {} tokens", generalist.2);
}

/// ≈ tokens (bytes / 4) of `main`'s first request: 3,313 measured on 2026-12-05, 3,538 with
/// the memory tools.
const MAIN_BUDGET: usize = 3_600;
/// ≈ tokens of `generalist`'s first request: 2,408 measured on 2026-12-05, 2,632 with the
/// memory tools.
const GENERALIST_BUDGET: usize = 2_650;

/// The tools `main` is offered on a small window, sorted: what a small model needs to read,
/// search, write, edit and run, and to ask the person.
const CORE_TOOLS: [&str; 8] = [
    "activate_tools",
    "ask_user_clarification",
    "edit_file",
    "execute_cmd",
    "list_dir",
    "read_file",
    "search_files",
    "write_file",
];

/// ≈ tokens (bytes / 4) of `main`'s first request on a small window: 1,899 measured on
/// 2026-12-05 (against 3,313 with every tool), so a 4,096-token window keeps room for the
/// conversation even in a small model's own count (~1.5x bytes / 4).
const SMALL_WINDOW_BUDGET: usize = 2_100;

#[tokio::test(flavor = "multi_thread")]
async fn a_client_with_a_small_window_is_offered_the_core_tools_only() {
    let rig = Rig::configured(|url| {
        format!(
            "llm:\n  clients:\n    - name: small\n      base_url: {url}\n      model: \
             fake-model\n      context_window: 4096\n"
        )
    })
    .await;
    rig.fake.push(Reply::text("Hi."));
    rig.turn("hello").await;
    let first = &rig.fake.requests()[0].body;
    assert_eq!(super::subagents::tool_names(first), CORE_TOOLS);
    let (messages, tools, tokens) = cost(first);
    println!("first request on a small window: {messages} B messages + {tools} B tools ≈ {tokens}");
    assert!(tokens <= SMALL_WINDOW_BUDGET, "≈ {tokens} tokens");

    // A tool left out is not callable either: the model is told what it has.
    rig.fake.push(Reply::tool_call("write_todos", r#"{"todos":[]}"#));
    rig.fake.push(Reply::text("ok"));
    rig.turn("plan it").await;
    let requests = rig.fake.requests();
    let told = super::subagents::tool_results(&requests[requests.len() - 1].body);
    assert!(told.iter().any(|t| t.contains("unknown tool `write_todos`")), "{told:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_first_request_refused_for_its_size_is_asked_again_with_the_core_tools() {
    // No window configured: the refusal teaches it, and a window this small needs fewer tools
    // rather than a summary (there is nothing older to summarise).
    let rig = Rig::new("").await;
    rig.fake.push(overflow(OVERFLOW_4096));
    rig.fake.push(Reply::text("Hello from a small model."));
    let (_, outcome, events) = rig.turn("hello").await;
    assert!(
        matches!(&outcome, TurnOutcome::Final { content, .. } if content == "Hello from a small model."),
        "{outcome:?}"
    );
    let requests = rig.fake.requests();
    assert_eq!(requests.len(), 2, "refused, then asked again (no summary)");
    let offered = |i: usize| super::subagents::tool_names(&requests[i].body);
    assert!(offered(0).len() > CORE_TOOLS.len(), "{:?}", offered(0));
    assert!(offered(0).iter().any(|t| t == "execute_task"), "{:?}", offered(0));
    assert_eq!(offered(1), CORE_TOOLS);
    let reason = events
        .iter()
        .find_map(|e| match e {
            Event::ModelRetry { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .expect("the person is told");
    assert!(
        reason.contains("4096 tokens") && reason.contains("offering only the core tools (8 of"),
        "{reason}"
    );
    assert!(!events.iter().any(|e| matches!(e, Event::Compacting {})), "{events:?}");

    // Remembered: the next turn starts with the core tools.
    rig.fake.push(Reply::text("again"));
    rig.turn("and again").await;
    let last = rig.fake.requests().pop().unwrap();
    assert_eq!(super::subagents::tool_names(&last.body), CORE_TOOLS);
}
