//! Bypasses are rows: a scope that does not fit is refused before anything is recorded, a grant
//! made through one engine counts in another at once (two engines on one data dir are two
//! processes in effect), and expiry, revoke and `/new` end it at once. Deny is never bypassed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use skald_core::Engine;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{
    BypassDuration, BypassRequest, BypassScopeKind, DecisionInput, ErrorCode, Event, ToolStatus,
};
use skald_store::ManualClock;
use skald_testkit::{FakeLlm, Reply};
use tokio::sync::broadcast::Receiver;

struct Rig {
    fake: FakeLlm,
    clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
    data: PathBuf,
    work: PathBuf,
}

impl Rig {
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        Rig {
            fake: FakeLlm::start().await.unwrap(),
            clock: Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap())),
            data: dir.path().join("data"),
            work,
            _dir: dir,
        }
    }

    /// An engine on the rig's data dir: each one stands for a separate process.
    async fn engine(&self) -> Engine {
        super::auto_resume::open_at(&self.data, &self.fake, Some(self.clock.clone()), false).await
    }

    fn opts(&self) -> ChatOptions {
        ChatOptions {
            park_mode: ParkMode::Exit,
            workdir: Some(self.work.clone()),
            ..Default::default()
        }
    }

    /// One turn whose model calls `tool` once, then — unless the call `parks` the turn, which
    /// then never asks again — answers. The script says which is expected, so a call that parks
    /// when it should run (or runs when it should park) leaves the fake's script unbalanced.
    async fn turn(
        &self,
        engine: &Engine,
        tool: &str,
        args: &str,
        parks: bool,
    ) -> (i64, TurnOutcome) {
        self.fake.push(Reply::tool_call(tool, args));
        if !parks {
            self.fake.push(Reply::text("done"));
        }
        let receipt = engine.send_message("web", "go", self.opts()).await.unwrap();
        let outcome = engine.wait_turn(receipt.session_id).await.unwrap();
        assert_eq!(parked(&outcome), parks, "{outcome:?}");
        (receipt.session_id, outcome)
    }

    /// A turn that writes `name`, expected to park (`parks`) or to run without asking.
    async fn write(&self, engine: &Engine, name: &str, parks: bool) -> TurnOutcome {
        let args = format!(r#"{{"path":"{name}","content":"x\n"}}"#);
        let (_, outcome) = self.turn(engine, "write_file", &args, parks).await;
        outcome
    }

    /// Through `engine`: a write parks, is approved with `bypass`, and its turn finishes.
    async fn grant(&self, engine: &Engine, bypass: BypassRequest) -> i64 {
        let (session, parked) =
            self.turn(engine, "write_file", r#"{"path":"first.txt","content":"1\n"}"#, true).await;
        assert!(matches!(parked, TurnOutcome::Parked { .. }), "{parked:?}");
        let call = only_waiting_call(engine).await;
        let decision = engine.decide(call, approve(Some(bypass)), "test").await.unwrap();
        assert!(decision.bypass.is_some(), "{decision:?}");
        self.fake.push(Reply::text("done"));
        let outcome = engine.resume(session, ParkMode::Exit).await.unwrap();
        assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
        assert!(self.work.join("first.txt").is_file());
        session
    }

    fn path(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }
}

fn approve(bypass: Option<BypassRequest>) -> DecisionInput {
    DecisionInput { approved: true, note: None, bypass }
}

fn bypass(duration: BypassDuration, scope: BypassScopeKind) -> BypassRequest {
    BypassRequest { duration, scope: Some(scope) }
}

async fn only_waiting_call(engine: &Engine) -> i64 {
    let inbox = engine.inbox().await.unwrap();
    assert_eq!(inbox.items.len(), 1, "{inbox:?}");
    inbox.items[0].tool_call_id
}

fn parked(outcome: &TurnOutcome) -> bool {
    matches!(outcome, TurnOutcome::Parked { .. })
}

/// Events received so far, in order.
fn drained(rx: &mut Receiver<skald_protocol::EventEnvelope>) -> Vec<(Option<i64>, Event)> {
    std::iter::from_fn(|| rx.try_recv().ok()).map(|e| (e.session_id, e.event)).collect()
}

fn exists(p: &Path) -> bool {
    p.is_file()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scope_that_does_not_fit_the_call_is_refused_and_nothing_is_recorded() {
    let rig = Rig::new().await;
    let engine = rig.engine().await;
    let (session, outcome) = rig.turn(&engine, "execute_cmd", r#"{"command":"true"}"#, true).await;
    assert!(parked(&outcome), "{outcome:?}");
    let call = only_waiting_call(&engine).await;

    let wrong = bypass(BypassDuration::OneHour, BypassScopeKind::McpServer);
    let err = engine.decide(call, approve(Some(wrong)), "test").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert_eq!(
        err.to_string(),
        "`mcp_server` bypass does not fit `execute_cmd`: it is not an MCP tool; choose \
         `category` (shell) or `all`"
    );
    // Nothing was recorded: the call still waits, no bypass exists, and the human can retry.
    assert_eq!(only_waiting_call(&engine).await, call);
    assert!(engine.active_bypasses().await.unwrap().is_empty());
    let with_reject = DecisionInput {
        approved: false,
        ..approve(Some(bypass(BypassDuration::OneHour, BypassScopeKind::All)))
    };
    assert_eq!(
        engine.decide(call, with_reject, "test").await.unwrap_err().code(),
        ErrorCode::InvalidInput
    );
    assert_eq!(only_waiting_call(&engine).await, call);

    let mut events = engine.subscribe();
    let fits = bypass(BypassDuration::OneHour, BypassScopeKind::Category);
    let decision = engine.decide(call, approve(Some(fits)), "test").await.unwrap();
    let granted = decision.bypass.unwrap();
    assert_eq!(
        (granted.label.as_str(), granted.scope_value.as_deref()),
        ("shell tools", Some("shell"))
    );
    assert_eq!((granted.remaining_secs, granted.tool_call_id), (3600, Some(call)));
    // Persist, then emit: the decision, then the session's bypasses changed.
    let seen = drained(&mut events);
    let kinds: Vec<&Event> = seen.iter().map(|(_, e)| e).collect();
    assert!(
        matches!(kinds.as_slice(), [Event::ApprovalResolved { .. }, Event::BypassesChanged {}]),
        "{kinds:?}"
    );
    assert_eq!(seen[1].0, Some(session));
    assert_eq!(engine.session_bypasses(session).await.unwrap(), vec![granted]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bypass_granted_through_one_engine_counts_in_another_at_once() {
    let rig = Rig::new().await;
    let app = rig.engine().await;
    let other = rig.engine().await;
    let session =
        rig.grant(&app, bypass(BypassDuration::FifteenMinutes, BypassScopeKind::Category)).await;
    // Listed by the other process too.
    let listed = other.active_bypasses().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].session_id, listed[0].label.as_str(), listed[0].granted_by.as_str()),
        (session, "filesystem tools", "test")
    );
    // The other process runs the next turn: its write runs without asking.
    let outcome = rig.write(&other, "second.txt", false).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    assert!(exists(&rig.path("second.txt")));
    // The scope is the category: a shell command still asks.
    let (_, outcome) = rig.turn(&other, "execute_cmd", r#"{"command":"true"}"#, true).await;
    assert!(parked(&outcome), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_bypass_stops_counting_at_once() {
    let rig = Rig::new().await;
    let app = rig.engine().await;
    let other = rig.engine().await;
    rig.grant(&app, bypass(BypassDuration::FifteenMinutes, BypassScopeKind::All)).await;
    rig.clock.advance(chrono::Duration::minutes(14));
    assert!(!parked(&rig.write(&other, "early.txt", false).await));
    assert_eq!(other.active_bypasses().await.unwrap()[0].remaining_secs, 60);
    rig.clock.advance(chrono::Duration::minutes(1));
    assert!(other.active_bypasses().await.unwrap().is_empty());
    let outcome = rig.write(&other, "late.txt", true).await;
    assert!(parked(&outcome), "{outcome:?}");
    assert!(exists(&rig.path("early.txt")) && !exists(&rig.path("late.txt")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_bypass_stops_counting_at_once() {
    let rig = Rig::new().await;
    let app = rig.engine().await;
    let other = rig.engine().await;
    let session = rig.grant(&app, bypass(BypassDuration::OneHour, BypassScopeKind::All)).await;
    let id = other.session_bypasses(session).await.unwrap()[0].id;
    let mut events = other.subscribe();
    let revoked = other.revoke_bypass(id, "inbox").await.unwrap();
    assert_eq!((revoked.revoked_by.as_deref(), revoked.remaining_secs), (Some("inbox"), 0));
    assert!(revoked.revoked_at.is_some());
    assert_eq!(drained(&mut events), vec![(Some(session), Event::BypassesChanged {})]);
    // A second revoke is a no-op that changes nothing and says nothing.
    assert_eq!(other.revoke_bypass(id, "cli").await.unwrap().revoked_by.as_deref(), Some("inbox"));
    assert!(drained(&mut events).is_empty());
    // The granting process asks again.
    let outcome = rig.write(&app, "after.txt", true).await;
    assert!(parked(&outcome), "{outcome:?}");
    assert!(!exists(&rig.path("after.txt")));
}

#[tokio::test(flavor = "multi_thread")]
async fn new_revokes_the_old_sessions_bypasses() {
    let rig = Rig::new().await;
    let app = rig.engine().await;
    let old = rig.grant(&app, bypass(BypassDuration::Session, BypassScopeKind::All)).await;
    let listed = app.session_bypasses(old).await.unwrap();
    assert_eq!(
        (listed[0].duration, listed[0].remaining_secs),
        (BypassDuration::Session, 24 * 3600)
    );
    let mut events = app.subscribe();
    let fresh = app.new_session("web").await.unwrap();
    assert_ne!(fresh, old);
    assert!(app.session_bypasses(old).await.unwrap().is_empty());
    assert!(app.active_bypasses().await.unwrap().is_empty());
    let seen = drained(&mut events);
    assert!(seen.contains(&(Some(old), Event::BypassesChanged {})), "{seen:?}");
    let outcome = rig.write(&app, "after-new.txt", true).await;
    assert!(parked(&outcome), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_rule_still_denies_under_an_all_bypass() {
    let rig = Rig::new().await;
    let app = rig.engine().await;
    std::fs::create_dir_all(rig.path("secrets")).unwrap();
    rig.fake.push(Reply::tool_call("write_file", r#"{"path":"secrets/key","content":"k\n"}"#));
    rig.fake.push(Reply::text("could not"));
    let opts = ChatOptions { approve_all: true, ..rig.opts() };
    let receipt = app.send_message("web", "store the key", opts).await.unwrap();
    let outcome = app.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    // `--approve-all` is a stored "this session" bypass of every tool, granted by the CLI.
    let active = app.session_bypasses(receipt.session_id).await.unwrap();
    assert_eq!(
        (active.len(), active[0].label.as_str(), active[0].granted_by.as_str(), active[0].duration),
        (1, "all tools", "cli", BypassDuration::Session)
    );
    let detail = app.session_detail(receipt.session_id).await.unwrap();
    let status = detail.messages.iter().find_map(|m| match m {
        skald_protocol::DebugMessage::Tool { status, result, .. } => {
            Some((*status, result.clone()))
        }
        _ => None,
    });
    let (status, result) = status.unwrap();
    assert_eq!(status, ToolStatus::Rejected);
    assert!(result.unwrap_or_default().starts_with("Denied by policy"));
    assert!(!exists(&rig.path("secrets/key")));
    assert_eq!(rig.fake.pending_replies(), 0);
}
