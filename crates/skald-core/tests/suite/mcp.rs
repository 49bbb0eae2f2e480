//! MCP servers in turns, against the real `@modelcontextprotocol/server-everything` from npm
//! (#[ignore]d: `scripts/test.sh` installs it and sets SKALD_MCP_EVERYTHING): `activate_tools`
//! grants a server to the session's root or to one sub-agent frame, the next round offers its
//! tools, calls are gated by the server's read-only hint, and a frame's grants end with it —
//! and survive a restart while it lives. A small server written with the official SDK
//! (`scripts/mcp-peers/notifying-server.mjs`) changes its tool list mid-turn.

use serde_json::{Value, json};
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{ApprovalRequest, DecisionInput, ElicitationAction, Event};
use skald_testkit::{FakeLlm, Reply, ScriptedToolCall};

use super::subagents::{first_text, task_agent, tool_names, tool_results};
use super::turn::{Rig, fake_env, finish, open_engine};

const SOURCE: &str = "test";

fn everything() -> String {
    std::env::var("SKALD_MCP_EVERYTHING").expect(
        "SKALD_MCP_EVERYTHING: the path of mcp-server-everything (export \
         SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh))",
    )
}

fn config_with(command: &str) -> String {
    format!(
        "mcp:\n  servers:\n    - name: everything\n      command: {command}\n      \
         description: the MCP test server\n      trusted: true\n"
    )
}

async fn rig() -> Rig {
    let rig = Rig::new(&config_with(&everything())).await;
    task_agent(&rig, "scout");
    rig
}

fn activate(groups: &[&str]) -> Reply {
    Reply::tool_call("activate_tools", &json!({ "groups": groups }).to_string())
}

fn echo(message: &str) -> Reply {
    Reply::tool_call("mcp__everything__echo", &json!({ "message": message }).to_string())
}

fn delegate(prompt: &str) -> ScriptedToolCall {
    let args = json!({ "mode": "sync", "agent_id": "scout", "prompt": prompt });
    ScriptedToolCall::new("execute_task", &args.to_string())
}

fn offers_mcp(body: &Value) -> bool {
    tool_names(body).iter().any(|n| n.starts_with("mcp__everything__"))
}

/// Each request's (is it the child's, does it offer the server's tools).
fn offers_by_request(fake: &FakeLlm, child_key: &str) -> Vec<(bool, bool)> {
    fake.requests()
        .iter()
        .map(|r| (first_text(&r.body).contains(child_key), offers_mcp(&r.body)))
        .collect()
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn the_root_activates_a_server_for_the_session_and_calls_its_read_only_tool() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(echo("hello"));
    rig.fake.push(Reply::text("It echoed."));
    let (sid, outcome, _) = rig.turn("use the test server").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let requests = rig.fake.requests();
    assert_eq!(requests.len(), 3);
    let first = tool_names(&requests[0].body);
    assert!(first.contains(&"activate_tools".to_string()) && !offers_mcp(&requests[0].body));
    let second = tool_names(&requests[1].body);
    assert!(second.contains(&"mcp__everything__echo".to_string()), "{second:?}");
    let activated: Value = serde_json::from_str(&tool_results(&requests[1].body)[0]).unwrap();
    assert_eq!(activated["activated"], json!(["everything"]));
    assert_eq!(activated["scope"], "session");
    assert!(
        activated["tools"]["everything"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__everything__echo"))
    );
    assert_eq!(tool_results(&requests[2].body)[1], "Echo: hello");
    let store = rig.store().await;
    assert_eq!(store.session_tool_groups(sid).await.unwrap(), ["everything"]);
    // The built-in agent's prompt lists the server as available, then as active.
    let system =
        |i: usize| requests[i].body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(system(0).contains("| everything | the MCP test server |"), "{}", system(0));
    assert!(!system(0).contains("Active"));
    assert!(
        system(1).contains("Active (call their tools as `mcp__<server>__<tool>`):\n- everything")
    );
    assert!(!system(1).contains("| everything |"), "{}", system(1));

    // The grant is the session's: after a restart its first request offers the tools already.
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
    let engine = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    rig.fake.push(echo("again"));
    rig.fake.push(Reply::text("Echoed again."));
    let receipt = engine.send_message(SOURCE, "once more", rig.opts()).await.unwrap();
    let (same, outcome) = finish(&engine, receipt).await;
    assert_eq!(same, sid);
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let requests = rig.fake.requests();
    assert!(offers_mcp(&requests[3].body));
    assert_eq!(tool_results(&requests[4].body).last().unwrap(), "Echo: again");
    engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_tool_its_server_does_not_call_read_only_waits_for_approval() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(Reply::tool_call("mcp__everything__toggle-simulated-logging", "{}"));
    rig.fake.push(Reply::text("Logging toggled."));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "toggle logging", opts).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("{outcome:?}") };
    let asked = super::turn::drain(&mut rx, sid).into_iter().find_map(|e| match e {
        Event::ApprovalRequested { request, .. } => Some(request),
        _ => None,
    });
    assert_eq!(
        asked,
        Some(ApprovalRequest::McpCall {
            server: "everything".into(),
            tool: "toggle-simulated-logging".into()
        })
    );
    let decision = DecisionInput { approved: true, note: None, bypass: None };
    rig.engine.decide(tool_call_ids[0], decision, "web").await.unwrap();
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    let result = tool_results(&last).pop().unwrap();
    assert!(result.contains("logging"), "{result}");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_sub_agents_grant_is_its_own_and_ends_with_its_frame() {
    let rig = rig().await;
    rig.fake.push(Reply::tool_calls(vec![delegate("TASK-M: echo through the server")]));
    rig.fake.push_for_prompt("TASK-M", activate(&["everything"]));
    rig.fake.push_for_prompt("TASK-M", echo("from the child"));
    rig.fake.push_for_prompt("TASK-M", Reply::text("The server echoed."));
    rig.fake.push(Reply::text("The scout used the server."));
    let (sid, outcome, _) = rig.turn("delegate it").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    // root, child ×3, root: only the child's rounds after its activation offer the tools.
    assert_eq!(
        offers_by_request(&rig.fake, "TASK-M"),
        [(false, false), (true, false), (true, true), (true, true), (false, false)]
    );
    let requests = rig.fake.requests();
    for r in &requests {
        let names = tool_names(&r.body);
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "a tool offered twice: {names:?}");
        assert!(names.contains(&"activate_tools".to_string()), "{names:?}");
    }
    let store = rig.store().await;
    let child = store.frames(sid).await.unwrap()[1].clone();
    let activated: Value = serde_json::from_str(&tool_results(&requests[2].body)[0]).unwrap();
    assert_eq!(activated["scope"], format!("stack {}", child.id));
    assert_eq!(tool_results(&requests[3].body)[1], "Echo: from the child");
    assert!(store.session_tool_groups(sid).await.unwrap().is_empty(), "no leak into the session");
    assert!(store.stack_tool_groups(child.id).await.unwrap().is_empty(), "dropped with the frame");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_parked_sub_agent_keeps_its_grant_across_a_restart() {
    let rig = rig().await;
    rig.fake.push(Reply::tool_calls(vec![delegate("TASK-R: toggle logging")]));
    rig.fake.push_for_prompt("TASK-R", activate(&["everything"]));
    rig.fake.push_for_prompt(
        "TASK-R",
        Reply::tool_call("mcp__everything__toggle-simulated-logging", "{}"),
    );
    rig.fake.push_for_prompt("TASK-R", Reply::text("Toggled."));
    rig.fake.push(Reply::text("The scout toggled it."));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message(SOURCE, "delegate", opts).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("{outcome:?}") };
    let store = rig.store().await;
    let child = store.frames(sid).await.unwrap()[1].clone();
    assert_eq!(store.stack_tool_groups(child.id).await.unwrap(), ["everything"]);

    // A new process: the child's frame reloads its grant (the server starts again) and runs
    // the approved call; its last round still offers the tools; the grant ends with the frame.
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
    let engine = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    let decision = DecisionInput { approved: true, note: None, bypass: None };
    engine.decide(tool_call_ids[0], decision, "web").await.unwrap();
    let outcome = engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let offers = offers_by_request(&rig.fake, "TASK-R");
    assert_eq!(offers, [(false, false), (true, false), (true, true), (true, true), (false, false)]);
    let requests = rig.fake.requests();
    let result = tool_results(&requests[3].body).pop().unwrap();
    assert!(result.contains("logging"), "{result}");
    assert!(store.stack_tool_groups(child.id).await.unwrap().is_empty());
    assert!(store.session_tool_groups(sid).await.unwrap().is_empty());
    engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn after_a_crash_a_read_only_mcp_call_runs_again_and_any_other_is_flagged() {
    let rig = rig().await;
    let toggle = ("mcp__everything__toggle-simulated-logging", json!({}));
    let echo = ("mcp__everything__echo", json!({ "message": "after the crash" }));
    let (sid, ids) = super::interrupted::crashed_with(&rig, &[toggle, echo]).await;
    let store = rig.store().await;
    store.grant_session_tool_group(sid, "everything").await.unwrap();
    rig.fake.push(Reply::text("Checked."));
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let flagged = rig.engine.interrupted_calls(sid).await.unwrap();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert_eq!(flagged[0].tool_call_id, ids[0]);
    assert_eq!(flagged[0].label, "everything › toggle-simulated-logging");
    let echoed = store.tool_call(ids[1]).await.unwrap();
    assert_eq!(echoed.result.as_deref(), Some("Echo: after the crash"), "re-run by itself");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_stop_cancels_a_running_mcp_call_and_the_server_serves_the_next_turn() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    let long = json!({ "duration": 60, "steps": 6 }).to_string();
    rig.fake.push(Reply::tool_call("mcp__everything__trigger-long-running-operation", &long));
    let mut rx = rig.engine.subscribe();
    let started = std::time::Instant::now();
    let receipt = rig.engine.send_message(SOURCE, "run the long one", rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    super::turn::wait_event(
        &mut rx,
        |e| matches!(e, Event::ToolStart { name, .. } if name.contains("long-running")),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(rig.engine.stop(sid).await.unwrap());
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    let store = rig.store().await;
    let calls = store.tool_calls_for_session(sid).await.unwrap();
    let long_call = calls.iter().find(|c| c.name.contains("long-running")).unwrap();
    assert_eq!(long_call.status().unwrap(), skald_protocol::ToolStatus::Cancelled);

    rig.fake.push(echo("still there"));
    rig.fake.push(Reply::text("It is."));
    let (same, outcome, _) = rig.turn("is the server still there?").await;
    assert_eq!(same, sid);
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    assert_eq!(tool_results(&last).last().unwrap(), "Echo: still there");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn an_mcp_call_stored_just_before_a_crash_is_gated_and_run_by_the_next_process() {
    let rig = rig().await;
    let echo = ("mcp__everything__echo", json!({ "message": "after a restart" }));
    let (sid, ids) = super::interrupted::crashed(&rig, &[echo], false).await;
    rig.store().await.grant_session_tool_group(sid, "everything").await.unwrap();
    rig.fake.push(Reply::text("Echoed."));
    // This engine never started the server: the resume must, before it judges the call.
    let outcome = rig.engine.resume(sid, ParkMode::Wait).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let call = rig.store().await.tool_call(ids[0]).await.unwrap();
    assert_eq!(call.status().unwrap(), skald_protocol::ToolStatus::Done, "{call:?}");
    assert_eq!(call.result.as_deref(), Some("Echo: after a restart"));
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_to_the_model_not_granted() {
    let rig = Rig::new(&config_with("/nonexistent/mcp-server")).await;
    // (A group that is not configured at all is refused by the schema's enum before this runs.)
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(Reply::text("No server."));
    let (sid, outcome, _) = rig.turn("use the server").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let requests = rig.fake.requests();
    assert!(!offers_mcp(&requests[1].body));
    let answer: Value = serde_json::from_str(&tool_results(&requests[1].body)[0]).unwrap();
    assert_eq!(answer["activated"], json!([]));
    let refused = answer["not_activated"].as_array().unwrap();
    assert_eq!(refused[0]["group"], "everything");
    let reason = refused[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("could not be started: cannot run `/nonexistent/mcp-server`"),
        "{reason}"
    );
    let store = rig.store().await;
    assert!(store.session_tool_groups(sid).await.unwrap().is_empty());
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("## MCP servers\n\nAvailable: call `activate_tools`"), "{system}");
    let log = std::fs::read_to_string(rig.data_dir().join("logs/mcp/everything.log")).unwrap();
    assert!(log.contains("start failed"), "{log}");
}

#[tokio::test]
async fn without_servers_activate_tools_offers_only_the_config_group() {
    let rig = Rig::new("").await;
    rig.fake.push(Reply::text("Hi."));
    rig.turn("hello").await;
    let body = &rig.fake.requests()[0].body;
    let names = tool_names(body);
    assert!(names.iter().any(|n| n == "activate_tools"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__") || n == "register_mcp"), "{names:?}");
    assert_eq!(activate_enum(body), json!(["config"]));
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("MCP"), "{system}");
    assert!(!system.ends_with('\n'), "the empty block leaves no trailing lines: {system:?}");
}

/// The groups `activate_tools` offers in a request.
fn activate_enum(body: &Value) -> Value {
    let tools = body["tools"].as_array().unwrap();
    let activate = tools.iter().find(|t| t["function"]["name"] == "activate_tools").unwrap();
    activate["function"]["parameters"]["properties"]["groups"]["items"]["enum"].clone()
}

#[tokio::test]
async fn the_config_group_registers_a_server_once_the_user_approves_and_it_can_be_activated_next() {
    let rig = Rig::new("# mine\nllm:\n  max_tool_rounds: 9\n").await;
    rig.fake.push(activate(&["config"]));
    let register = json!({
        "name": "notes",
        "description": "my notes",
        "command": "/nonexistent/notes-server",
        "args": ["--root", "/n"]
    });
    rig.fake.push(Reply::tool_call("register_mcp", &register.to_string()));
    rig.fake.push(activate(&["notes"]));
    rig.fake.push(Reply::text("Registered; it does not start here."));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "add my notes server", opts).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("{outcome:?}") };
    let asked = super::turn::drain(&mut rx, sid).into_iter().any(
        |e| matches!(e, Event::ApprovalRequested { tool_name, .. } if tool_name == "register_mcp"),
    );
    assert!(asked, "registering a server asks the user first");
    let file = rig.data_dir().join("config.yml");
    assert!(
        !std::fs::read_to_string(&file).unwrap().contains("notes"),
        "nothing before the approval"
    );
    let requests = rig.fake.requests();
    assert!(tool_names(&requests[1].body).contains(&"register_mcp".to_string()));
    assert!(!tool_names(&requests[0].body).contains(&"register_mcp".to_string()));

    let decision = DecisionInput { approved: true, note: None, bypass: None };
    rig.engine.decide(tool_call_ids[0], decision, "web").await.unwrap();
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# mine\nllm:\n  max_tool_rounds: 9\nmcp:\n  servers:\n    - name: notes\n      \
         description: my notes\n      command: /nonexistent/notes-server\n      args:\n      - \
         --root\n      - /n\n"
    );
    let requests = rig.fake.requests();
    let after = &requests[2].body;
    assert_eq!(
        tool_results(after).last().unwrap(),
        "Registered the MCP server `notes`. Activate it with activate_tools([\"notes\"]) to use its tools."
    );
    assert_eq!(activate_enum(after), json!(["notes", "config"]), "offered the round after");
    let refused: Value =
        serde_json::from_str(tool_results(&requests[3].body).last().unwrap()).unwrap();
    assert_eq!(refused["not_activated"][0]["group"], "notes");
    let store = rig.store().await;
    assert_eq!(store.session_tool_groups(sid).await.unwrap(), ["config"]);
}

#[tokio::test]
async fn a_server_added_or_disabled_in_settings_is_offered_or_not_from_the_next_turn() {
    let rig = Rig::new("").await;
    let server = skald_protocol::McpServerInput {
        name: "notes".into(),
        description: Some("my notes".into()),
        command: Some("/nonexistent/notes-server".into()),
        args: vec![],
        env: Default::default(),
        cwd: None,
        url: None,
        api_key_env: None,
        trusted: true,
        keep_connected: false,
    };
    let listed = rig.engine.add_mcp_server(server).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].keep_connected, "kept connected only when asked");
    // The person's trust is written with the server (an agent's `register_mcp` never sets it).
    let written = std::fs::read_to_string(rig.data_dir().join("config.yml")).unwrap();
    assert!(written.contains("      trusted: true\n"), "{written}");
    assert_eq!(listed[0].state, skald_protocol::McpServerState::NotStarted);
    rig.fake.push(Reply::text("One."));
    rig.turn("first").await;
    let offered = |i: usize| tool_names(&rig.fake.requests()[i].body);
    assert!(offered(0).contains(&"activate_tools".to_string()));
    let enum_of = |i: usize| {
        let tools = rig.fake.requests()[i].body["tools"].clone();
        let activate = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "activate_tools")
            .cloned();
        activate
            .map(|t| t["function"]["parameters"]["properties"]["groups"]["items"]["enum"].clone())
    };
    assert_eq!(enum_of(0), Some(json!(["notes", "config"])));

    let listed = rig.engine.set_mcp_server_enabled("notes", false).await.unwrap();
    assert_eq!(listed[0].state, skald_protocol::McpServerState::Disabled);
    rig.fake.push(Reply::text("Two."));
    rig.turn("second").await;
    assert_eq!(enum_of(1), Some(json!(["config"])), "a disabled server is not offered");

    rig.engine.set_mcp_server_enabled("notes", true).await.unwrap();
    assert!(rig.engine.remove_mcp_server("notes").await.unwrap().is_empty());
    let text = std::fs::read_to_string(rig.data_dir().join("config.yml")).unwrap();
    assert_eq!(text, "mcp:\n  servers:\n", "only the server's own lines went");
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn an_mcp_call_that_breaks_the_servers_schema_reaches_neither_a_person_nor_the_server() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    // `gzip-file-as-resource` is not read-only: valid, it would wait for approval.
    let bad = json!({ "name": 42, "data": "data:text/plain;base64,aGk=" });
    rig.fake.push(Reply::tool_call("mcp__everything__gzip-file-as-resource", &bad.to_string()));
    rig.fake.push(Reply::text("I will fix the name."));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "compress it", opts).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let events = super::turn::drain(&mut rx, sid);
    assert!(!events.iter().any(|e| matches!(e, Event::ApprovalRequested { .. })), "{events:?}");
    let error = events
        .iter()
        .find_map(|e| match e {
            Event::ToolError { error, .. } => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert!(error.contains("at `/name`: 42 is not of type \"string\""), "{error}");
    assert!(rig.engine.inbox().await.unwrap().items.is_empty());
    let last = rig.fake.requests().last().unwrap().body.clone();
    let told = tool_results(&last).pop().unwrap();
    assert!(told.ends_with(&error), "the model is told exactly that: {told}");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_read_only_tool_of_a_server_nobody_trusted_waits_for_approval() {
    // The same server, not marked trusted: its `readOnlyHint` is only a claim.
    let config = config_with(&everything()).replace("      trusted: true\n", "");
    let rig = Rig::new(&config).await;
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(echo("hello"));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message(SOURCE, "echo", opts).await.unwrap();
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");
    let items = rig.engine.inbox().await.unwrap().items;
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].tool_name, "mcp__everything__echo");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

/// The path a result line names after `marker` (up to the closing `]`).
fn named_path(text: &str, marker: &str) -> std::path::PathBuf {
    let start =
        text.find(marker).unwrap_or_else(|| panic!("no `{marker}` in {text}")) + marker.len();
    let rest = &text[start..];
    std::path::PathBuf::from(&rest[..rest.find(']').unwrap()])
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_result_past_the_cap_is_cut_for_the_model_and_saved_whole() {
    let rig = rig().await;
    let message = "0123456789".repeat(15_000);
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(echo(&message));
    rig.fake.push(Reply::text("Long."));
    let (_, outcome, _) = rig.turn("echo a lot").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    let told = tool_results(&last).pop().unwrap();
    assert!(told.len() < 101 * 1024, "the model got {} bytes", told.len());
    assert!(told.contains("[… cut: the result is 150006 bytes"), "{}", &told[told.len() - 300..]);
    let saved = named_path(&told, "the whole result at ");
    assert!(saved.starts_with(rig.data_dir().join("mcp-results")), "{saved:?}");
    assert_eq!(std::fs::read_to_string(saved).unwrap(), format!("Echo: {message}"));
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn an_image_result_is_described_and_saved_never_sent_as_base64() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(Reply::tool_call("mcp__everything__get-tiny-image", "{}"));
    rig.fake.push(Reply::text("A tiny image."));
    let (_, outcome, _) = rig.turn("show me the image").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    let told = tool_results(&last).pop().unwrap();
    assert!(told.contains("[image 1: image/png, about "), "{told}");
    assert!(!told.contains("iVBOR"), "base64 reached the model: {told}");
    let saved = named_path(&told, "[image 1: saved at ");
    let bytes = std::fs::read(&saved).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "{saved:?} is not the PNG");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

/// `scripts/mcp-peers/notifying-server.mjs` (the official SDK, installed by
/// `scripts/mcp-peers/install.sh`): `add_tool` adds the tool `added`, `remove_tool` removes it,
/// each telling the client with `notifications/tools/list_changed`; all say they are read-only.
fn notifier_config(trusted: bool) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/mcp-peers/notifying-server.mjs");
    format!(
        "mcp:\n  servers:\n    - name: notifier\n      command: node\n      args: [\"{}\"]\n      \
         trusted: {trusted}\n",
        script.display()
    )
}

fn notifier_call(tool: &str, args: &Value) -> Reply {
    Reply::tool_call(&format!("mcp__notifier__{tool}"), &args.to_string())
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_tool_the_server_adds_is_offered_from_the_next_round_and_one_it_removes_is_not() {
    let rig = Rig::new(&notifier_config(true)).await;
    rig.fake.push(activate(&["notifier"]));
    rig.fake.push(notifier_call("add_tool", &json!({})));
    rig.fake.push(notifier_call("added", &json!({"word": "hi"})));
    rig.fake.push(notifier_call("remove_tool", &json!({})));
    rig.fake.push(notifier_call("added", &json!({"word": "again"})));
    rig.fake.push(Reply::text("Done."));
    let (_, outcome, _) = rig.turn("try the notifier").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let requests = rig.fake.requests();
    assert_eq!(requests.len(), 6);
    let offers_added =
        |i: usize| tool_names(&requests[i].body).contains(&"mcp__notifier__added".to_string());
    let offered: Vec<bool> = (0..6).map(offers_added).collect();
    // Offered from the round after `add_tool`, until the round after `remove_tool`.
    assert_eq!(offered, [false, false, true, true, false, false]);
    assert!(tool_names(&requests[1].body).contains(&"mcp__notifier__add_tool".to_string()));
    let results = tool_results(&requests[5].body);
    assert_eq!(results[2], "added says hi");
    assert!(
        results[4].contains("the MCP server `notifier` has no tool `added`"),
        "a removed tool is unknown again: {}",
        results[4]
    );
    // The listing shows the change in the server's last log lines.
    let listed = rig.engine.list_mcp_servers(false, Some("notifier")).await.unwrap();
    let lines = &listed[0].log_lines;
    assert!(
        lines.iter().any(|l| l.ends_with("tool list changed (7 tools); added: added")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.ends_with("tool list changed (6 tools); removed: added")));
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

/// A failed MCP result keeps what it returned besides its text: the `tool_error` event carries
/// the image (so a live chat shows it without a reload), the call ends failed with it recorded,
/// and `tool_media` reads back the server's bytes.
#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_failed_call_keeps_its_image_in_the_live_event_and_the_record() {
    let rig = Rig::new(&notifier_config(true)).await;
    rig.fake.push(activate(&["notifier"]));
    rig.fake.push(notifier_call("broken_chart", &json!({})));
    rig.fake.push(Reply::text("The chart failed."));
    let (_, outcome, events) = rig.turn("draw the chart").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let (id, error, media) = events
        .iter()
        .find_map(|e| match e {
            Event::ToolError { tool_call_id, error, media } => {
                Some((*tool_call_id, error.clone(), media.clone()))
            }
            _ => None,
        })
        .expect("the call ended failed");
    assert!(error.contains("the chart could not be finished"), "{error}");
    assert_eq!(media.media.len(), 1, "{media:?}");
    assert_eq!(media.media[0].mime.as_deref(), Some("image/png"));
    let row = rig.store().await.tool_call(id).await.unwrap();
    assert_eq!(row.status, "failed");
    let file = rig.engine.tool_media(id, 0).await.unwrap();
    assert_eq!(file.mime, "image/png");
    let png = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &file.base64);
    assert!(png.unwrap().starts_with(b"\x89PNG"));
    let told = tool_results(&rig.fake.requests().last().unwrap().body).pop().unwrap();
    assert!(told.contains("[image 1: image/png"), "{told}");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_tool_an_untrusted_server_adds_later_waits_for_approval_like_its_first_ones() {
    let rig = Rig::new(&notifier_config(false)).await;
    rig.fake.push(activate(&["notifier"]));
    rig.fake.push(notifier_call("add_tool", &json!({})));
    rig.fake.push(notifier_call("added", &json!({"word": "hi"})));
    rig.fake.push(Reply::text("Done."));
    let opts = || ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "try the notifier", opts()).await.unwrap();
    let (sid, outcome) = finish(&rig.engine, receipt).await;
    let asked = |rx: &mut _| {
        super::turn::drain(rx, sid)
            .into_iter()
            .filter_map(|e| match e {
                Event::ApprovalRequested { request, .. } => Some(request),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let mcp_call =
        |tool: &str| ApprovalRequest::McpCall { server: "notifier".into(), tool: tool.into() };
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("{outcome:?}") };
    assert_eq!(asked(&mut rx), [mcp_call("add_tool")]);
    let approve = DecisionInput { approved: true, note: None, bypass: None };
    rig.engine.decide(tool_call_ids[0], approve.clone(), "web").await.unwrap();
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    // The new tool's read-only hint is a claim from a server nobody trusted: it asks too.
    let TurnOutcome::Parked { tool_call_ids } = outcome else { panic!("{outcome:?}") };
    assert_eq!(asked(&mut rx), [mcp_call("added")]);
    assert!(tool_names(&rig.fake.requests()[2].body).contains(&"mcp__notifier__added".to_string()));
    rig.engine.decide(tool_call_ids[0], approve, "web").await.unwrap();
    let outcome = rig.engine.resume(sid, ParkMode::Exit).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    assert_eq!(tool_results(&last).pop().unwrap(), "added says hi");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_servers_progress_reaches_the_running_calls_card_live() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    let long = json!({ "duration": 2, "steps": 4 }).to_string();
    rig.fake.push(Reply::tool_call("mcp__everything__trigger-long-running-operation", &long));
    rig.fake.push(Reply::text("Done."));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "run the long one", rig.opts()).await.unwrap();
    let mut call = None;
    let mut progress = Vec::new();
    loop {
        let envelope = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .expect("no tool_done within 30 s")
            .unwrap();
        match envelope.event {
            Event::ToolStart { tool_call_id, name, .. } if name.contains("long-running") => {
                call = Some(tool_call_id);
            }
            Event::ToolProgress { tool_call_id, progress: p, total, message } => {
                assert_eq!(Some(tool_call_id), call, "progress names its call");
                assert_eq!(total, Some(4.0));
                assert_eq!(message, None);
                progress.push(p);
            }
            Event::ToolDone { tool_call_id, .. } if Some(tool_call_id) == call => break,
            _ => {}
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0], "one event per step, in order");
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

fn ask() -> Reply {
    Reply::tool_call("mcp__everything__trigger-elicitation-request", "{}")
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_servers_question_waits_in_the_inbox_as_a_form_and_the_answer_reaches_the_server() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(ask());
    rig.fake.push(Reply::text("Thanks."));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "ask me", rig.opts()).await.unwrap();
    let asked =
        super::turn::wait_event(&mut rx, |e| matches!(e, Event::ElicitationRequested { .. })).await;
    let Event::ElicitationRequested { elicitation_id, tool_call_id, server, message } = asked
    else {
        unreachable!()
    };
    assert_eq!(server, "everything");
    assert!(message.contains("Please provide inputs"), "{message}");
    let inbox = rig.engine.inbox().await.unwrap();
    assert_eq!(inbox.elicitations.len(), 1);
    assert_eq!(inbox.total, 1);
    let item = &inbox.elicitations[0];
    assert_eq!((item.elicitation_id, item.tool_call_id), (elicitation_id, tool_call_id));
    let name = item.form.fields.iter().find(|f| f.name == "name").unwrap();
    assert!(matches!(name.kind, skald_protocol::ElicitationFieldKind::Text { .. }));
    assert!(name.required && !name.sensitive);

    // A value that does not fit the form is refused and the question stays open.
    let wrong = json!({"name": "Ada", "integer": 1000}).as_object().cloned();
    let err = rig
        .engine
        .answer_elicitation(elicitation_id, ElicitationAction::Accept, wrong, "test")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("integer"), "{err}");
    let content = json!({"name": "Ada Lovelace", "check": true}).as_object().cloned();
    let delivered = rig
        .engine
        .answer_elicitation(elicitation_id, ElicitationAction::Accept, content, "test")
        .await
        .unwrap();
    assert!(delivered);
    super::turn::wait_event(&mut rx, |e| matches!(e, Event::ElicitationResolved { .. })).await;
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    let result = tool_results(&last).last().unwrap().clone();
    assert!(result.contains("- Name: Ada Lovelace"), "{result}");
    assert!(result.contains("- Agreed to terms: true"), "{result}");
    assert!(
        rig.engine.inbox().await.unwrap().elicitations.is_empty(),
        "answered: out of the inbox"
    );
    // A second answer is refused, the same again is a no-op.
    let again =
        rig.engine.answer_elicitation(elicitation_id, ElicitationAction::Decline, None, "t");
    assert!(again.await.is_err());
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_servers_question_in_a_session_nobody_attends_is_declined_at_once() {
    let rig = rig().await;
    let store = rig.store().await;
    let new = skald_store::repo::sessions::NewSession {
        is_interactive: false,
        run_context: Some(json!({ "working_directory": rig.work }).to_string()),
        ..skald_store::repo::sessions::NewSession::interactive(SOURCE)
    };
    let created = store.create_session(&new).await.unwrap();
    store.set_active_session(SOURCE, created.session_id).await.unwrap();
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(ask());
    rig.fake.push(Reply::text("Declined."));
    let (sid, outcome, _) = rig.turn("ask me").await;
    assert_eq!(sid, created.session_id);
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    let result = tool_results(&last).last().unwrap().clone();
    assert!(result.contains("declined"), "{result}");
    assert!(rig.engine.inbox().await.unwrap().elicitations.is_empty());
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}

/// Every byte under `dir` (the database, its WAL, the logs), as text.
fn everything_stored(dir: &std::path::Path) -> String {
    let mut all = String::new();
    for entry in walkdir(dir) {
        if let Ok(bytes) = std::fs::read(&entry) {
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    all
}

fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(walkdir(&path)) } else { files.push(path) }
    }
    files
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_password_a_server_asks_for_reaches_it_and_is_stored_only_as_given() {
    const SECRET: &str = "s3cret-Horse-Battery";
    let rig = Rig::new(&notifier_config(true)).await;
    rig.fake.push(activate(&["notifier"]));
    let backwards: String = SECRET.chars().rev().collect();
    rig.fake.push(notifier_call("login", &json!({"expect": backwards})));
    rig.fake.push(Reply::text("Logged in."));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "log in", rig.opts()).await.unwrap();
    let asked =
        super::turn::wait_event(&mut rx, |e| matches!(e, Event::ElicitationRequested { .. })).await;
    let Event::ElicitationRequested { elicitation_id: id, .. } = asked else { unreachable!() };
    let form = rig.engine.inbox().await.unwrap().elicitations[0].form.clone();
    let password = form.fields.iter().find(|f| f.name == "password");
    assert!(password.unwrap().sensitive, "{form:?}");

    // Another process on the same data dir cannot hand the secret over: it would have to store it.
    let other = open_engine(&rig.data_dir(), fake_env(&rig.fake)).await;
    let content = json!({"user": "ada", "password": SECRET}).as_object().cloned();
    let err = other
        .answer_elicitation(id, ElicitationAction::Accept, content.clone(), "cli")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("never stores"), "{err}");
    other.shutdown(std::time::Duration::from_secs(5)).await;

    rig.engine.answer_elicitation(id, ElicitationAction::Accept, content, "app").await.unwrap();
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let last = rig.fake.requests().last().unwrap().body.clone();
    assert_eq!(tool_results(&last).last().unwrap(), "user=ada; password matches");
    let row = rig.store().await.elicitation(id).await.unwrap().unwrap();
    assert_eq!(row.answer.as_deref(), Some(r#"{"password":true,"user":"ada"}"#));
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
    assert!(!everything_stored(&rig.data_dir()).contains(SECRET), "the password was written");
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_stop_while_a_server_asks_withdraws_its_question_from_the_inbox() {
    let rig = rig().await;
    rig.fake.push(activate(&["everything"]));
    rig.fake.push(ask());
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message(SOURCE, "ask me", rig.opts()).await.unwrap();
    let asked =
        super::turn::wait_event(&mut rx, |e| matches!(e, Event::ElicitationRequested { .. })).await;
    let Event::ElicitationRequested { elicitation_id: id, .. } = asked else { unreachable!() };
    assert!(rig.engine.stop(receipt.session_id).await.unwrap());
    let (_, outcome) = finish(&rig.engine, receipt).await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(rig.engine.inbox().await.unwrap().elicitations.is_empty());
    // The server withdrew it (notifications/cancelled), so the question is closed as cancelled.
    let withdrawn = super::turn::wait_event(
        &mut rx,
        |e| matches!(e, Event::ElicitationResolved { elicitation_id, .. } if *elicitation_id == id),
    )
    .await;
    assert!(
        matches!(withdrawn, Event::ElicitationResolved { action: ElicitationAction::Cancel, .. }),
        "{withdrawn:?}"
    );
    let err = rig.engine.answer_elicitation(id, ElicitationAction::Decline, None, "t").await;
    assert!(err.is_err(), "a withdrawn question cannot be answered");
    rig.engine.shutdown(std::time::Duration::from_secs(5)).await;
}
