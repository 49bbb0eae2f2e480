//! Enum columns read back typed, and a value this build does not know never widens anything:
//! an unknown rule action reads as Deny, an unknown approval kind as the generic tool kind.

use skald_protocol::{ApprovalKind, RuleAction};
use skald_store::repo::approvals::RuleSeed;
use skald_store::repo::tools::NewToolCall;
use skald_store::{Store, StoreError};

/// Runs `sql` past the column CHECKs, as a hand edit or a damaged file would.
async fn write_unchecked(store: &Store, sql: &str) {
    let mut conn = store.pool().acquire().await.unwrap();
    sqlx::query("PRAGMA ignore_check_constraints = ON").execute(&mut *conn).await.unwrap();
    sqlx::query(sql).execute(&mut *conn).await.unwrap();
    sqlx::query("PRAGMA ignore_check_constraints = OFF").execute(&mut *conn).await.unwrap();
}

#[tokio::test]
async fn a_rule_with_an_unknown_action_reads_as_deny() {
    let (_dir, store, _clock) = super::fresh().await;
    let seed = |key, action| RuleSeed {
        key,
        tool_pattern: "execute_cmd",
        path_pattern: None,
        action,
        priority: 10,
        note: "test",
    };
    store
        .seed_rules(&[
            seed("known-allow", RuleAction::Allow),
            seed("known-require", RuleAction::Require),
        ])
        .await
        .unwrap();
    write_unchecked(
        &store,
        "INSERT INTO approval_rules (group_id, tool_pattern, action, priority, created_at) \
         VALUES ('default', 'write_file', 'ask_twice', 20, '2026-01-01T00:00:00Z')",
    )
    .await;
    let rules = store.rules("default").await.unwrap();
    let actions: Vec<(&str, RuleAction)> =
        rules.iter().map(|r| (r.tool_pattern.as_str(), r.action)).collect();
    assert_eq!(
        actions,
        [
            ("execute_cmd", RuleAction::Allow),
            ("execute_cmd", RuleAction::Require),
            ("write_file", RuleAction::Deny)
        ]
    );
    assert_eq!(store.all_rules().await.unwrap(), rules);
    // Stored text is the snake_case name.
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT action FROM approval_rules ORDER BY priority, id")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert_eq!(stored, ["allow", "require", "ask_twice"]);
}

#[tokio::test]
async fn an_approval_request_of_an_unknown_kind_reads_as_a_tool_call() {
    let (_dir, store, _clock) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let calls = store
        .append_tool_calls(&[
            NewToolCall {
                message_id: msg,
                name: "execute_cmd".into(),
                arguments: "{}".into(),
                provider_call_id: None,
            },
            NewToolCall {
                message_id: msg,
                name: "mcp__x__y".into(),
                arguments: "{}".into(),
                provider_call_id: None,
            },
        ])
        .await
        .unwrap();
    store.create_approval_request(&super::command_request(&s, calls[0])).await.unwrap();
    write_unchecked(
        &store,
        &format!(
            "INSERT INTO approval_requests (tool_call_id, session_id, stack_id, kind, tool_name, \
             arguments, summary, created_at) VALUES ({}, {}, {}, 'mcp_call', 'mcp__x__y', '{{}}', \
             'call y', '2026-01-01T00:00:00Z')",
            calls[1], s.session_id, s.root_stack_id
        ),
    )
    .await;
    let command = store.approval_request(calls[0]).await.unwrap().unwrap();
    assert_eq!(command.kind, ApprovalKind::Command);
    let unknown = store.approval_request(calls[1]).await.unwrap().unwrap();
    assert_eq!(unknown.kind, ApprovalKind::Tool);
    let mut inbox: Vec<(i64, ApprovalKind)> =
        store.open_approvals().await.unwrap().iter().map(|r| (r.tool_call_id, r.kind)).collect();
    inbox.sort_unstable_by_key(|(id, _)| *id);
    assert_eq!(
        inbox,
        [(calls[0], ApprovalKind::Command), (calls[1], ApprovalKind::Tool)],
        "both still wait for a decision"
    );
}

#[tokio::test]
async fn an_unknown_message_role_is_a_corrupt_row() {
    let (_dir, store, _clock) = super::fresh().await;
    let (s, _msg) = super::session_with_reply(&store).await;
    write_unchecked(
        &store,
        &format!(
            "INSERT INTO chat_history (session_stack_id, role, content, created_at) \
             VALUES ({}, 'system', 'x', '2026-01-01T00:00:00Z')",
            s.root_stack_id
        ),
    )
    .await;
    let rows = store.messages_for_stack(s.root_stack_id).await.unwrap();
    let err = rows.last().unwrap().role().unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { column: "chat_history.role", value } if value == "system"),
        "{err}"
    );
}
