use skald_protocol::TurnEnd;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::tools::NewToolCall;

/// Every outcome comes back as it was recorded, in order, placed after the session's newest row.
#[tokio::test]
async fn turn_ends_round_trip_every_outcome_in_order() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let ends = [
        TurnEnd::Final { message_id: msg },
        TurnEnd::Cancelled {},
        TurnEnd::Exhausted { rounds: 3 },
        TurnEnd::Parked { tool_call_ids: vec![5, 6] },
        TurnEnd::Failed { reason: "every model failed".into() },
    ];
    for end in &ends {
        let stored = store.record_turn_end(s.session_id, s.root_stack_id, end).await.unwrap();
        assert_eq!((&stored.outcome, stored.after_message_id), (end, Some(msg)));
    }
    let read = store.turn_ends(s.session_id).await.unwrap();
    assert_eq!(read.iter().map(|t| t.outcome.clone()).collect::<Vec<_>>(), ends);
    assert!(read.windows(2).all(|w| w[0].id < w[1].id));
    assert!(read.iter().all(|t| t.stack_id == s.root_stack_id));
}

/// A frame's lineage climbs through the calls that spawned it, root first.
#[tokio::test]
async fn a_frame_lineage_climbs_to_the_root() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let call = |message_id| NewToolCall {
        message_id,
        name: "execute_subtask".into(),
        arguments: "{}".into(),
        provider_call_id: None,
    };
    let spawn = store.append_tool_calls(&[call(msg)]).await.unwrap()[0];
    let child =
        store.create_child_frame(s.session_id, "researcher", "look", 1, spawn).await.unwrap();
    let child_msg = store
        .append_message(&NewMessage {
            stack_id: child,
            role: Some(Role::Assistant),
            ..Default::default()
        })
        .await
        .unwrap();
    let spawn2 = store.append_tool_calls(&[call(child_msg)]).await.unwrap()[0];
    let grandchild =
        store.create_child_frame(s.session_id, "coder", "fix", 2, spawn2).await.unwrap();
    let lineage = store.frame_lineage(grandchild).await.unwrap();
    let ids: Vec<i64> = lineage.iter().map(|f| f.id).collect();
    assert_eq!(ids, [s.root_stack_id, child, grandchild]);
    assert_eq!(store.frame_lineage(s.root_stack_id).await.unwrap().len(), 1);
    assert!(store.frame_lineage(9_999).await.is_err());
}

/// A window of the transcript reads the ends placed between its rows; an open side reads on.
#[tokio::test]
async fn turn_ends_between_rows_are_the_ones_placed_there() {
    let (_dir, store, _) = super::fresh().await;
    let (s, first) = super::session_with_reply(&store).await;
    let early = store.record_turn_end(s.session_id, s.root_stack_id, &TurnEnd::Cancelled {}).await;
    let second = store
        .append_message(&NewMessage {
            stack_id: s.root_stack_id,
            role: Some(Role::Assistant),
            ..Default::default()
        })
        .await
        .unwrap();
    let late = TurnEnd::Final { message_id: second };
    let late = store.record_turn_end(s.session_id, s.root_stack_id, &late).await.unwrap();
    let early = early.unwrap();
    assert_eq!((early.after_message_id, late.after_message_id), (Some(first), Some(second)));

    let ids = |ends: Vec<skald_protocol::EndedTurn>| ends.iter().map(|t| t.id).collect::<Vec<_>>();
    let between = |from, to| store.turn_ends_between(s.session_id, from, to);
    assert_eq!(ids(between(None, None).await.unwrap()), [early.id, late.id]);
    assert_eq!(ids(between(None, Some(first)).await.unwrap()), [early.id], "up to the first row");
    assert_eq!(ids(between(Some(second), None).await.unwrap()), [late.id], "from the second row");
    assert_eq!(ids(between(Some(first + 1), Some(second - 1)).await.unwrap()), Vec::<i64>::new());
}
