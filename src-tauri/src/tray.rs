//! The tray icon: open approvals, questions and interrupted calls in its tooltip, title and
//! badge, a menu to act on the newest approvals.

use skald_api::{Caller, DecideParams};
use skald_core::Engine;
use skald_protocol::{ApprovalKind, DecisionInput, Inbox, InboxItem};
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
            "reject" => Some(Self::Reject(call)),
            "show" => Some(Self::Show(call)),
            _ => None,
        }
    }
}

/// What the tray shows for the current inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayView {
    pub tooltip: String,
    /// Shown next to the icon where the tray supports it (appindicator label, macOS title).
    pub title: Option<String>,
    pub attention: bool,
    pub inbox_label: String,
    /// (call id, label), newest first.
    pub recent: Vec<(i64, String)>,
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
            .map(|item| (item.tool_call_id, label(item)))
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
    let text = format!("{} · {what}", item.tool_name);
    if text.chars().count() <= MAX_LABEL_CHARS {
        return text;
    }
    let kept: String = text.chars().take(MAX_LABEL_CHARS - 1).collect();
    format!("{kept}…")
}

/// Creates the tray icon with an empty inbox; `refresh` fills it in.
pub fn create(app: &AppHandle) -> Result<TrayIcon, DesktopError> {
    let view = TrayView::of(&Inbox { items: Vec::new(), questions: Vec::new(), total: 0 }, 0);
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
    for (call, text) in &view.recent {
        let approve = item(TrayAction::Approve(*call), "Approve")?;
        let reject = item(TrayAction::Reject(*call), "Reject…")?;
        let show = item(TrayAction::Show(*call), "Open")?;
        approvals.push(Submenu::with_items(app, text, true, &[&approve, &reject, &show])?);
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
        TrayAction::Approve(call) => {
            let Some(engine) = app.try_state::<Engine>().map(|engine| engine.inner().clone())
            else {
                return;
            };
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let input = DecisionInput { approved: true, note: None, bypass: None };
                let params = DecideParams { tool_call_id: call, input };
                if let Err(error) = skald_api::ops::decide(&engine, &Caller::Tray, params).await {
                    tracing::warn!(call, "the tray could not approve: {}", error.message);
                }
                refresh(&app, &engine).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
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
        let view = TrayView::of(&Inbox { items: vec![], questions: vec![], total: 0 }, 0);
        assert_eq!(view.tooltip, "Skald");
        assert_eq!((view.title, view.attention), (None, false));
        assert_eq!(view.inbox_label, "Agent Inbox (0)");
        assert!(view.recent.is_empty());
    }

    #[test]
    fn waiting_approvals_badge_the_icon_and_the_newest_five_are_listed() {
        let items: Vec<_> = (1..=7).map(|id| item(id, Some(&format!("f{id}.txt")))).collect();
        let view = TrayView::of(&Inbox { items, questions: vec![], total: 7 }, 0);
        assert_eq!(view.tooltip, "Skald: 7 approvals waiting");
        assert_eq!(view.title.as_deref(), Some("7"));
        assert!(view.attention);
        assert_eq!(view.inbox_label, "Agent Inbox (7)");
        let ids: Vec<_> = view.recent.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![7, 6, 5, 4, 3]);
        assert_eq!(view.recent[0].1, "write_file · f7.txt");
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
        let inbox = Inbox { items: vec![item(1, Some("a"))], questions: vec![question], total: 2 };
        let view = TrayView::of(&inbox, 0);
        assert_eq!(view.tooltip, "Skald: 2 approvals and questions waiting");
        assert_eq!(view.inbox_label, "Agent Inbox (2)");
        assert!(view.attention);
        assert_eq!(view.recent.len(), 1, "only approvals can be approved from the tray");
    }

    #[test]
    fn interrupted_calls_count_and_badge_too() {
        let empty = Inbox { items: vec![], questions: vec![], total: 0 };
        let view = TrayView::of(&empty, 1);
        assert_eq!(view.tooltip, "Skald: 1 interrupted call to check");
        assert_eq!((view.title.as_deref(), view.attention), (Some("1"), true));
        assert_eq!(view.inbox_label, "Agent Inbox (1)");
        assert!(view.recent.is_empty(), "they are answered in the window");

        let inbox = Inbox { items: vec![item(1, Some("a"))], questions: vec![], total: 1 };
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
        let view = TrayView::of(&Inbox { items: vec![command], questions: vec![], total: 1 }, 0);
        assert_eq!(view.recent[0].1, "execute_cmd · in /home/me/project");
    }

    #[test]
    fn long_labels_are_cut() {
        let long = "x".repeat(200);
        let inbox = Inbox { items: vec![item(1, Some(&long))], questions: vec![], total: 1 };
        let view = TrayView::of(&inbox, 0);
        assert_eq!(view.tooltip, "Skald: 1 approval waiting");
        assert_eq!(view.recent[0].1.chars().count(), MAX_LABEL_CHARS);
        assert!(view.recent[0].1.ends_with('…'));
    }

    #[test]
    fn menu_ids_round_trip_and_foreign_ids_do_nothing() {
        for action in [
            TrayAction::OpenApp,
            TrayAction::OpenInbox,
            TrayAction::Quit,
            TrayAction::Approve(12),
            TrayAction::Reject(12),
            TrayAction::Show(12),
        ] {
            assert_eq!(TrayAction::parse(&action.id()), Some(action));
        }
        assert_eq!(TrayAction::parse("approve:x"), None);
        assert_eq!(TrayAction::parse("delete:3"), None);
        assert_eq!(TrayAction::parse(""), None);
    }
}
