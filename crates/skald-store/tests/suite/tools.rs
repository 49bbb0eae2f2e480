use skald_protocol::ToolStatus;
use skald_store::StoreError;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::NewSession;
use skald_store::repo::tools::NewToolCall;

#[tokio::test]
async fn tool_calls_follow_the_state_machine_and_terminal_states_stick() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let calls = ["read_file", "write_file"].map(|name| NewToolCall {
        message_id: msg,
        name: name.into(),
        arguments: r#"{"path":"a"}"#.into(),
        provider_call_id: Some(format!("call_{name}")),
    });
    let ids = store.append_tool_calls(&calls).await.unwrap();
    assert!(ids[0] < ids[1], "ids allocated in call order");
    assert_eq!(store.tool_call(ids[0]).await.unwrap().status().unwrap(), ToolStatus::Pending);

    store.set_tool_status(ids[0], ToolStatus::Running, None).await.unwrap();
    store.set_tool_status(ids[0], ToolStatus::Done, Some("contents")).await.unwrap();
    let done = store.tool_call(ids[0]).await.unwrap();
    assert_eq!((done.status.as_str(), done.result.as_deref()), ("done", Some("contents")));

    let err = store.set_tool_status(ids[0], ToolStatus::Running, None).await.unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    store.set_tool_status(ids[1], ToolStatus::Rejected, Some("no")).await.unwrap();
    let listed = store.tool_calls_for_session(s.session_id).await.unwrap();
    assert_eq!(listed.iter().map(|t| t.id).collect::<Vec<_>>(), ids.to_vec());
}

/// Only an undecided approval or an unanswered question holds a session for a human; a decided
/// but unsettled call, a call never gated and another session's parked call do not.
#[tokio::test]
async fn calls_awaiting_a_human_are_the_undecided_and_unanswered_ones() {
    use skald_store::repo::approvals::{NewApprovalRequest, NewDecision};

    let (_dir, store, _) = super::fresh().await;
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let other = store.create_session(&NewSession::interactive("cli")).await.unwrap();
    let assistant =
        |stack_id| NewMessage { stack_id, role: Some(Role::Assistant), ..Default::default() };
    let msg = store.append_message(&assistant(s.root_stack_id)).await.unwrap();
    let other_msg = store.append_message(&assistant(other.root_stack_id)).await.unwrap();
    let call = |message_id, name: &str| NewToolCall {
        message_id,
        name: name.into(),
        arguments: "{}".into(),
        provider_call_id: None,
    };
    let ids = store
        .append_tool_calls(&[
            call(msg, "execute_cmd"),
            call(msg, "write_file"),
            call(msg, "ask_user_clarification"),
            call(msg, "ask_user_clarification"),
            call(msg, "read_file"),
            call(other_msg, "execute_cmd"),
        ])
        .await
        .unwrap();
    let park = |id: i64, session_id: i64, stack_id: i64| NewApprovalRequest {
        tool_call_id: id,
        session_id,
        stack_id,
        kind: skald_protocol::ApprovalKind::Command,
        tool_name: "execute_cmd".into(),
        arguments: "{}".into(),
        path: None,
        command: None,
        workdir: None,
        diff: None,
        summary: "run".into(),
    };
    for id in [ids[0], ids[1]] {
        store.create_approval_request(&park(id, s.session_id, s.root_stack_id)).await.unwrap();
    }
    store
        .create_approval_request(&park(ids[5], other.session_id, other.root_stack_id))
        .await
        .unwrap();
    for id in [ids[2], ids[3]] {
        store
            .create_question(id, s.session_id, s.root_stack_id, "Q", "which?", "[]")
            .await
            .unwrap();
    }
    store
        .decide(&NewDecision {
            tool_call_id: ids[1],
            approved: true,
            note: None,
            decided_by: "test".into(),
            bypass: None,
        })
        .await
        .unwrap();
    store.answer_question(ids[3], "this one", "test").await.unwrap();

    assert_eq!(store.calls_awaiting_human(s.session_id).await.unwrap(), [ids[0], ids[2]]);
    assert_eq!(store.calls_awaiting_human(other.session_id).await.unwrap(), [ids[5]]);
    store.set_tool_status(ids[0], ToolStatus::Cancelled, None).await.unwrap();
    assert_eq!(store.calls_awaiting_human(s.session_id).await.unwrap(), [ids[2]]);
}
