mod bypasses;
mod enums;
mod instances;
mod notifications;
mod open;
mod outbox;
mod replay;
mod root_inbox;
mod search;
mod sessions;
mod tools;
mod turn_ends;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use skald_store::repo::approvals::NewApprovalRequest;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::{CreatedSession, NewSession};
use skald_store::{ManualClock, Store};

/// A fresh database in a temp dir, with a clock the test controls.
pub async fn fresh() -> (tempfile::TempDir, Store, Arc<ManualClock>) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap()));
    let store = Store::open(&dir.path().join("skald.db"), clock.clone()).await.unwrap();
    (dir, store, clock)
}

/// A new `web` session with one (empty) assistant message in its root frame, to hang calls on.
pub async fn session_with_reply(store: &Store) -> (CreatedSession, i64) {
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let msg = store
        .append_message(&NewMessage {
            stack_id: s.root_stack_id,
            role: Some(Role::Assistant),
            ..Default::default()
        })
        .await
        .unwrap();
    (s, msg)
}

/// The request that parks call `tool_call_id` of the session's root frame: `execute_cmd` running
/// `true`.
pub fn command_request(s: &CreatedSession, tool_call_id: i64) -> NewApprovalRequest {
    NewApprovalRequest {
        tool_call_id,
        session_id: s.session_id,
        stack_id: s.root_stack_id,
        kind: skald_protocol::ApprovalKind::Command,
        tool_name: "execute_cmd".into(),
        arguments: r#"{"command":"true"}"#.into(),
        path: None,
        command: Some("true".into()),
        workdir: None,
        diff: None,
        summary: "run `true`".into(),
    }
}

/// An async task of `parent` (its child session and first message) started by call `call_id`.
pub async fn scout_task(
    store: &Store,
    parent: i64,
    call_id: i64,
    prompt: &str,
) -> skald_store::repo::tasks::TaskRow {
    store
        .create_task(&skald_store::repo::tasks::NewTask {
            parent_session_id: parent,
            parent_tool_call_id: call_id,
            agent_id: "scout",
            agent_prompt: "You scout.",
            prompt,
            title: None,
            client: None,
        })
        .await
        .unwrap()
}
