//! The tray icon: open approvals, questions and interrupted calls in its tooltip, title and
//! badge, a menu to act on the newest approvals.

use skald_api::{Caller, DecideParams};
use skald_core::Engine;
use skald_protocol::{
    ApprovalKind, BypassDuration, BypassRequest, DecisionInput, Inbox, InboxItem,
};
use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager as _, Wry};

use crate::error::DesktopError;
use crate::lifecycle;
use crate::navigation::Navigator;

const TRAY_ID: &str = "skald";
/// How many approvals the menu lists (the newest ones).
const RECENT_APPROVALS: usize = 5;
/// Longest menu label for one approval.
const MAX_LABEL_CHARS: usize = 60;
const ICON: &[u8] = include_bytes!("../../icons/tray.png");
const ICON_ATTENTION: &[u8] = include_bytes!("../../icons/tray-attention.png");

/// What a tray menu entry does; its menu id is the serialised form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayAction {
    OpenApp,
    OpenInbox,
    Quit,
    Approve(i64),
    /// Approves and grants a bypass of the narrowest scope that fits the call (its MCP server,
    /// else its category) for this long, as the inbox's "Approve + bypass" does.
    ApproveWithBypass(i64, BypassDuration),
    /// Opens the item in the inbox, where the user writes the rejection note.
    Reject(i64),
    Show(i64),
}

impl TrayAction {
    pub fn id(self) -> String {
        match self {
            Self::OpenApp => "open".to_owned(),
            Self::OpenInbox => "inbox".to_owned(),
            Self::Quit => "quit".to_owned(),
            Self::Approve(call) => format!("approve:{call}"),
            Self::ApproveWithBypass(call, duration) => {
                format!("approve-{}:{call}", duration_id(duration))
            }
            Self::Reject(call) => format!("reject:{call}"),
            Self::Show(call) => format!("show:{call}"),
        }
    }

    pub fn parse(id: &str) -> Option<Self> {
        match id {
            "open" => return Some(Self::OpenApp),
            "inbox" => return Some(Self::OpenInbox),
            "quit" => return Some(Self::Quit),
            _ => {}
        }
        let (verb, call) = id.split_once(':')?;
        let call = call.parse::<i64>().ok()?;
        match verb {
            "approve" => Some(Self::Approve(call)),
            "approve-15m" => Some(Self::ApproveWithBypass(call, BypassDuration::FifteenMinutes)),
            "approve-1h" => Some(Self::ApproveWithBypass(call, BypassDuration::OneHour)),
            "approve-session" => Some(Self::ApproveWithBypass(call, BypassDuration::Session)),
            "reject" => Some(Self::Reject(call)),
            "show" => Some(Self::Show(call)),
            _ => None,
        }
    }
}

fn duration_id(duration: BypassDuration) -> &'static str {
    match duration {
        BypassDuration::FifteenMinutes => "15m",
        BypassDuration::OneHour => "1h",
        BypassDuration::Session => "session",
    }
}

/// The bypass durations the tray offers, with their menu words (the inbox's choices).
const BYPASS_CHOICES: [(BypassDuration, &str); 3] = [
    (BypassDuration::FifteenMinutes, "for 15 minutes"),
    (BypassDuration::OneHour, "for 1 hour"),
    (BypassDuration::Session, "for this session (at most 24 h)"),
];

/// The decision a menu entry records, if it records one.
pub fn decision_of(action: TrayAction) -> Option<(i64, DecisionInput)> {
    let (call, bypass) = match action {
        TrayAction::Approve(call) => (call, None),
        TrayAction::ApproveWithBypass(call, duration) => {
            (call, Some(BypassRequest { duration, scope: None }))
        }
        _ => return None,
    };
    Some((call, DecisionInput { approved: true, note: None, bypass }))
}

/// One approval the menu lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentApproval {
    pub call: i64,
    pub label: String,
    /// What a bypass granted with it would cover (`MCP server gh`, `files tools`); `None` when no
    /// narrow scope fits the call, and then the menu offers no bypass.
    pub bypass_scope: Option<String>,
}

/// What the tray shows for the current inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayView {
    pub tooltip: String,
    /// Shown next to the icon where the tray supports it (appindicator label, macOS title).
    pub title: Option<String>,
    pub attention: bool,
    pub inbox_label: String,
    /// Newest first.
    pub recent: Vec<RecentApproval>,
}

impl TrayView {
    /// The view of `inbox` plus `interrupted` calls a restart cut off that wait for the user's
    /// word (answered in the window's inbox, like questions).
    pub fn of(inbox: &Inbox, interrupted: usize) -> Self {
        // Questions wait for the user like approvals do; they are answered in the window.
        let waiting = inbox.items.len() + inbox.questions.len();
        let mut tooltip = match (waiting, inbox.questions.is_empty()) {
            (0, _) => "Skald".to_owned(),
            (1, true) => "Skald: 1 approval waiting".to_owned(),
            (n, true) => format!("Skald: {n} approvals waiting"),
            (1, false) => "Skald: 1 question waiting".to_owned(),
            (n, false) => format!("Skald: {n} approvals and questions waiting"),
        };
        if interrupted > 0 {
            let calls = if interrupted == 1 { "call" } else { "calls" };
            let check = format!("{interrupted} interrupted {calls} to check");
            tooltip = if waiting == 0 {
                format!("Skald: {check}")
            } else {
                format!("{tooltip} · {check}")
            };
        }
        let open = waiting + interrupted;
        // The inbox is oldest first; the menu wants the newest.
        let recent = inbox
            .items
            .iter()
            .rev()
            .take(RECENT_APPROVALS)
            .map(|item| RecentApproval {
                call: item.tool_call_id,
                label: label(item),
                bypass_scope: bypass_scope(item),
            })
            .collect();
        Self {
            tooltip,
            title: (open > 0).then(|| open.to_string()),
            attention: open > 0,
            inbox_label: format!("Agent Inbox ({open})"),
            recent,
        }
    }
}

/// "write_file · src/main.rs", "execute_cmd · in /work" (never the command line), else the tool
/// and where it comes from.
fn label(item: &InboxItem) -> String {
    let place = match item.kind {
        ApprovalKind::Command => item.workdir.as_deref().map(|dir| format!("in {dir}")),
        ApprovalKind::Write | ApprovalKind::Tool => item.path.clone(),
    };
    let what = place.or_else(|| item.context_label.clone()).unwrap_or_else(|| item.source.clone());
    // The tool name (an MCP server's) and the path (the model's) are untrusted: a bidi override
    // or a control character must not disguise what is approved from the menu.
    let text = format!("{} · {what}", item.tool_name);
    cut(&skald_protocol::origin::shown_escaped(&text), MAX_LABEL_CHARS)
}

/// The scope the engine gives a bypass asked for without one: the call's MCP server, else its
/// category (what the inbox offers first).
fn bypass_scope(item: &InboxItem) -> Option<String> {
    let scope = match (&item.mcp_server, &item.tool_category) {
        (Some(server), _) => format!("MCP server {server}"),
        (None, Some(category)) => format!("{category} tools"),
        (None, None) => return None,
    };
    Some(cut(&skald_protocol::origin::shown_escaped(&scope), MAX_LABEL_CHARS / 2))
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max - 1).collect();
    format!("{kept}…")
}

/// Creates the tray icon with an empty inbox; `refresh` fills it in.
pub fn create(app: &AppHandle) -> Result<TrayIcon, DesktopError> {
    let view = TrayView::of(
        &Inbox { items: Vec::new(), questions: Vec::new(), elicitations: Vec::new(), total: 0 },
        0,
    );
    let tray = TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(ICON)?)
        .tooltip(&view.tooltip)
        .menu(&menu(app, &view)?)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
        .build(app)?;
    Ok(tray)
}

/// Re-reads the inbox and the interrupted calls and redraws the tray.
pub async fn refresh(app: &AppHandle, engine: &Engine) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else { return };
    let inbox = match engine.inbox().await {
        Ok(inbox) => inbox,
        Err(error) => {
            tracing::warn!("cannot read the inbox for the tray: {error}");
            return;
        }
    };
    let interrupted = match engine.open_interrupted_calls().await {
        Ok(calls) => calls.len(),
        Err(error) => {
            tracing::warn!("cannot read the interrupted calls for the tray: {error}");
            0
        }
    };
    if let Err(error) = show(app, &tray, &TrayView::of(&inbox, interrupted)) {
        tracing::warn!(%error, "cannot update the tray");
    }
}

fn show(app: &AppHandle, tray: &TrayIcon, view: &TrayView) -> Result<(), DesktopError> {
    let icon = if view.attention { ICON_ATTENTION } else { ICON };
    tray.set_icon(Some(Image::from_bytes(icon)?))?;
    tray.set_tooltip(Some(&view.tooltip))?;
    tray.set_title(view.title.as_deref())?;
    tray.set_menu(Some(menu(app, view)?))?;
    Ok(())
}

fn menu(app: &AppHandle, view: &TrayView) -> Result<Menu<Wry>, DesktopError> {
    let item = |action: TrayAction, text: &str| {
        MenuItem::with_id(app, action.id(), text, true, None::<&str>)
    };
    let open = item(TrayAction::OpenApp, "Open Skald")?;
    let inbox = item(TrayAction::OpenInbox, &view.inbox_label)?;
    let mut approvals = Vec::with_capacity(view.recent.len());
    for recent in &view.recent {
        let call = recent.call;
        let mut entries = vec![item(TrayAction::Approve(call), "Approve")?];
        if let Some(scope) = &recent.bypass_scope {
            for (duration, words) in BYPASS_CHOICES {
                let text = format!("Approve + allow {scope} {words}");
                entries.push(item(TrayAction::ApproveWithBypass(call, duration), &text)?);
            }
        }
        entries.push(item(TrayAction::Reject(call), "Reject…")?);
        entries.push(item(TrayAction::Show(call), "Open")?);
        let refs: Vec<&dyn IsMenuItem<Wry>> =
            entries.iter().map(|e| e as &dyn IsMenuItem<Wry>).collect();
        approvals.push(Submenu::with_items(app, &recent.label, true, &refs)?);
    }
    let separator = PredefinedMenuItem::separator(app)?;
    let separator_2 = PredefinedMenuItem::separator(app)?;
    let quit = item(TrayAction::Quit, "Quit")?;
    let mut entries: Vec<&dyn IsMenuItem<Wry>> = vec![&open, &inbox];
    if !approvals.is_empty() {
        entries.push(&separator);
        entries.extend(approvals.iter().map(|submenu| submenu as &dyn IsMenuItem<Wry>));
    }
    entries.push(&separator_2);
    entries.push(&quit);
    Ok(Menu::with_items(app, &entries)?)
}

fn on_menu(app: &AppHandle, id: &str) {
    let Some(action) = TrayAction::parse(id) else {
        tracing::warn!(id, "unknown tray menu entry");
        return;
    };
    let navigator = app.state::<Navigator>();
    match action {
        TrayAction::OpenApp => navigator.open(app, None),
        TrayAction::OpenInbox => navigator.open(app, Some("#inbox")),
        TrayAction::Show(call) | TrayAction::Reject(call) => {
            navigator.open(app, Some(&format!("#inbox?item={call}")));
        }
        TrayAction::Quit => lifecycle::quit(app),
        TrayAction::Approve(_) | TrayAction::ApproveWithBypass(..) => {
            let Some((call, input)) = decision_of(action) else { return };
            let Some(engine) = app.try_state::<Engine>().map(|engine| engine.inner().clone())
            else {
                return;
            };
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let params = DecideParams { tool_call_id: call, input };
                if let Err(error) = skald_api::ops::decide(&engine, &Caller::Tray, params).await {
                    tracing::warn!(call, "the tray could not approve: {}", error.message);
                    // Nothing was recorded (a bypass that does not fit, say): the inbox shows
                    // the call and lets the person decide there.
                    let navigator = app.state::<Navigator>();
                    navigator.open(&app, Some(&format!("#inbox?item={call}")));
                }
                refresh(&app, &engine).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use skald_protocol::QuestionItem;

    use super::*;

    fn item(id: i64, path: Option<&str>) -> InboxItem {
        InboxItem {
            tool_call_id: id,
            session_id: 1,
            source: "web".into(),
            agent_id: "main".into(),
            context_label: None,
            frame_label: None,
            tool_name: "write_file".into(),
            tool_category: None,
            mcp_server: None,
            kind: ApprovalKind::Write,
            arguments: serde_json::Value::Null,
            summary: String::new(),
            path: path.map(str::to_owned),
            command: None,
            workdir: None,
            diff: None,
            created_at: String::new(),
            age_secs: 0,
        }
    }

    #[test]
    fn an_empty_inbox_shows_the_plain_icon() {
        let view = TrayView::of(
            &Inbox { items: vec![], questions: vec![], elicitations: vec![], total: 0 },
            0,
        );
        assert_eq!(view.tooltip, "Skald");
        assert_eq!((view.title, view.attention), (None, false));
        assert_eq!(view.inbox_label, "Agent Inbox (0)");
        assert!(view.recent.is_empty());
    }

    #[test]
    fn waiting_approvals_badge_the_icon_and_the_newest_five_are_listed() {
        let items: Vec<_> = (1..=7).map(|id| item(id, Some(&format!("f{id}.txt")))).collect();
        let view =
            TrayView::of(&Inbox { items, questions: vec![], elicitations: vec![], total: 7 }, 0);
        assert_eq!(view.tooltip, "Skald: 7 approvals waiting");
        assert_eq!(view.title.as_deref(), Some("7"));
        assert!(view.attention);
        assert_eq!(view.inbox_label, "Agent Inbox (7)");
        let ids: Vec<_> = view.recent.iter().map(|r| r.call).collect();
        assert_eq!(ids, vec![7, 6, 5, 4, 3]);
        assert_eq!(view.recent[0].label, "write_file · f7.txt");
    }

    #[test]
    fn open_questions_count_and_badge_too() {
        let question = QuestionItem {
            tool_call_id: 9,
            session_id: 2,
            source: "web".into(),
            agent_id: "main".into(),
            context_label: None,
            frame_label: None,
            title: "Which file?".into(),
            question: "Which one?".into(),
            suggested_answers: vec![],
            created_at: String::new(),
            age_secs: 0,
        };
        let inbox = Inbox {
            items: vec![item(1, Some("a"))],
            questions: vec![question],
            elicitations: vec![],
            total: 2,
        };
        let view = TrayView::of(&inbox, 0);
        assert_eq!(view.tooltip, "Skald: 2 approvals and questions waiting");
        assert_eq!(view.inbox_label, "Agent Inbox (2)");
        assert!(view.attention);
        assert_eq!(view.recent.len(), 1, "only approvals can be approved from the tray");
    }

    #[test]
    fn interrupted_calls_count_and_badge_too() {
        let empty = Inbox { items: vec![], questions: vec![], elicitations: vec![], total: 0 };
        let view = TrayView::of(&empty, 1);
        assert_eq!(view.tooltip, "Skald: 1 interrupted call to check");
        assert_eq!((view.title.as_deref(), view.attention), (Some("1"), true));
        assert_eq!(view.inbox_label, "Agent Inbox (1)");
        assert!(view.recent.is_empty(), "they are answered in the window");

        let inbox = Inbox {
            items: vec![item(1, Some("a"))],
            questions: vec![],
            elicitations: vec![],
            total: 1,
        };
        let view = TrayView::of(&inbox, 2);
        assert_eq!(view.tooltip, "Skald: 1 approval waiting · 2 interrupted calls to check");
        assert_eq!(view.inbox_label, "Agent Inbox (3)");
        assert_eq!(view.recent.len(), 1);
    }

    #[test]
    fn a_waiting_command_is_listed_by_its_directory_not_its_command_line() {
        let mut command = item(1, None);
        command.tool_name = "execute_cmd".into();
        command.kind = ApprovalKind::Command;
        command.command = Some("curl -H 'Authorization: sk-secret'".into());
        command.workdir = Some("/home/me/project".into());
        let view = TrayView::of(
            &Inbox { items: vec![command], questions: vec![], elicitations: vec![], total: 1 },
            0,
        );
        assert_eq!(view.recent[0].label, "execute_cmd · in /home/me/project");
    }

    #[test]
    fn a_hostile_path_is_listed_escaped() {
        // With the right-to-left override applied, "notes<RLO>txt.exe" reads as "notesexe.txt".
        let inbox = Inbox {
            items: vec![item(1, Some("notes\u{202e}txt.exe\n"))],
            questions: vec![],
            elicitations: vec![],
            total: 1,
        };
        let view = TrayView::of(&inbox, 0);
        assert_eq!(view.recent[0].label, "write_file · notes\\u{202e}txt.exe\\u{a}");
    }

    #[test]
    fn long_labels_are_cut() {
        let long = "x".repeat(200);
        let inbox = Inbox {
            items: vec![item(1, Some(&long))],
            questions: vec![],
            elicitations: vec![],
            total: 1,
        };
        let view = TrayView::of(&inbox, 0);
        assert_eq!(view.tooltip, "Skald: 1 approval waiting");
        assert_eq!(view.recent[0].label.chars().count(), MAX_LABEL_CHARS);
        assert!(view.recent[0].label.ends_with('…'));
    }

    #[test]
    fn menu_ids_round_trip_and_foreign_ids_do_nothing() {
        for action in [
            TrayAction::OpenApp,
            TrayAction::OpenInbox,
            TrayAction::Quit,
            TrayAction::Approve(12),
            TrayAction::ApproveWithBypass(12, BypassDuration::FifteenMinutes),
            TrayAction::ApproveWithBypass(12, BypassDuration::OneHour),
            TrayAction::ApproveWithBypass(12, BypassDuration::Session),
            TrayAction::Reject(12),
            TrayAction::Show(12),
        ] {
            assert_eq!(TrayAction::parse(&action.id()), Some(action));
        }
        assert_eq!(TrayAction::parse("approve:x"), None);
        assert_eq!(TrayAction::parse("delete:3"), None);
        assert_eq!(TrayAction::parse("approve-forever:3"), None);
        assert_eq!(TrayAction::parse(""), None);
    }

    #[test]
    fn an_approval_offers_a_bypass_of_the_scope_the_engine_would_give_it() {
        let mut mcp = item(3, None);
        mcp.tool_name = "mcp__gh__create_issue".into();
        mcp.kind = ApprovalKind::Tool;
        mcp.mcp_server = Some("gh".into());
        mcp.tool_category = Some("network".into());
        let mut write = item(2, Some("notes.md"));
        write.tool_category = Some("files".into());
        let unknown = item(1, Some("x"));
        let inbox = Inbox {
            items: vec![unknown, write, mcp],
            questions: vec![],
            elicitations: vec![],
            total: 3,
        };
        let view = TrayView::of(&inbox, 0);
        let scopes: Vec<_> = view.recent.iter().map(|r| r.bypass_scope.as_deref()).collect();
        // The MCP server before the category; nothing narrow known, nothing offered.
        assert_eq!(scopes, [Some("MCP server gh"), Some("files tools"), None]);
    }

    #[test]
    fn each_approve_entry_records_its_decision_and_the_others_record_none() {
        let (call, plain) = decision_of(TrayAction::Approve(4)).unwrap();
        assert_eq!((call, plain.approved, plain.bypass), (4, true, None));
        let (call, hour) =
            decision_of(TrayAction::ApproveWithBypass(5, BypassDuration::OneHour)).unwrap();
        assert_eq!(call, 5);
        assert!(hour.approved && hour.note.is_none());
        // No scope: the engine gives the narrowest that fits, the one the menu named.
        assert_eq!(
            hour.bypass,
            Some(BypassRequest { duration: BypassDuration::OneHour, scope: None })
        );
        for other in [TrayAction::Reject(4), TrayAction::Show(4), TrayAction::OpenInbox] {
            assert_eq!(decision_of(other), None);
        }
    }

    /// What the menu offers is what the engine grants: a write parked for approval, approved
    /// through the tray's "Approve + allow … for 1 hour" entry, records a bypass of the scope the
    /// menu named, granted by the tray.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_trays_bypass_entry_grants_the_scope_it_names() {
        use std::sync::Arc;

        use skald_core::EngineOptions;
        use skald_core::config::{EnvOverrides, MemorySecrets};
        use skald_core::engine::ChatOptions;
        use skald_core::turn::ParkMode;
        use skald_testkit::{FakeLlm, Reply};

        let fake = FakeLlm::start().await.unwrap();
        fake.push(Reply::tool_call("write_file", r#"{"path":"notes.md","content":"hi\n"}"#));
        fake.push(Reply::text("Wrote it."));
        let dir = tempfile::tempdir().unwrap();
        let work = std::fs::canonicalize(dir.path()).unwrap();
        let engine = Engine::open(EngineOptions {
            data_dir: Some(dir.path().join("data")),
            env: Some(EnvOverrides {
                base_url: Some(fake.base_url()),
                model: Some("fake-model".into()),
                api_key: None,
            }),
            secrets: Some(Arc::new(MemorySecrets::default())),
            ..Default::default()
        })
        .await
        .unwrap();
        let opts = ChatOptions {
            workdir: Some(work.clone()),
            park_mode: ParkMode::Exit,
            ..Default::default()
        };
        let receipt = engine.send_message("tray-test", "write notes", opts).await.unwrap();
        engine.wait_turn(receipt.session_id).await;

        let view = TrayView::of(&engine.inbox().await.unwrap(), 0);
        let offered = view.recent.first().expect("the write waits in the inbox").clone();
        let scope = offered.bypass_scope.clone().expect("a write has a category to bypass");
        let action = TrayAction::ApproveWithBypass(offered.call, BypassDuration::OneHour);
        // Through the menu id, as a click arrives.
        let (call, input) = decision_of(TrayAction::parse(&action.id()).unwrap()).unwrap();
        let params = DecideParams { tool_call_id: call, input };
        let decision = skald_api::ops::decide(&engine, &Caller::Tray, params).await.unwrap();
        let bypass = decision.bypass.expect("no bypass was granted");
        assert_eq!(bypass.label, scope);
        assert_eq!(
            (bypass.duration, bypass.granted_by.as_str()),
            (BypassDuration::OneHour, "tray")
        );
        assert!(decision.approved);
        // The approved write runs when the session goes on.
        engine.start_resume(receipt.session_id, ParkMode::Exit).await.unwrap();
        engine.wait_turn(receipt.session_id).await;
        assert_eq!(std::fs::read_to_string(work.join("notes.md")).unwrap(), "hi\n");
    }
}
