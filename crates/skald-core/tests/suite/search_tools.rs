//! `search_files` and `find_files` through a real turn: the gate judges where a search starts,
//! and the session's deny rules and protected places hide what lies below it.

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{ApprovalRuleInput, Event, RuleAction};
use skald_testkit::Reply;

use crate::suite::turn::Rig;

/// The results of the turn's finished tool calls, in order.
fn results(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolDone { result, .. } => Some(result.clone()),
            _ => None,
        })
        .collect()
}

/// A project where the same word sits in an ordinary file, under `secrets/` (the seeded deny
/// rule) and in `private.txt` (a deny rule the test adds).
async fn project() -> Rig {
    let rig = Rig::new("").await;
    std::fs::create_dir_all(rig.work.join("src")).unwrap();
    std::fs::create_dir_all(rig.work.join("secrets")).unwrap();
    std::fs::write(rig.work.join("src/app.txt"), "TOKEN=public\n").unwrap();
    std::fs::write(rig.work.join("secrets/api-key.txt"), "TOKEN=sk-live-123\n").unwrap();
    std::fs::write(rig.work.join("private.txt"), "TOKEN=mine\n").unwrap();
    let rule = ApprovalRuleInput {
        group_id: None,
        tool_pattern: "@fs_read".into(),
        path_pattern: Some("private.txt".into()),
        agent_id: None,
        source: None,
        action: RuleAction::Deny,
        priority: 1,
        note: None,
    };
    rig.engine.save_approval_rule(None, rule).await.unwrap();
    rig
}

#[tokio::test]
async fn deny_rules_hide_files_from_both_search_tools() {
    let rig = project().await;
    rig.fake.push(Reply::tool_call("search_files", &json!({"pattern": "TOKEN"}).to_string()));
    rig.fake.push(Reply::tool_call("find_files", &json!({"pattern": "*.txt"}).to_string()));
    rig.fake.push(Reply::tool_call("list_dir", &json!({"depth": 2}).to_string()));
    rig.fake.push(Reply::text("done"));
    let (_, outcome, events) = rig.turn("find the tokens").await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let done = results(&events);
    assert_eq!(done.len(), 3, "{done:?}");
    let (search, find, listed) = (&done[0], &done[1], &done[2]);
    assert!(listed.contains("src/app.txt") && !listed.contains("private.txt"), "{listed}");
    assert!(search.contains("src/app.txt:1:TOKEN=public"), "{search}");
    assert!(find.contains("src/app.txt"), "{find}");
    for shown in [search, find] {
        assert!(!shown.contains("secrets") && !shown.contains("sk-live"), "{shown}");
        assert!(!shown.contains("private.txt") && !shown.contains("mine"), "{shown}");
    }
    // Asked for by name, the denied places are refused before anything is read.
    rig.fake.push(Reply::tool_call(
        "search_files",
        &json!({"pattern": "TOKEN", "path": "secrets"}).to_string(),
    ));
    rig.fake.push(Reply::text("done"));
    let (_, _, events) = rig.turn("look in secrets").await;
    let rejected = events.iter().any(|e| matches!(e, Event::ToolRejected { .. }));
    assert!(rejected && results(&events).is_empty(), "{events:?}");
}

/// A turn whose one search must ask a person: it parks, with the place it would search named.
async fn parked_search(
    rig: &Rig,
    source: &str,
    args: serde_json::Value,
) -> skald_protocol::InboxItem {
    rig.fake.push(Reply::tool_call("search_files", &args.to_string()));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message(source, "search", opts).await.unwrap();
    let outcome = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{args}: {outcome:?}");
    let items = rig.engine.inbox().await.unwrap().items;
    let mine: Vec<_> = items.into_iter().filter(|i| i.session_id == receipt.session_id).collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    mine.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_search_outside_the_readable_roots_asks_and_links_out_are_not_followed() {
    let rig = project().await;
    let outside = std::fs::canonicalize(rig.dir.path()).unwrap().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("loot.txt"), "TOKEN=outside\n").unwrap();
    std::os::unix::fs::symlink(&outside, rig.work.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("loot.txt"), rig.work.join("loot-link.txt")).unwrap();

    // From inside, neither link is followed: nothing outside shows.
    rig.fake.push(Reply::tool_call("search_files", &json!({"pattern": "TOKEN"}).to_string()));
    rig.fake.push(Reply::tool_call("find_files", &json!({"pattern": "*.txt"}).to_string()));
    rig.fake.push(Reply::text("done"));
    let (_, _, events) = rig.turn("search").await;
    for shown in results(&events) {
        assert!(!shown.contains("outside") && !shown.contains("loot"), "{shown}");
    }

    // Rooted outside (through `..`, an absolute path, or a link), the search asks by the real place.
    let real = outside.display().to_string();
    // Each from its own source, so each is a session of its own (a parked one takes no new turn).
    for (i, path) in ["../elsewhere", real.as_str(), "link"].into_iter().enumerate() {
        let args = json!({"pattern": "TOKEN", "path": path});
        let item = parked_search(&rig, &format!("searcher-{i}"), args).await;
        assert_eq!(item.path.as_deref(), Some(real.as_str()), "{path}: {item:?}");
    }
}
