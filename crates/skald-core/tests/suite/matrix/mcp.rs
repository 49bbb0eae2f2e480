//! MCP server faults: a server that cannot start, a call of a server not activated, a tool that
//! answers with an error, a server killed during a call. The model is told what happened in words
//! that name it, nothing runs that was not granted, the prompt is kept, and the turn goes on to
//! its answer (a killed server is started again for the next call). The rows that need a real
//! server run against `@modelcontextprotocol/server-everything` (#[ignore]d like every test that
//! needs it; `scripts/test.sh` and `scripts/reliability.sh` install it).

use std::time::Duration;

use serde_json::json;
use skald_core::turn::TurnOutcome;
use skald_protocol::Event;
use skald_testkit::Reply;
use skald_testkit::matrix::{Row, excerpt};

use super::{prompt_kept, stored_view, tool_results, user_view};
use crate::suite::turn::{Rig, drain, finish};

const PROMPT: &str = "Use the server";
const ANSWER: &str = "Done with the server.";

fn everything() -> String {
    std::env::var("SKALD_MCP_EVERYTHING").expect(
        "SKALD_MCP_EVERYTHING: the path of mcp-server-everything (export \
         SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh))",
    )
}

fn server(command: &str, extra: &str) -> String {
    format!(
        "mcp:\n  servers:\n    - name: srv\n      command: {command}\n      trusted: true\n{extra}"
    )
}

fn call(name: &str, args: serde_json::Value) -> Reply {
    Reply::tool_call(name, &args.to_string())
}

/// The result the model read for the call of round `round` (its next request's last tool result).
fn told(rig: &Rig, round: usize) -> String {
    let reqs = rig.fake.requests();
    reqs.get(round).map(tool_results).and_then(|r| r.last().cloned()).unwrap_or_default()
}

/// Whether `message` names every one of `names` (case-insensitive): the model can act on it.
fn names_all(message: &str, names: &[&str]) -> bool {
    let lower = message.to_lowercase();
    names.iter().all(|n| lower.contains(&n.to_lowercase()))
}

fn answered(outcome: &TurnOutcome) -> bool {
    matches!(outcome, TurnOutcome::Final { content, .. } if content == ANSWER)
}

#[tokio::test]
async fn a_server_whose_command_cannot_run() {
    let rig = Rig::new(&server("/nonexistent/mcp-server", "")).await;
    rig.fake.push(call("activate_tools", json!({ "groups": ["srv"] })));
    rig.fake.push(Reply::text(ANSWER));
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let result = told(&rig, 1);
    let granted = rig.store().await.session_tool_groups(sid).await.unwrap();
    let offered_after = super::super::subagents::tool_names(&rig.fake.requests()[1].body)
        .into_iter()
        .filter(|n| n.starts_with("mcp__"))
        .count();
    let answer: serde_json::Value = serde_json::from_str(&result).unwrap_or_default();
    let reason = answer["not_activated"][0]["reason"].as_str().unwrap_or_default().to_string();
    let mut row = Row::new("mcp.cannot-start");
    row.user_sees(format!(
        "{}; the activation's result says {}",
        user_view(&events),
        excerpt(&reason, 110)
    ))
    .model_sees(format!(
        "activate_tools answers activated {}, not activated `srv`: {}; {offered_after} of the \
         server's tools offered next",
        answer["activated"],
        excerpt(&reason, 110)
    ))
    .stored(format!("{}; grants: {granted:?}", stored_view(&detail)))
    .lost_if(!prompt_kept(&detail, PROMPT), "the prompt")
    .unapproved_if(!granted.is_empty() || offered_after > 0, "a grant of a server that never ran")
    .recovered_if(
        names_all(&reason, &["srv", "could not be started", "/nonexistent/mcp-server"])
            && answered(&outcome),
        &format!("the model was told {} and the turn ended {outcome:?}", excerpt(&result, 80)),
    );
    row.finish();
}

#[tokio::test]
async fn a_call_of_a_servers_tool_before_it_was_activated() {
    let rig = Rig::new(&server("/nonexistent/mcp-server", "")).await;
    rig.fake.push(call("mcp__srv__echo", json!({ "message": "hi" })));
    rig.fake.push(Reply::text(ANSWER));
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let result = told(&rig, 1);
    let started = rig.engine.list_mcp_servers(false, None).await.unwrap()[0].state;
    let mut row = Row::new("mcp.not-activated");
    row.user_sees(user_view(&events))
        .model_sees(format!("the call is answered with {}", excerpt(&result, 140)))
        .stored(format!(
            "{}; the server: {}",
            stored_view(&detail),
            if started == skald_protocol::McpServerState::NotStarted {
                "never started"
            } else {
                "started"
            }
        ))
        .lost_if(!prompt_kept(&detail, PROMPT), "the prompt")
        .unapproved_if(
            started != skald_protocol::McpServerState::NotStarted,
            "the server was started for a call it was not granted for",
        )
        .recovered_if(
            names_all(
                &result,
                &["unknown tool `mcp__srv__echo`", "`srv` is not activated", "activate_tools"],
            ) && answered(&outcome),
            &format!("the model was told {} and the turn ended {outcome:?}", excerpt(&result, 80)),
        );
    row.finish();
}

#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn a_tool_that_answers_with_an_error() {
    let rig = Rig::new(&server(&everything(), "")).await;
    rig.fake.push(call("activate_tools", json!({ "groups": ["srv"] })));
    // Valid arguments (a bad one never reaches the server now): the fetch it makes fails.
    let args = json!({ "name": "x.gz", "data": "http://127.0.0.1:9/nothing-listens-here" });
    rig.fake.push(call("mcp__srv__gzip-file-as-resource", args));
    rig.fake.push(Reply::text(ANSWER));
    let (sid, outcome, events) = rig.turn(PROMPT).await;
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let result = told(&rig, 2);
    let mut row = Row::new("mcp.tool-error");
    row.user_sees(user_view(&events))
        .model_sees(format!(
            "the call is answered with the server's error {}",
            excerpt(&result, 140)
        ))
        .stored(stored_view(&detail))
        .lost_if(!prompt_kept(&detail, PROMPT), "the prompt")
        .recovered_if(
            names_all(&result, &["fetch failed"]) && answered(&outcome),
            &format!("the model was told {} and the turn ended {outcome:?}", excerpt(&result, 80)),
        );
    row.finish();
    rig.engine.shutdown(Duration::from_secs(5)).await;
}

/// Pids of the processes whose environment holds `marker`.
#[cfg(target_os = "linux")]
fn pids_with_env(marker: &str) -> Vec<String> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.parse::<u32>().is_err() {
            continue;
        }
        if let Ok(env) = std::fs::read(entry.path().join("environ"))
            && String::from_utf8_lossy(&env).contains(marker)
        {
            pids.push(name);
        }
    }
    pids
}

#[cfg(target_os = "linux")]
#[tokio::test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
async fn the_server_killed_during_a_call() {
    let marker = format!("skald-matrix-{}", std::process::id());
    let env = format!("      env:\n        SKALD_MATRIX_MARK: {marker}\n");
    let rig = Rig::new(&server(&everything(), &env)).await;
    rig.fake.push(call("activate_tools", json!({ "groups": ["srv"] })));
    let long = json!({ "duration": 30, "steps": 3 });
    rig.fake.push(call("mcp__srv__trigger-long-running-operation", long));
    rig.fake.push(call("mcp__srv__echo", json!({ "message": "back" })));
    rig.fake.push(Reply::text(ANSWER));
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message("test", PROMPT, rig.opts()).await.unwrap();
    let sid = receipt.session_id;
    crate::suite::turn::wait_event(
        &mut rx,
        |e| matches!(e, Event::ToolStart { name, .. } if name.contains("long-running")),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = pids_with_env(&marker);
    for pid in &killed {
        let _ = std::process::Command::new("kill").args(["-9", pid]).status();
    }
    let (_, outcome) = finish(&rig.engine, receipt).await;
    let events = drain(&mut rx, sid);
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let cut_off = told(&rig, 2);
    let after = told(&rig, 3);
    let mut row = Row::new("mcp.dies-mid-call");
    row.user_sees(user_view(&events))
        .model_sees(format!(
            "the cut-off call is answered with {}; the next call, on a restarted server, with {}",
            excerpt(&cut_off, 120),
            excerpt(&after, 40)
        ))
        .stored(stored_view(&detail))
        .lost_if(!prompt_kept(&detail, PROMPT), "the prompt");
    row.recovered_if(
        !killed.is_empty()
            && names_all(&cut_off, &["trigger-long-running-operation", "srv", "failed"])
            && after == "Echo: back"
            && answered(&outcome),
        &format!("killed {killed:?}; the next call read {after:?}; the turn ended {outcome:?}"),
    );
    row.finish();
    rig.engine.shutdown(Duration::from_secs(5)).await;
}
