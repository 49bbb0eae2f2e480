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
    FrameReplay {
        summary,
        from,
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
