use std::sync::Arc;

use skald_protocol::{HitKind, MatchRef, SearchQuery, SessionListQuery, SnippetPart, ToolStatus};
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::{CreatedSession, NewSession};
use skald_store::repo::tools::NewToolCall;
use skald_store::{Store, StoreError, SystemClock};

async fn say(store: &Store, stack_id: i64, role: Role, content: &str) -> i64 {
    store
        .append_message(&NewMessage {
            stack_id,
            role: Some(role),
            content: content.into(),
            ..Default::default()
        })
        .await
        .unwrap()
}

async fn call(store: &Store, message_id: i64, name: &str, arguments: &str) -> i64 {
    let call = NewToolCall {
        message_id,
        name: name.into(),
        arguments: arguments.into(),
        provider_call_id: None,
    };
    store.append_tool_calls(&[call]).await.unwrap()[0]
}

async fn session(store: &Store) -> CreatedSession {
    store.create_session(&NewSession::interactive("web")).await.unwrap()
}

/// (message id, tool call id) of each hit, best first.
async fn hits(store: &Store, text: &str) -> Vec<(i64, Option<i64>)> {
    let found = store.search(&SearchQuery::new(text)).await.unwrap();
    found.hits.iter().map(|h| (h.at.message_id, h.at.tool_call_id)).collect()
}

fn highlighted(snippet: &[SnippetPart]) -> Vec<&str> {
    snippet.iter().filter(|p| p.hit).map(|p| p.text.as_str()).collect()
}

#[tokio::test]
async fn the_bundled_sqlite_has_fts5_with_the_trigram_tokenizer() {
    let (_dir, store, _) = super::fresh().await;
    let fts5: i64 = sqlx::query_scalar("SELECT sqlite_compileoption_used('ENABLE_FTS5')")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(fts5, 1);
    // `remove_diacritics` for trigram needs SQLite 3.45; the migration relies on it.
    sqlx::query(
        "CREATE VIRTUAL TABLE temp.probe USING fts5(x, tokenize = 'trigram remove_diacritics 1')",
    )
    .execute(store.pool())
    .await
    .unwrap();
}

#[tokio::test]
async fn messages_are_found_by_words_across_sessions_with_marked_snippets() {
    let (_dir, store, _) = super::fresh().await;
    let a = session(&store).await;
    let b = session(&store).await;
    let user = say(&store, a.root_stack_id, Role::User, "Please fix the parser in the café").await;
    say(&store, a.root_stack_id, Role::Assistant, "Done: nothing else changed").await;
    let other =
        say(&store, b.root_stack_id, Role::Assistant, "The PARSER now handles <b>tags</b>").await;

    let found = store.search(&SearchQuery::new("parser")).await.unwrap();
    assert!(!found.more);
    let mut got: Vec<_> = found.hits.iter().map(|h| (h.session_id, h.at)).collect();
    got.sort_by_key(|(s, _)| *s);
    assert_eq!(
        got,
        vec![
            (a.session_id, MatchRef { message_id: user, tool_call_id: None, kind: HitKind::User }),
            (
                b.session_id,
                MatchRef { message_id: other, tool_call_id: None, kind: HitKind::Assistant }
            ),
        ]
    );
    let b_hit = found.hits.iter().find(|h| h.session_id == b.session_id).unwrap();
    assert_eq!(highlighted(&b_hit.snippet), vec!["PARSER"]);
    // Markup in the text stays text; only the marker characters became highlights.
    let text: String = b_hit.snippet.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(text, "The PARSER now handles <b>tags</b>");
    // Diacritics fold: `cafe` finds `café`.
    assert_eq!(hits(&store, "cafe").await, vec![(user, None)]);
}

#[tokio::test]
async fn the_last_word_matches_as_a_prefix_while_it_is_typed() {
    let (_dir, store, _) = super::fresh().await;
    let s = session(&store).await;
    let m = say(&store, s.root_stack_id, Role::User, "refactor the tokenizer").await;
    assert_eq!(hits(&store, "refactor toke").await, vec![(m, None)]);
    assert_eq!(hits(&store, "tokenizer refac").await, vec![(m, None)]);
    // A finished word (followed by a space or another word) must match whole.
    assert_eq!(hits(&store, "toke ").await, vec![]);
    assert_eq!(hits(&store, "toke refactor").await, vec![]);
    assert_eq!(hits(&store, "refac tokenizer").await, vec![]);
}

#[tokio::test]
async fn tool_calls_are_found_by_name_path_and_command_substrings() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let read =
        call(&store, msg, "read_file", r#"{"path":"crates/skald-store/src/repo/sessions.rs"}"#)
            .await;
    let exec =
        call(&store, msg, "execute_cmd", r#"{"command":"cargo nextest run -p skald-store"}"#).await;
    let many =
        call(&store, msg, "mcp__fs__read_multiple_files", r#"{"paths":["docs/a.md","ui/b.tsx"]}"#)
            .await;
    let write =
        call(&store, msg, "write_file", r#"{"path":"notes.txt","content":"the nextest secret"}"#)
            .await;
    call(&store, msg, "broken", r#"{"path": "unterminated"#).await;

    assert_eq!(hits(&store, "ssions.r").await, vec![(msg, Some(read))]);
    assert_eq!(
        hits(&store, "nextest").await,
        vec![(msg, Some(exec))],
        "written content is not indexed"
    );
    assert_eq!(hits(&store, "b.tsx").await, vec![(msg, Some(many))]);
    assert_eq!(hits(&store, "notes").await, vec![(msg, Some(write))]);
    assert_eq!(hits(&store, "secret").await, vec![]);
    // Words of a path in any order narrow together; a short word is checked too.
    assert_eq!(hits(&store, "repo skald-store").await, vec![(msg, Some(read))]);
    assert_eq!(hits(&store, "skald-store -p").await, vec![(msg, Some(exec))]);
    let found = store.search(&SearchQuery::new("nextest")).await.unwrap();
    let hit = &found.hits[0];
    assert_eq!((hit.session_id, hit.at.kind), (s.session_id, HitKind::Tool));
    assert_eq!(hit.tool_name.as_deref(), Some("execute_cmd"));
    assert_eq!(highlighted(&hit.snippet), vec!["nextest"]);
}

#[tokio::test]
async fn hits_are_ranked_and_limited_with_a_more_flag() {
    let (_dir, store, _) = super::fresh().await;
    let s = session(&store).await;
    let weak =
        say(&store, s.root_stack_id, Role::User, &format!("deploy {}", "filler words ".repeat(40)))
            .await;
    let strong = say(&store, s.root_stack_id, Role::User, "deploy deploy deploy").await;
    let mid = say(&store, s.root_stack_id, Role::User, "deploy the thing now").await;
    assert_eq!(hits(&store, "deploy").await, vec![(strong, None), (mid, None), (weak, None)]);
    let two = store.search(&SearchQuery { text: "deploy".into(), limit: 2 }).await.unwrap();
    assert_eq!(two.hits.len(), 2);
    assert!(two.more);
    let three = store.search(&SearchQuery { text: "deploy".into(), limit: 3 }).await.unwrap();
    assert!(!three.more);
}

#[tokio::test]
async fn triggers_keep_the_indexes_in_sync_on_update_and_delete() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let id = call(&store, msg, "read_file", r#"{"path":"old/place.rs"}"#).await;
    let user = say(&store, s.root_stack_id, Role::User, "before words").await;
    let exec = |sql: &'static str, id: i64| {
        let store = store.clone();
        async move { sqlx::query(sql).bind(id).execute(store.pool()).await.unwrap() }
    };

    exec("UPDATE chat_history SET content = 'after words' WHERE id = ?", user).await;
    assert_eq!(hits(&store, "before").await, vec![]);
    assert_eq!(hits(&store, "after").await, vec![(user, None)]);
    exec("UPDATE chat_history SET reasoning_content = 'hidden thought' WHERE id = ?", user).await;
    assert_eq!(hits(&store, "thought").await, vec![(user, None)]);

    // A status change with a result leaves the index alone: results are not searchable.
    store.set_tool_status(id, ToolStatus::Running, None).await.unwrap();
    store.set_tool_status(id, ToolStatus::Done, Some("zebra output")).await.unwrap();
    assert_eq!(hits(&store, "zebra").await, vec![]);
    assert_eq!(hits(&store, "place.rs").await, vec![(msg, Some(id))]);
    exec(r#"UPDATE chat_llm_tools SET arguments = '{"path":"new/spot.rs"}' WHERE id = ?"#, id)
        .await;
    assert_eq!(hits(&store, "place.rs").await, vec![]);
    assert_eq!(hits(&store, "spot.rs").await, vec![(msg, Some(id))]);

    exec("DELETE FROM chat_llm_tools WHERE id = ?", id).await;
    exec("DELETE FROM chat_history WHERE id = ?", user).await;
    assert_eq!(hits(&store, "spot.rs").await, vec![]);
    assert_eq!(hits(&store, "after").await, vec![]);
    assert_indexes_intact(&store).await;
}

/// FTS5's own check: every indexed row matches its content (for the external-content index,
/// that the triggers deleted exactly what they had indexed).
async fn assert_indexes_intact(store: &Store) {
    for sql in [
        "INSERT INTO message_fts (message_fts, rank) VALUES ('integrity-check', 1)",
        "INSERT INTO tool_fts (tool_fts) VALUES ('integrity-check')",
    ] {
        sqlx::query(sql).execute(store.pool()).await.unwrap();
    }
}

/// A database migrated up to (not including) migration `version`, its file's path and a pool.
async fn migrated_before(
    version: i64,
) -> (tempfile::TempDir, std::path::PathBuf, sqlx::SqlitePool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skald.db");
    let mut before = sqlx::migrate!("../../migrations");
    before.migrations = before
        .migrations
        .iter()
        .filter(|m| m.version < version)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    before.run(&pool).await.unwrap();
    (dir, path, pool)
}

#[tokio::test]
async fn the_migration_indexes_rows_written_before_it() {
    let (_dir, path, pool) = migrated_before(8).await;
    for sql in [
        "INSERT INTO chat_sessions (id, created_at) VALUES (7, '2025-01-01T00:00:00.000Z')",
        "INSERT INTO chat_sessions_stack (id, session_id, created_at) VALUES (70, 7, '2025-01-01T00:00:00.000Z')",
        "INSERT INTO chat_history (id, session_stack_id, role, content, reasoning_content, created_at) \
         VALUES (700, 70, 'user', 'migrate the legacy ledger', NULL, '2025-01-01T00:00:00.000Z')",
        "INSERT INTO chat_history (id, session_stack_id, role, content, reasoning_content, created_at) \
         VALUES (701, 70, 'assistant', '', 'weighing the ledger', '2025-01-01T00:00:01.000Z')",
        "INSERT INTO chat_llm_tools (id, message_id, name, arguments, created_at, updated_at) \
         VALUES (7000, 701, 'execute_cmd', '{\"command\":\"grep -rn ledger src\"}', 'x', 'x')",
        "INSERT INTO chat_llm_tools (id, message_id, name, arguments, created_at, updated_at) \
         VALUES (7001, 701, 'read_file', 'not json {', 'x', 'x')",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = Store::open(&path, Arc::new(SystemClock)).await.unwrap();
    let mut found = hits(&store, "ledger").await;
    found.sort();
    assert_eq!(found, vec![(700, None), (701, None), (701, Some(7000))]);
    assert_eq!(hits(&store, "read_f").await, vec![(701, Some(7001))]);
    assert_indexes_intact(&store).await;
}

#[tokio::test]
async fn hostile_input_never_errors_and_fts_syntax_is_literal() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let dash = say(&store, s.root_stack_id, Role::User, "the foo-bar module").await;
    let near = say(&store, s.root_stack_id, Role::User, "NEAR the OR operator AND column: x").await;
    call(&store, msg, "execute_cmd", r#"{"command":"echo \"quoted\" *.rs"}"#).await;
    let hostile = [
        "\"",
        "\"\"",
        "\"\"\"",
        "*",
        "**",
        ":",
        "::",
        "a:b",
        "NEAR",
        "NEAR(",
        "NEAR/2",
        "near(a b, 3)",
        "AND",
        "OR",
        "NOT",
        "a OR",
        "NOT b",
        "(",
        ")",
        "()",
        "{a b}",
        "[x]",
        "^",
        "^a",
        "-",
        "--",
        "+",
        "foo-bar",
        "a\"b",
        "'",
        "\\",
        "%",
        "_",
        "%_\\",
        "\0",
        "a\0b",
        "🎉",
        "\u{E000}x\u{E001}",
        "col:foo",
        "content:x",
        "rowid",
        "*\"*",
        "\"unclosed",
        "x\" OR \"y",
        "   ",
        "",
    ];
    let long = "NEAR(\"a\" ".repeat(500);
    for text in hostile.iter().copied().chain([long.as_str()]) {
        store.search(&SearchQuery::new(text)).await.unwrap_or_else(|e| panic!("{text:?}: {e}"));
        store.find_in_session(s.session_id, text).await.unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let q = SessionListQuery { search: Some(text.into()), ..Default::default() };
        store.list_sessions(&q).await.unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
    assert_eq!(hits(&store, "foo-bar").await, vec![(dash, None)]);
    assert_eq!(hits(&store, "NEAR").await, vec![(near, None)]);
    assert_eq!(hits(&store, "or operator").await, vec![(near, None)]);
    assert_eq!(hits(&store, "column:").await, vec![(near, None)]);
    assert_eq!(hits(&store, "\"quoted\" *.rs").await.len(), 1);
}

#[tokio::test]
async fn find_in_session_lists_every_match_of_the_session_in_order() {
    let (_dir, store, _) = super::fresh().await;
    let s = session(&store).await;
    let other = session(&store).await;
    let first = say(&store, s.root_stack_id, Role::User, "look at the widget").await;
    say(&store, other.root_stack_id, Role::User, "another widget elsewhere").await;
    let reply = say(&store, s.root_stack_id, Role::Assistant, "reading widget code").await;
    let read = call(&store, reply, "read_file", r#"{"path":"src/widget.rs"}"#).await;
    let child = store.create_child_frame(s.session_id, "helper", "go", 1, read).await.unwrap();
    let sub = say(&store, child, Role::Agent, "inspect the widget please").await;
    say(&store, s.root_stack_id, Role::User, "unrelated").await;

    let found = store.find_in_session(s.session_id, "widget").await.unwrap();
    assert_eq!(
        found.matches,
        vec![
            MatchRef { message_id: first, tool_call_id: None, kind: HitKind::User },
            MatchRef { message_id: reply, tool_call_id: None, kind: HitKind::Assistant },
            MatchRef { message_id: reply, tool_call_id: Some(read), kind: HitKind::Tool },
            MatchRef { message_id: sub, tool_call_id: None, kind: HitKind::Agent },
        ]
    );
    let empty = session(&store).await;
    assert!(store.find_in_session(empty.session_id, "widget").await.unwrap().matches.is_empty());
    let err = store.find_in_session(9999, "widget").await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn the_session_list_search_keeps_title_matches_and_shows_each_sessions_best_hit() {
    let (_dir, store, _) = super::fresh().await;
    let titled = store
        .create_session(&NewSession {
            title: Some("Budget review".into()),
            ..NewSession::interactive("web")
        })
        .await
        .unwrap();
    let once = session(&store).await;
    say(&store, once.root_stack_id, Role::User, "the budget is due").await;
    let twice = session(&store).await;
    say(&store, twice.root_stack_id, Role::User, &format!("budget {}", "padding ".repeat(30)))
        .await;
    say(&store, twice.root_stack_id, Role::User, "unrelated").await;
    let best = say(&store, twice.root_stack_id, Role::Assistant, "budget budget: the budget").await;
    let tic = store.create_session(&NewSession::interactive("tic")).await.unwrap();
    say(&store, tic.root_stack_id, Role::User, "budget from a tick").await;
    session(&store).await;

    let list = |search: &str, source: Option<&str>, page: u32, per_page: u32| {
        let q = SessionListQuery {
            search: Some(search.into()),
            source: source.map(String::from),
            page,
            per_page,
        };
        let store = store.clone();
        async move { store.list_sessions(&q).await.unwrap() }
    };
    let page = list("budget", None, 1, 20).await;
    // Newest first, as without a search; the title-only match is kept, with no hit.
    let order: Vec<_> = page.items.iter().map(|s| (s.id, s.hit_count)).collect();
    assert_eq!(
        order,
        vec![
            (tic.session_id, 1),
            (twice.session_id, 2),
            (once.session_id, 1),
            (titled.session_id, 0)
        ]
    );
    assert_eq!(page.total, 4);
    let top = page.items[1].best_hit.as_ref().unwrap();
    assert_eq!(top.at, MatchRef { message_id: best, tool_call_id: None, kind: HitKind::Assistant });
    assert_eq!(highlighted(&top.snippet), vec!["budget", "budget", "budget"]);
    assert!(page.items[3].best_hit.is_none());
    assert_eq!(page.items[1].message_count, 3);

    let tics = list("budget", Some("tic"), 1, 20).await;
    assert_eq!(tics.items.iter().map(|s| s.id).collect::<Vec<_>>(), vec![tic.session_id]);
    // Pages split the same order, and past the end the total still comes back.
    let second = list("budget", None, 2, 3).await;
    assert_eq!((second.items[0].id, second.items.len(), second.total), (titled.session_id, 1, 4));
    let beyond = list("budget", None, 5, 3).await;
    assert_eq!((beyond.items.len(), beyond.total), (0, 4));
}

#[tokio::test]
async fn identifiers_and_paths_in_message_text_are_found_by_their_parts() {
    let (_dir, store, _) = super::fresh().await;
    let s = session(&store).await;
    let snake =
        say(&store, s.root_stack_id, Role::Assistant, "renamed parse_args to read_flags").await;
    let path =
        say(&store, s.root_stack_id, Role::User, "look at crates/skald-store/src/lib.rs").await;
    let camel = say(&store, s.root_stack_id, Role::Assistant, "the SessionList component").await;

    // Underscores, slashes, dots and dashes separate words: each part is a word, and the whole
    // identifier or path is the phrase of its parts.
    assert_eq!(hits(&store, "parse_args ").await, vec![(snake, None)]);
    assert_eq!(hits(&store, "flags ").await, vec![(snake, None)]);
    assert_eq!(hits(&store, "skald-store/src").await, vec![(path, None)]);
    assert_eq!(hits(&store, "lib.rs ").await, vec![(path, None)]);
    assert_eq!(hits(&store, "store lib ").await, vec![(path, None)]);
    // The phrase keeps the parts' order: the words alone in another order are no path.
    assert_eq!(hits(&store, "\"src skald\" ").await, vec![]);
    // camelCase is one word: found whole (case-insensitively) or by its start, not by an inner
    // part (tool names, paths and commands match any part; message words do not).
    assert_eq!(hits(&store, "sessionlist ").await, vec![(camel, None)]);
    assert_eq!(hits(&store, "SessionL").await, vec![(camel, None)]);
    assert_eq!(hits(&store, "List ").await, vec![]);
}

#[tokio::test]
async fn a_listed_sessions_best_hit_is_chosen_among_its_recent_messages_and_its_newest_hit() {
    let (_dir, store, _) = super::fresh().await;
    let long = session(&store).await;
    // The best-scoring match is old: 60 messages follow it before the newest match.
    say(&store, long.root_stack_id, Role::User, "deploy deploy deploy").await;
    for i in 0..60 {
        say(&store, long.root_stack_id, Role::Assistant, &format!("step {i} of the work")).await;
    }
    let recent_call_msg = say(&store, long.root_stack_id, Role::Assistant, "running it").await;
    let recent_call =
        call(&store, recent_call_msg, "execute_cmd", r#"{"command":"make deploy"}"#).await;
    let newest = say(
        &store,
        long.root_stack_id,
        Role::User,
        "one more deploy, with a longer note this time",
    )
    .await;
    let q = SessionListQuery { search: Some("deploy".into()), ..Default::default() };
    let page = store.list_sessions(&q).await.unwrap();
    // The count is every match; the hit shown is the best among the recent ones (a call's
    // command and a message's text compete), not the old one scored best overall.
    assert_eq!(page.items[0].hit_count, 3);
    let shown = page.items[0].best_hit.as_ref().unwrap();
    assert!(
        [
            MatchRef { message_id: newest, tool_call_id: None, kind: HitKind::User },
            MatchRef {
                message_id: recent_call_msg,
                tool_call_id: Some(recent_call),
                kind: HitKind::Tool
            }
        ]
        .contains(&shown.at),
        "{:?}",
        shown.at
    );

    // A session whose only match is older than its recent messages still shows it.
    let old = session(&store).await;
    let only = say(&store, old.root_stack_id, Role::User, "rollback plan").await;
    for i in 0..60 {
        say(&store, old.root_stack_id, Role::Assistant, &format!("later step {i}")).await;
    }
    let q = SessionListQuery { search: Some("rollback".into()), ..Default::default() };
    let page = store.list_sessions(&q).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].best_hit.as_ref().unwrap().at.message_id, only);
}

/// Ids of the rows the catch-up has indexed up to (messages, calls).
async fn watermark(store: &Store) -> (i64, i64) {
    sqlx::query_as("SELECT messages_upto, calls_upto FROM search_index_state")
        .fetch_one(store.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_row_written_just_before_a_search_is_found() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    // Writing indexes nothing: the rows wait above the watermark.
    let user = say(&store, s.root_stack_id, Role::User, "the quokka escaped").await;
    let read = call(&store, msg, "read_file", r#"{"path":"zoo/quokka.rs"}"#).await;
    assert_eq!(watermark(&store).await, (0, 0));
    // Every kind of search indexes what is pending before it reads.
    let mut found = hits(&store, "quokka").await;
    found.sort();
    assert_eq!(found, vec![(msg, Some(read)), (user, None)]);
    assert_eq!(watermark(&store).await, (user, read));

    let next = say(&store, s.root_stack_id, Role::Assistant, "a wombat too").await;
    let found = store.find_in_session(s.session_id, "wombat").await.unwrap();
    assert_eq!(found.matches.iter().map(|m| m.message_id).collect::<Vec<_>>(), vec![next]);

    let other = session(&store).await;
    say(&store, other.root_stack_id, Role::User, "a numbat appears").await;
    let q = SessionListQuery { search: Some("numbat".into()), ..Default::default() };
    let page = store.list_sessions(&q).await.unwrap();
    assert_eq!(
        page.items.iter().map(|i| (i.id, i.hit_count)).collect::<Vec<_>>(),
        vec![(other.session_id, 1)]
    );
    assert_indexes_intact(&store).await;
}

#[tokio::test]
async fn index_pending_indexes_in_batches_oldest_first() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let mut said = vec![msg];
    for i in 0..4 {
        said.push(say(&store, s.root_stack_id, Role::User, &format!("batch word{i}")).await);
    }
    let calls = [
        call(&store, msg, "read_file", r#"{"path":"a/one.rs"}"#).await,
        call(&store, msg, "read_file", r#"{"path":"a/two.rs"}"#).await,
    ];

    let step = store.index_pending(2).await.unwrap();
    assert_eq!((step.messages, step.calls, step.more), (2, 2, true));
    assert_eq!(watermark(&store).await, (said[1], calls[1]));
    let step = store.index_pending(2).await.unwrap();
    assert_eq!((step.messages, step.calls, step.more), (2, 0, true));
    let step = store.index_pending(2).await.unwrap();
    assert_eq!((step.messages, step.calls, step.more), (1, 0, false));
    assert_eq!(watermark(&store).await, (said[4], calls[1]));
    // Nothing pending: nothing done (one read, no write transaction).
    assert_eq!(store.index_pending(2).await.unwrap(), Default::default());
    assert_indexes_intact(&store).await;
    assert_eq!(hits(&store, "word3").await, vec![(said[4], None)]);
}

#[tokio::test]
async fn rows_changed_before_or_after_they_are_indexed_are_found_as_they_are() {
    let (_dir, store, _) = super::fresh().await;
    let (s, msg) = super::session_with_reply(&store).await;
    let exec = |sql: &'static str, id: i64| {
        let store = store.clone();
        async move { sqlx::query(sql).bind(id).execute(store.pool()).await.unwrap() }
    };
    // Changed and deleted while pending: indexed as they are when the catch-up reads them.
    let edited = say(&store, s.root_stack_id, Role::User, "draft wording").await;
    let gone = say(&store, s.root_stack_id, Role::User, "draft to delete").await;
    say(&store, s.root_stack_id, Role::User, "a later row").await;
    let id = call(&store, msg, "read_file", r#"{"path":"first/place.rs"}"#).await;
    exec("UPDATE chat_history SET content = 'final wording' WHERE id = ?", edited).await;
    exec(r#"UPDATE chat_llm_tools SET arguments = '{"path":"second/place.rs"}' WHERE id = ?"#, id)
        .await;
    exec("DELETE FROM chat_history WHERE id = ?", gone).await;
    assert_eq!(hits(&store, "draft").await, vec![]);
    assert_eq!(hits(&store, "final").await, vec![(edited, None)]);
    assert_eq!(hits(&store, "first/place").await, vec![]);
    assert_eq!(hits(&store, "second/place").await, vec![(msg, Some(id))]);

    // A row given an id the catch-up has passed is indexed as it is written.
    sqlx::query(
        "INSERT INTO chat_history (id, session_stack_id, role, content, created_at) \
         VALUES (?, ?, 'user', 'reused slot', 'x')",
    )
    .bind(gone)
    .bind(s.root_stack_id)
    .execute(store.pool())
    .await
    .unwrap();
    assert!(watermark(&store).await.0 > gone);
    assert_eq!(hits(&store, "slot").await, vec![(gone, None)]);
    assert_indexes_intact(&store).await;
}

#[tokio::test]
async fn the_catch_up_migration_keeps_what_the_triggers_indexed() {
    let (_dir, path, pool) = migrated_before(16).await;
    // Written under the old triggers, which indexed each row as it was inserted.
    for sql in [
        "INSERT INTO chat_sessions (id, created_at) VALUES (7, '2025-01-01T00:00:00.000Z')",
        "INSERT INTO chat_sessions_stack (id, session_id, created_at) VALUES (70, 7, '2025-01-01T00:00:00.000Z')",
        "INSERT INTO chat_history (id, session_stack_id, role, content, created_at) \
         VALUES (700, 70, 'user', 'an older ledger', '2025-01-01T00:00:00.000Z')",
        "INSERT INTO chat_llm_tools (id, message_id, name, arguments, created_at, updated_at) \
         VALUES (7000, 700, 'execute_cmd', '{\"command\":\"grep -rn ledger src\"}', 'x', 'x')",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = Store::open(&path, Arc::new(SystemClock)).await.unwrap();
    assert_eq!(watermark(&store).await, (700, 7000));
    let later = say(&store, 70, Role::Assistant, "a newer ledger").await;
    let mut found = hits(&store, "ledger").await;
    found.sort();
    assert_eq!(found, vec![(700, None), (700, Some(7000)), (later, None)]);
    // Deleting a row the old triggers indexed still takes it out.
    sqlx::query("DELETE FROM chat_llm_tools WHERE id = 7000").execute(store.pool()).await.unwrap();
    assert_eq!(hits(&store, "grep").await, vec![]);
    assert_indexes_intact(&store).await;
}
