use skald_protocol::ToolStatus;
use skald_store::StoreError;
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
