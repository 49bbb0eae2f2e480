//! Bypass rows: only unrevoked, unexpired rows count, by the store's clock; a decision records
//! its bypass in the same transaction.

use chrono::Duration;
use skald_store::repo::approvals::NewDecision;
use skald_store::repo::bypasses::NewBypass;
use skald_store::repo::sessions::NewSession;
use skald_store::repo::tools::NewToolCall;
use skald_store::{Store, StoreError};

fn all_for(session_id: i64, minutes: i64) -> NewBypass {
    NewBypass {
        session_id,
        scope_kind: "all".into(),
        scope_value: None,
        duration: "fifteen_minutes".into(),
        lifetime: Duration::minutes(minutes),
        granted_by: "test".into(),
        tool_call_id: None,
    }
}

fn ids(rows: &[skald_store::repo::bypasses::BypassRow]) -> Vec<i64> {
    rows.iter().map(|r| r.id).collect()
}

/// A session with one parked `execute_cmd` call; returns (session, call).
async fn parked_call(store: &Store) -> (i64, i64) {
    let (s, msg) = super::session_with_reply(store).await;
    let call = store
        .append_tool_calls(&[NewToolCall {
            message_id: msg,
            name: "execute_cmd".into(),
            arguments: r#"{"command":"true"}"#.into(),
            provider_call_id: Some("call_1".into()),
        }])
        .await
        .unwrap()[0];
    store.create_approval_request(&super::command_request(&s, call)).await.unwrap();
    (s.session_id, call)
}

#[tokio::test]
async fn only_unexpired_unrevoked_rows_count_by_the_stores_clock() {
    let (_dir, store, clock) = super::fresh().await;
    let a = store.create_session(&NewSession::interactive("web")).await.unwrap().session_id;
    let b = store.create_session(&NewSession::interactive("cli")).await.unwrap().session_id;
    let short = store.grant_bypass(&all_for(a, 15)).await.unwrap();
    let long = store.grant_bypass(&all_for(a, 60)).await.unwrap();
    let other = store.grant_bypass(&all_for(b, 60)).await.unwrap();
    assert_eq!((short.source.as_str(), other.source.as_str()), ("web", "cli"));
    assert_eq!(short.expires_at, "2026-01-02T03:19:05.000Z");
    assert_eq!(ids(&store.session_bypasses(a).await.unwrap()), [short.id, long.id]);
    assert_eq!(ids(&store.active_bypasses().await.unwrap()), [short.id, long.id, other.id]);

    // At its expiry instant a row stops counting.
    clock.advance(Duration::minutes(15));
    assert_eq!(ids(&store.session_bypasses(a).await.unwrap()), [long.id]);

    let (row, changed) = store.revoke_bypass(long.id, "inbox").await.unwrap();
    assert!(changed);
    assert_eq!(row.revoked_by.as_deref(), Some("inbox"));
    assert_eq!(row.revoked_at.as_deref(), Some("2026-01-02T03:19:05.000Z"));
    assert!(store.session_bypasses(a).await.unwrap().is_empty());
    assert_eq!(ids(&store.active_bypasses().await.unwrap()), [other.id]);
    // Revoking again, or an expired row, changes nothing and keeps the first revoker.
    let (again, changed) = store.revoke_bypass(long.id, "cli").await.unwrap();
    assert!(!changed);
    assert_eq!(again.revoked_by.as_deref(), Some("inbox"));
    let (expired, changed) = store.revoke_bypass(short.id, "cli").await.unwrap();
    assert!(!changed && expired.revoked_at.is_none());
    let missing = store.revoke_bypass(999, "cli").await.unwrap_err();
    assert!(matches!(missing, StoreError::NotFound { what: "bypass", id: 999 }), "{missing:?}");

    assert_eq!(store.revoke_session_bypasses(b, "/new").await.unwrap(), 1);
    assert_eq!(store.revoke_session_bypasses(b, "/new").await.unwrap(), 0);
    assert!(store.active_bypasses().await.unwrap().is_empty());
    assert_eq!(store.bypass(other.id).await.unwrap().revoked_by.as_deref(), Some("/new"));
}

#[tokio::test]
async fn a_scope_row_is_checked_by_the_schema() {
    let (_dir, store, _) = super::fresh().await;
    let a = store.create_session(&NewSession::interactive("web")).await.unwrap().session_id;
    // `all` names nothing; the narrow kinds must name their category or server.
    let all_with_value = NewBypass { scope_value: Some("shell".into()), ..all_for(a, 15) };
    assert!(store.grant_bypass(&all_with_value).await.is_err());
    let category_without = NewBypass { scope_kind: "category".into(), ..all_for(a, 15) };
    assert!(store.grant_bypass(&category_without).await.is_err());
    let never_ends = all_for(a, 0);
    assert!(store.grant_bypass(&never_ends).await.is_err());
    assert!(store.session_bypasses(a).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_decision_grants_its_bypass_once_in_the_same_transaction() {
    let (_dir, store, _) = super::fresh().await;
    let (session, call) = parked_call(&store).await;
    let bypass = NewBypass {
        scope_kind: "category".into(),
        scope_value: Some("shell".into()),
        tool_call_id: Some(call),
        ..all_for(session, 15)
    };
    let decision = NewDecision {
        tool_call_id: call,
        approved: true,
        note: None,
        decided_by: "cli".into(),
        bypass: Some(bypass),
    };
    let (_, fresh) = store.decide(&decision).await.unwrap();
    assert!(fresh);
    let granted = store.call_bypass(call).await.unwrap().unwrap();
    assert_eq!(
        (granted.scope_kind.as_str(), granted.scope_value.as_deref(), granted.granted_by.as_str()),
        ("category", Some("shell"), "test")
    );
    // The same decision again (a double click) grants nothing more.
    let (_, fresh) = store.decide(&decision).await.unwrap();
    assert!(!fresh);
    assert_eq!(ids(&store.session_bypasses(session).await.unwrap()), [granted.id]);
}

#[tokio::test]
async fn a_repeat_asking_for_a_bypass_the_first_approval_did_not_grant_is_refused() {
    let (_dir, store, _) = super::fresh().await;
    let (session, call) = parked_call(&store).await;
    let plain = NewDecision {
        tool_call_id: call,
        approved: true,
        note: None,
        decided_by: "app".into(),
        bypass: None,
    };
    store.decide(&plain).await.unwrap();
    let with_bypass = NewDecision {
        decided_by: "cli".into(),
        bypass: Some(NewBypass { tool_call_id: Some(call), ..all_for(session, 15) }),
        ..plain
    };
    let err = store.decide(&with_bypass).await.unwrap_err();
    let StoreError::Conflict(msg) = err else { panic!("{err:?}") };
    assert!(msg.contains("already approved by app without a bypass"), "{msg}");
    assert!(store.session_bypasses(session).await.unwrap().is_empty());
}
