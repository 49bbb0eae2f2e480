//! Windows of the session tree (`session_window`): every window is the matching slice of the
//! full tree, whatever the shape of the session (interleaved sub-agents, nested frames, calls
//! with several children) and wherever the window starts; long texts come as previews.

use proptest::prelude::*;
use skald_core::session::{debug_tree, window};
use skald_protocol::{DebugMessage, ItemRef, WindowAnchor, WindowQuery};
use skald_store::Store;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::NewSession;

fn no_labels(_: &str, _: &serde_json::Value) -> Option<String> {
    None
}

/// One step of a generated session: which open frame it writes to and what.
#[derive(Debug, Clone)]
enum Step {
    User(usize),
    Answer(usize),
    /// An assistant row with this many calls.
    Calls(usize, usize),
    /// A sub-agent spawned by one of the calls made so far (picked by index).
    Spawn(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0usize..8).prop_map(Step::User),
        (0usize..8).prop_map(Step::Answer),
        ((0usize..8), (1usize..4)).prop_map(|(f, n)| Step::Calls(f, n)),
        (0usize..64).prop_map(Step::Spawn),
    ]
}

/// Writes the steps into a fresh session; frames are written to in turn, so the ids of parent
/// and child rows interleave the way parallel and asynchronous sub-agents leave them.
async fn build(store: &Store, steps: &[Step]) -> i64 {
    let created = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let sid = created.session_id;
    // (frame id, depth)
    let mut frames = vec![(created.root_stack_id, 0_i64)];
    // (call id, depth of its frame)
    let mut calls: Vec<(i64, i64)> = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        let text = format!("row {n} — ünïcode");
        match *s {
            Step::User(f) | Step::Answer(f) => {
                let (stack_id, _) = frames[f % frames.len()];
                let role = if matches!(s, Step::User(_)) { Role::User } else { Role::Assistant };
                let msg =
                    NewMessage { stack_id, role: Some(role), content: text, ..Default::default() };
                store.append_message(&msg).await.unwrap();
            }
            Step::Calls(f, count) => {
                let (stack_id, depth) = frames[f % frames.len()];
                let msg = NewMessage {
                    stack_id,
                    role: Some(Role::Assistant),
                    content: text,
                    ..Default::default()
                };
                let specs: Vec<(String, String, Option<String>)> = (0..count)
                    .map(|k| ("read_file".to_string(), format!(r#"{{"path":"f{n}-{k}"}}"#), None))
                    .collect();
                let (_, ids) = store.append_assistant_with_calls(&msg, &specs).await.unwrap();
                for id in ids {
                    store
                        .set_tool_status(
                            id,
                            skald_protocol::ToolStatus::Done,
                            Some(&format!("result {id}")),
                        )
                        .await
                        .unwrap();
                    calls.push((id, depth));
                }
            }
            Step::Spawn(pick) if !calls.is_empty() => {
                let (call, depth) = calls[pick % calls.len()];
                let child =
                    store.create_child_frame(sid, "helper", &text, depth + 1, call).await.unwrap();
                store
                    .append_message(&NewMessage {
                        stack_id: child,
                        role: Some(Role::Agent),
                        content: text,
                        ..Default::default()
                    })
                    .await
                    .unwrap();
                frames.push((child, depth + 1));
            }
            Step::Spawn(_) => {}
        }
    }
    sid
}

async fn win(
    store: &Store,
    sid: i64,
    anchor: WindowAnchor,
    limit: u32,
) -> skald_protocol::SessionWindow {
    window::load(store, sid, WindowQuery { anchor, limit }, &no_labels).await.unwrap()
}

async fn check_every_window(steps: Vec<Step>, limit: u32) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_dir(dir.path()).await.unwrap();
    let sid = build(&store, &steps).await;
    let full = debug_tree::load(&store, sid, &no_labels).await.unwrap().messages;
    let (n, l) = (full.len(), limit as usize);

    let latest = win(&store, sid, WindowAnchor::Latest, limit).await;
    assert_eq!(latest.items, full[n.saturating_sub(l)..], "latest");
    assert_eq!((latest.has_more_before, latest.has_more_after), (n > l, false));

    for (i, row) in full.iter().enumerate() {
        let item = ItemRef::of(row);
        let before = win(&store, sid, WindowAnchor::Before { item }, limit).await;
        assert_eq!(before.items, full[i.saturating_sub(l)..i], "before {i} ({item:?})");
        assert_eq!(before.has_more_before, i > l, "before {i}: more");

        let after = win(&store, sid, WindowAnchor::After { item }, limit).await;
        assert_eq!(after.items, full[i + 1..(i + 1 + l).min(n)], "after {i} ({item:?})");
        assert_eq!(after.has_more_after, i + 1 + l < n, "after {i}: more");

        let around = win(&store, sid, WindowAnchor::Around { item }, limit).await;
        let start = i.saturating_sub((l - 1) / 2);
        assert_eq!(around.items, full[start..(start + l).min(n)], "around {i} ({item:?})");
        assert_eq!(around.anchor_index, Some(u32::try_from(i - start).unwrap()));
        assert_eq!((around.has_more_before, around.has_more_after), (start > 0, start + l < n));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_window_is_the_matching_slice_of_the_full_tree(
        steps in proptest::collection::vec(step(), 1..28),
        limit in 1u32..7,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(check_every_window(steps, limit));
    }
}

/// Paging back from the newest window, one `before` at a time, reads the whole tree once, and
/// so does paging forward from its first row.
#[tokio::test]
async fn paging_back_and_forth_reads_the_whole_tree_once() {
    use Step::*;
    let steps = [
        User(0),
        Calls(0, 2),
        Spawn(0),
        Spawn(1),
        Answer(1),
        Calls(2, 1),
        User(2),
        Spawn(2),
        Answer(0),
        Calls(3, 2),
        Answer(3),
        Answer(0),
    ];
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_dir(dir.path()).await.unwrap();
    let sid = build(&store, &steps).await;
    let full = debug_tree::load(&store, sid, &no_labels).await.unwrap().messages;
    assert!(
        full.iter().any(|m| matches!(m, DebugMessage::Agent { depth: 2, .. })),
        "nested frames"
    );

    let mut page = win(&store, sid, WindowAnchor::Latest, 3).await;
    let mut back = page.items.clone();
    while page.has_more_before {
        page = win(&store, sid, WindowAnchor::Before { item: ItemRef::of(&back[0]) }, 3).await;
        back.splice(0..0, page.items.clone());
    }
    assert_eq!(back, full);

    let first = ItemRef::of(&full[0]);
    let mut page = win(&store, sid, WindowAnchor::Around { item: first }, 3).await;
    let mut ahead = page.items.clone();
    while page.has_more_after {
        page =
            win(&store, sid, WindowAnchor::After { item: ItemRef::of(ahead.last().unwrap()) }, 3)
                .await;
        ahead.extend(page.items.clone());
    }
    assert_eq!(ahead, full);
}

/// Long texts come cut, with their whole length; `session_item` brings them whole.
#[tokio::test]
async fn long_texts_and_results_are_previews_and_the_item_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_dir(dir.path()).await.unwrap();
    let created = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let (sid, root) = (created.session_id, created.root_stack_id);
    let answer = "ä".repeat(25_000);
    let content = "x".repeat(3_000);
    let args = serde_json::json!({"path": "big.txt", "content": content}).to_string();
    let msg = NewMessage { stack_id: root, role: Some(Role::Assistant), ..Default::default() };
    let (_, ids) = store
        .append_assistant_with_calls(&msg, &[("write_file".into(), args, None)])
        .await
        .unwrap();
    let result = "r".repeat(5_000);
    store.set_tool_status(ids[0], skald_protocol::ToolStatus::Done, Some(&result)).await.unwrap();
    let answer_id = store
        .append_message(&NewMessage {
            stack_id: root,
            role: Some(Role::Assistant),
            content: answer.clone(),
            ..Default::default()
        })
        .await
        .unwrap();

    let page = win(&store, sid, WindowAnchor::Latest, 10).await;
    let DebugMessage::Tool {
        result: Some(shown), result_chars, truncated: true, arguments, ..
    } = &page.items[1]
    else {
        panic!("{:?}", page.items[1]);
    };
    assert_eq!((shown.len(), *result_chars), (2_000, 5_000));
    assert_eq!(arguments["path"], "big.txt", "short arguments stay whole");
    assert!(
        arguments["content"].as_str().unwrap().chars().count() < 2_100,
        "a long argument is cut"
    );
    let DebugMessage::Assistant { content: shown, content_chars, truncated: true, .. } =
        &page.items[2]
    else {
        panic!("{:?}", page.items[2]);
    };
    assert_eq!((shown.chars().count(), *content_chars), (20_000, 25_000));

    let whole = window::item(&store, sid, ItemRef::Tool { id: ids[0] }, &no_labels).await.unwrap();
    let DebugMessage::Tool { result: Some(r), truncated: false, arguments, .. } = whole else {
        panic!("{whole:?}")
    };
    assert_eq!((r, arguments["content"].as_str().unwrap()), (result, content.as_str()));
    let whole =
        window::item(&store, sid, ItemRef::Message { id: answer_id }, &no_labels).await.unwrap();
    assert!(
        matches!(whole, DebugMessage::Assistant { content, truncated: false, .. } if content == answer)
    );
}

/// A row of another session is no anchor and no item of this one.
#[tokio::test]
async fn rows_of_another_session_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_dir(dir.path()).await.unwrap();
    let sid = build(&store, &[Step::User(0)]).await;
    let other = build(&store, &[Step::User(0), Step::Answer(0)]).await;
    let theirs = debug_tree::load(&store, other, &no_labels).await.unwrap().messages;
    let item = ItemRef::of(&theirs[1]);
    for anchor in
        [WindowAnchor::Before { item }, WindowAnchor::After { item }, WindowAnchor::Around { item }]
    {
        let err = window::load(&store, sid, WindowQuery { anchor, limit: 5 }, &no_labels)
            .await
            .unwrap_err();
        assert!(matches!(err, skald_store::StoreError::NotFound { .. }), "{err}");
    }
    let err = window::item(&store, sid, item, &no_labels).await.unwrap_err();
    assert!(matches!(err, skald_store::StoreError::NotFound { .. }), "{err}");
}
