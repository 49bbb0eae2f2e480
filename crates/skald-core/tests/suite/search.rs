//! Search through the engine after a real turn: the ids it returns are the rows the session
//! view shows.

use serde_json::json;
use skald_protocol::{DebugMessage, ErrorCode, HitKind, SearchQuery, SessionListQuery};
use skald_testkit::Reply;

use super::turn::Rig;

#[tokio::test]
async fn a_turns_messages_and_calls_are_found_and_point_at_rows_of_the_session_view() {
    let rig = Rig::new("").await;
    std::fs::create_dir_all(rig.work.join("notes")).unwrap();
    std::fs::write(rig.work.join("notes/quokka.md"), "small marsupials\n").unwrap();
    rig.fake.push(Reply::tool_call("read_file", &json!({"path": "notes/quokka.md"}).to_string()));
    rig.fake.push(Reply::text("Quokkas are small marsupials."));
    let (sid, _, _) = rig.turn("what do my notes say about quokkas?").await;
    let other = rig.engine.new_session("elsewhere").await.unwrap();

    // A finished word ("quokka ") is not "quokkas": only the path holds it, as a substring.
    let found = rig.engine.search(SearchQuery::new("quokka ")).await.unwrap();
    let kinds: Vec<HitKind> = found.hits.iter().map(|h| h.at.kind).collect();
    assert_eq!(kinds, vec![HitKind::Tool], "{found:#?}");
    assert_eq!(found.hits[0].tool_name.as_deref(), Some("read_file"));
    let words = rig.engine.search(SearchQuery::new("quokkas")).await.unwrap();
    let mut kinds: Vec<HitKind> = words.hits.iter().map(|h| h.at.kind).collect();
    kinds.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(kinds, vec![HitKind::Assistant, HitKind::User], "{words:#?}");

    let prefix = rig.engine.find_in_session(sid, "quokk").await.unwrap();
    assert_eq!(prefix.matches.len(), 3, "the typed prefix matches the words and the path");
    // Every match is a row the session view lists, in the view's order.
    let detail = rig.engine.session_detail(sid).await.unwrap();
    let positions: Vec<usize> = prefix
        .matches
        .iter()
        .map(|m| {
            detail
                .messages
                .iter()
                .position(|row| match (row, m.tool_call_id) {
                    (DebugMessage::Tool { tool_call_id, .. }, Some(id)) => *tool_call_id == id,
                    (DebugMessage::User { message_id, .. }, None)
                    | (DebugMessage::Assistant { message_id, .. }, None) => {
                        *message_id == m.message_id
                    }
                    _ => false,
                })
                .unwrap_or_else(|| panic!("{m:?} is not a row of {detail:#?}"))
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert!(rig.engine.find_in_session(other, "quokk").await.unwrap().matches.is_empty());
    let missing = rig.engine.find_in_session(other + 100, "quokk").await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);

    let list = rig
        .engine
        .list_sessions(SessionListQuery { search: Some("marsupials".into()), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(list.items.iter().map(|s| s.id).collect::<Vec<_>>(), vec![sid]);
    let best = list.items[0].best_hit.as_ref().unwrap();
    assert_eq!(best.at.kind, HitKind::Assistant);
    assert_eq!(list.items[0].hit_count, 1);
}
