use skald_store::Store;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::replay::{FrameReplay, ReplayWindow};
use skald_store::repo::sessions::NewSession;
use skald_store::repo::tools::NewToolCall;

/// Where a tail of `keep` messages starts, worked out from the whole frame: before the
/// `keep + 1`-th newest live row, or before the newest live prompt if that is older.
async fn tail_start(store: &Store, stack: i64, boundary: i64, keep: usize) -> i64 {
    let live: Vec<_> = store
        .messages_for_stack_after(stack, boundary)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.status == "ok")
        .collect();
    let Some(nth) = live.iter().rev().nth(keep).map(|m| m.id) else { return boundary };
    let prompt = live.iter().filter(|m| m.role == "user" || m.role == "agent").map(|m| m.id).max();
    prompt.unwrap_or(nth).min(nth) - 1
}

/// The same replay assembled from separate reads.
async fn read_separately(
    store: &Store,
    stack: i64,
    session: i64,
    window: ReplayWindow,
) -> FrameReplay {
    let summary = store.latest_summary(stack).await.unwrap();
    let boundary = summary.as_ref().map_or(0, |s| s.covers_up_to_message_id);
    let from = match window {
        ReplayWindow::SinceSummary => boundary,
        ReplayWindow::Tail(keep) => tail_start(store, stack, boundary, keep).await,
    };
    let max_tool_id: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM chat_llm_tools")
        .fetch_one(store.pool())
        .await
        .unwrap();
    FrameReplay {
        summary,
        from,
        max_tool_id,
        messages: store.messages_for_stack_after(stack, from).await.unwrap(),
        tools: store.tool_calls_for_stack_after(stack, from).await.unwrap(),
        notes: store.scratchpad(session).await.unwrap(),
    }
}

async fn append(store: &Store, stack: i64, role: Role, text: &str) -> i64 {
    store
        .append_message(&NewMessage {
            stack_id: stack,
            role: Some(role),
            content: text.into(),
            is_synthetic: text.starts_with("synthetic"),
            ..Default::default()
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn one_statement_reads_what_the_separate_reads_return() {
    let (_dir, store, _) = super::fresh().await;
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let other = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let stack = s.root_stack_id;

    // An empty frame: no summary, no rows, no notes.
    for window in [ReplayWindow::SinceSummary, ReplayWindow::Tail(3)] {
        let one = store.frame_replay(stack, s.session_id, window).await.unwrap();
        assert_eq!(one, read_separately(&store, stack, s.session_id, window).await);
        assert_eq!((one.summary, one.from, one.messages.len()), (None, 0, 0));
    }

    // Three turns with calls, a failed prompt, a synthetic row and notes in both sessions.
    let mut ids = Vec::new();
    for turn in 0..3 {
        ids.push(append(&store, stack, Role::User, &format!("question {turn}")).await);
        let asked = append(&store, stack, Role::Assistant, "").await;
        let calls = ["read_file", "run"].map(|name| NewToolCall {
            message_id: asked,
            name: name.into(),
            arguments: format!(r#"{{"turn":{turn}}}"#),
            provider_call_id: Some(format!("call_{turn}_{name}")),
        });
        store.append_tool_calls(&calls).await.unwrap();
        ids.push(asked);
        ids.push(append(&store, stack, Role::Assistant, &format!("answer {turn}")).await);
    }
    let failed = append(&store, stack, Role::User, "this one failed").await;
    store.mark_message_failed(failed).await.unwrap();
    append(&store, stack, Role::User, "synthetic: a reminder").await;
    store.set_scratchpad(s.session_id, "plan", "b then a").await.unwrap();
    store.set_scratchpad(s.session_id, "goal", "ship").await.unwrap();
    store.set_scratchpad(other.session_id, "goal", "not mine").await.unwrap();

    for window in [
        ReplayWindow::SinceSummary,
        ReplayWindow::Tail(2),
        ReplayWindow::Tail(4),
        ReplayWindow::Tail(50),
    ] {
        let one = store.frame_replay(stack, s.session_id, window).await.unwrap();
        assert_eq!(one, read_separately(&store, stack, s.session_id, window).await, "{window:?}");
    }
    let all = store.frame_replay(stack, s.session_id, ReplayWindow::SinceSummary).await.unwrap();
    assert_eq!(all.messages.len(), 11);
    assert_eq!(all.tools.len(), 6);
    assert!(all.messages.last().unwrap().is_synthetic);
    assert_eq!(all.notes, vec![("goal".into(), "ship".into()), ("plan".into(), "b then a".into())]);
    let tail = store.frame_replay(stack, s.session_id, ReplayWindow::Tail(2)).await.unwrap();
    assert!(tail.from > 0 && tail.messages.len() < all.messages.len(), "{tail:?}");

    // After a compaction only what follows its boundary is replayed, with the summary.
    store.append_summary(stack, "turns 0 and 1", ids[5], 900, 40).await.unwrap();
    for window in [ReplayWindow::SinceSummary, ReplayWindow::Tail(3)] {
        let one = store.frame_replay(stack, s.session_id, window).await.unwrap();
        assert_eq!(one, read_separately(&store, stack, s.session_id, window).await, "{window:?}");
        assert_eq!(one.summary.as_ref().map(|s| s.content.as_str()), Some("turns 0 and 1"));
        assert!(one.messages.iter().all(|m| m.id > ids[5]));
    }
}

/// The delta holds exactly what changed after the cursor: new rows of the frame (not another
/// frame's), the prompts asked for again, new calls, the open calls as they are now (with what
/// they wait for), the latest summary's id and the notes.
#[tokio::test]
async fn frame_delta_returns_what_changed_after_the_cursor() {
    use skald_protocol::ToolStatus;
    use skald_store::repo::approvals::NewApprovalRequest;
    use skald_store::repo::replay_delta::DeltaCursor;
    use skald_store::repo::tools::Awaits;

    let (_dir, store, _) = super::fresh().await;
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let other = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let stack = s.root_stack_id;
    append(&store, stack, Role::User, "question").await;
    let asked = append(&store, stack, Role::Assistant, "").await;
    let calls = ["read_file", "run"].map(|name| NewToolCall {
        message_id: asked,
        name: name.into(),
        arguments: "{}".into(),
        provider_call_id: None,
    });
    let ids = store.append_tool_calls(&calls).await.unwrap();
    store.set_tool_status(ids[0], ToolStatus::Done, Some("text")).await.unwrap();
    let before = store.frame_replay(stack, s.session_id, ReplayWindow::SinceSummary).await.unwrap();
    assert_eq!(before.max_tool_id, ids[1]);
    let prompt = append(&store, stack, Role::User, "a steer").await;

    // After the cursor: the open call is decided on, another frame gets a call, this one a
    // reply with a call, and a note.
    store
        .create_approval_request(&NewApprovalRequest {
            tool_call_id: ids[1],
            session_id: s.session_id,
            stack_id: stack,
            kind: skald_protocol::ApprovalKind::Command,
            tool_name: "run".into(),
            arguments: "{}".into(),
            path: None,
            command: Some("ls".into()),
            workdir: None,
            diff: None,
            summary: "run ls".into(),
        })
        .await
        .unwrap();
    let elsewhere = append(&store, other.root_stack_id, Role::Assistant, "").await;
    store
        .append_tool_calls(&[NewToolCall {
            message_id: elsewhere,
            name: "run".into(),
            arguments: "{}".into(),
            provider_call_id: None,
        }])
        .await
        .unwrap();
    let reply = append(&store, stack, Role::Assistant, "").await;
    let new = store
        .append_tool_calls(&[NewToolCall {
            message_id: reply,
            name: "run".into(),
            arguments: "{}".into(),
            provider_call_id: None,
        }])
        .await
        .unwrap();
    store.set_scratchpad(s.session_id, "plan", "go").await.unwrap();

    let cursor = DeltaCursor {
        after_message_id: prompt - 1,
        after_tool_id: before.max_tool_id,
        open_calls: vec![ids[1]],
    };
    let delta = store.frame_delta(stack, s.session_id, &cursor).await.unwrap();
    let rows: Vec<i64> = delta.messages.iter().map(|m| m.id).collect();
    assert_eq!(rows, [prompt, reply]);
    let calls: Vec<(i64, Option<Awaits>)> = delta.tools.iter().map(|c| (c.id, c.awaits)).collect();
    assert_eq!(calls, [(ids[1], Some(Awaits::Approval)), (new[0], None)]);
    assert_eq!(delta.max_tool_id, new[0]);
    assert_eq!(delta.summary_id, None);
    assert_eq!(delta.notes, vec![("plan".into(), "go".into())]);

    // Nothing after the new cursor but the open call; a summary shows as its id.
    let summary = store.append_summary(stack, "so far", asked, 10, 2).await.unwrap();
    let cursor = DeltaCursor {
        after_message_id: reply,
        after_tool_id: delta.max_tool_id,
        open_calls: vec![ids[1]],
    };
    let delta = store.frame_delta(stack, s.session_id, &cursor).await.unwrap();
    assert!(delta.messages.is_empty());
    assert_eq!(delta.tools.iter().map(|c| c.id).collect::<Vec<_>>(), [ids[1]]);
    assert_eq!(delta.summary_id, Some(summary));
}

/// Only a prompt no reply follows (a crash's orphan) can be marked failed: what the model has
/// answered never changes.
#[tokio::test]
async fn only_an_unanswered_prompt_is_marked_failed() {
    let (_dir, store, _) = super::fresh().await;
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let stack = s.root_stack_id;
    let answered = append(&store, stack, Role::User, "question").await;
    append(&store, stack, Role::Assistant, "answer").await;
    let orphan = append(&store, stack, Role::User, "never answered").await;
    store.mark_message_failed(answered).await.unwrap();
    store.mark_message_failed(orphan).await.unwrap();
    let status: Vec<(i64, String)> = store
        .messages_for_stack(stack)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.status))
        .collect();
    assert_eq!(status[0], (answered, "ok".into()));
    assert_eq!(status[2], (orphan, "failed".into()));
}
