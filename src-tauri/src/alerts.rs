//! Native notifications: which engine events alert the user (approvals and questions waiting,
//! failed turns, background tasks that ended, scheduled jobs' runs that failed), batching
//! bursts, and their text.
//!
//! The text names only the tool and the path (never file contents, commands or error messages,
//! which may carry secrets), and each notification carries the UI route a click opens. Names a
//! person or a model chose (a job's title, a session's label) are shown with their control and
//! invisible characters escaped and cut short: a notification server may act on them.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use skald_protocol::{
    ApprovalKind, HomeNotice, InboxItem, JobRunState, QuestionItem, TaskState, TurnEnd,
};
use tokio::time::Instant;

/// Approvals arriving within this window after the first become one notification.
pub const BATCH_WINDOW: Duration = Duration::from_secs(1);
/// How many characters of a path a notification shows (the end, which names the file).
const MAX_PATH_CHARS: usize = 80;
/// How many characters of a name (a job's title, a session's label) a notification shows.
const MAX_NAME_CHARS: usize = 60;

/// Alerts collected during one batch window.
#[derive(Debug, Default)]
pub struct Batch {
    approvals: BTreeSet<i64>,
    failed_sessions: BTreeSet<i64>,
    /// Background tasks that ended, by task id (a later end of the same task replaces it).
    ended_tasks: BTreeMap<i64, EndedTask>,
    /// Scheduled jobs' runs that failed or expired, by run id.
    failed_runs: BTreeMap<i64, FailedRun>,
    /// Briefings delivered home, by home session.
    briefings: BTreeMap<i64, Briefing>,
    /// MCP servers' questions (elicitations) waiting, by id: the server's name.
    server_questions: BTreeMap<i64, String>,
    started: Option<Instant>,
}

/// A briefing delivered to the home session: how many reports it carries and the chat that
/// shows it (its agent writes the briefing there next).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Briefing {
    pub session_id: i64,
    pub source: Option<String>,
    pub notifications: u32,
}

/// A scheduled job's run that failed (or expired waiting for a person).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRun {
    pub job_title: String,
    pub state: JobRunState,
    pub session_id: Option<i64>,
}

impl FailedRun {
    /// The run a notice reports, when it is one to tell: it failed or expired (a run that was
    /// killed was killed by someone who knows).
    pub fn of(notice: &HomeNotice) -> Option<Self> {
        matches!(notice.state, JobRunState::Failed | JobRunState::Expired).then(|| FailedRun {
            job_title: notice.job_title.clone(),
            state: notice.state,
            session_id: notice.session_id,
        })
    }
}

/// A background task (`execute_task` mode async) that ended while nobody watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedTask {
    /// `agent#session`.
    pub label: String,
    /// How it ended: done, failed or cancelled.
    pub state: TaskState,
    /// The chat whose card shows it and whose agent answers its report (`#chat/{source}`).
    pub source: Option<String>,
    pub parent_session_id: i64,
}

/// What one batch window collected.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Collected {
    pub approvals: BTreeSet<i64>,
    pub failed_sessions: BTreeSet<i64>,
    pub ended_tasks: Vec<EndedTask>,
    pub failed_runs: Vec<FailedRun>,
    pub briefings: Vec<Briefing>,
    /// The servers whose questions wait, one entry per question.
    pub server_questions: Vec<String>,
}

/// Whether a task update is a task's end worth telling (its report reaches the chat next).
pub fn task_end(state: TaskState) -> bool {
    matches!(state, TaskState::Done | TaskState::Failed | TaskState::Cancelled)
}

impl Batch {
    /// A call started waiting for a decision or an answer (each call counts once).
    pub fn approval(&mut self, tool_call_id: i64, now: Instant) {
        self.approvals.insert(tool_call_id);
        self.started.get_or_insert(now);
    }

    /// A turn of `session_id` failed.
    pub fn failure(&mut self, session_id: i64, now: Instant) {
        self.failed_sessions.insert(session_id);
        self.started.get_or_insert(now);
    }

    /// Background task `task_id` ended.
    pub fn task_ended(&mut self, task_id: i64, task: EndedTask, now: Instant) {
        self.ended_tasks.insert(task_id, task);
        self.started.get_or_insert(now);
    }

    /// Run `run_id` of a scheduled job failed.
    pub fn run_failed(&mut self, run_id: i64, run: FailedRun, now: Instant) {
        self.failed_runs.insert(run_id, run);
        self.started.get_or_insert(now);
    }

    /// A briefing was delivered to a home session (several in one window add up).
    pub fn briefing(&mut self, briefing: Briefing, now: Instant) {
        self.briefings
            .entry(briefing.session_id)
            .and_modify(|b| b.notifications += briefing.notifications)
            .or_insert(briefing);
        self.started.get_or_insert(now);
    }

    /// MCP server `server` asks the person something (elicitation `id`).
    pub fn server_question(&mut self, id: i64, server: String, now: Instant) {
        self.server_questions.insert(id, server);
        self.started.get_or_insert(now);
    }

    /// When the batch is to be shown; `None` while it is empty.
    pub fn deadline(&self) -> Option<Instant> {
        self.started.map(|started| started + BATCH_WINDOW)
    }

    /// Empties the batch: the waiting call ids, the sessions whose turn failed, the tasks that
    /// ended (in task order) and the jobs' runs that failed (in run order). A failed run's own
    /// session is told once, as the job's run.
    pub fn take(&mut self) -> Collected {
        self.started = None;
        let failed_runs: Vec<FailedRun> =
            std::mem::take(&mut self.failed_runs).into_values().collect();
        let mut failed_sessions = std::mem::take(&mut self.failed_sessions);
        for run in &failed_runs {
            if let Some(session) = run.session_id {
                failed_sessions.remove(&session);
            }
        }
        Collected {
            approvals: std::mem::take(&mut self.approvals),
            failed_sessions,
            ended_tasks: std::mem::take(&mut self.ended_tasks).into_values().collect(),
            failed_runs,
            briefings: std::mem::take(&mut self.briefings).into_values().collect(),
            server_questions: std::mem::take(&mut self.server_questions).into_values().collect(),
        }
    }
}

/// One notification to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub title: String,
    pub body: String,
    /// The UI hash route a click on it opens.
    pub route: String,
}

/// The notification for the batched approvals and questions still waiting (the inbox,
/// filtered to the batch); `None` when they were all settled in the meantime.
pub fn waiting_alert(approvals: &[&InboxItem], questions: &[&QuestionItem]) -> Option<Alert> {
    match (approvals, questions) {
        ([], []) => None,
        ([item], []) => Some(Alert {
            title: "Approval waiting in Skald".to_owned(),
            // A job's run says which job ("Job: Nightly backup"), as its Inbox card does.
            body: match item.context_label.as_deref() {
                Some(label) => format!("{}\n{}", shown_name(label), describe(item)),
                None => describe(item),
            },
            route: format!("#inbox?item={}", item.tool_call_id),
        }),
        // The question text is the model's: it stays in the window, not on the lock screen.
        ([], [question]) => Some(Alert {
            title: "A question waits in Skald".to_owned(),
            body: format!("The agent in session {} needs your answer", question.session_id),
            route: format!("#inbox?item={}", question.tool_call_id),
        }),
        (items, questions) => {
            let count = items.len() + questions.len();
            let what = if questions.is_empty() { "approvals" } else { "requests" };
            let mut lines: Vec<String> = items.iter().take(3).map(|item| describe(item)).collect();
            if !questions.is_empty() {
                lines.push(format!("{} question(s) from the agent", questions.len()));
            }
            Some(Alert {
                title: format!("{count} {what} waiting in Skald"),
                body: lines.join("\n"),
                route: "#inbox".to_owned(),
            })
        }
    }
}

/// Whether a turn that ended so is worth telling a person who does not watch: it failed or ran
/// out of rounds. A stop they asked for, a final answer and a parked call (which alerts as an
/// approval) are not.
pub fn worth_an_alert(outcome: &TurnEnd) -> bool {
    outcome.is_failure()
}

/// The notification for turns that failed while the window was hidden.
pub fn failures_alert(sessions: &BTreeSet<i64>) -> Option<Alert> {
    let first = *sessions.first()?;
    let (title, route) = if sessions.len() == 1 {
        (format!("A turn failed in session {first}"), format!("#session/{first}"))
    } else {
        (format!("{} turns failed in Skald", sessions.len()), "#sessions".to_owned())
    };
    Some(Alert { title, body: "Open Skald to see what happened.".to_owned(), route })
}

/// The notification for background tasks that ended unwatched: which, and how; never their
/// report (the model's text stays in the window). A click opens the chat that answers them.
pub fn tasks_alert(tasks: &[EndedTask]) -> Option<Alert> {
    let first = tasks.first()?;
    let how = |t: &EndedTask| match t.state {
        TaskState::Failed => "failed",
        TaskState::Cancelled => "was stopped",
        _ => "finished",
    };
    let one_chat = tasks.iter().all(|t| t.source == first.source);
    let route = match (&first.source, one_chat) {
        (Some(source), true) => format!("#chat/{source}"),
        (None, true) => format!("#session/{}", first.parent_session_id),
        (_, false) => "#sessions".to_owned(),
    };
    Some(match tasks {
        [task] => Alert {
            title: format!("Background task {} {}", task.label, how(task)),
            body: "Its report is in the chat, with the agent's answer to it.".to_owned(),
            route,
        },
        _ => Alert {
            title: format!("{} background tasks ended in Skald", tasks.len()),
            body: tasks
                .iter()
                .take(3)
                .map(|t| format!("{} {}", t.label, how(t)))
                .collect::<Vec<_>>()
                .join("\n"),
            route,
        },
    })
}

/// The notification for scheduled jobs' runs that failed: which job (its title escaped), never
/// why (the reason may quote a provider's error, keys and all). A click opens the run's session.
pub fn runs_alert(runs: &[FailedRun]) -> Option<Alert> {
    let first = runs.first()?;
    let how = |r: &FailedRun| match r.state {
        JobRunState::Expired => "expired waiting for a person",
        _ => "failed",
    };
    Some(match runs {
        [run] => Alert {
            title: format!("Job \"{}\" {}", shown_name(&run.job_title), how(run)),
            body: "Its run's session shows what happened.".to_owned(),
            route: run
                .session_id
                .map_or_else(|| "#jobs".to_owned(), |session| format!("#session/{session}")),
        },
        _ => Alert {
            title: format!("{} job runs failed in Skald", runs.len()),
            body: runs
                .iter()
                .take(3)
                .map(|r| format!("\"{}\" {}", shown_name(&r.job_title), how(r)))
                .collect::<Vec<_>>()
                .join("\n"),
            route: if runs.iter().all(|r| r.job_title == first.job_title) {
                first.session_id.map_or_else(|| "#jobs".to_owned(), |s| format!("#session/{s}"))
            } else {
                "#jobs".to_owned()
            },
        },
    })
}

/// The notification for MCP servers' questions waiting: which server (its name escaped),
/// never what it asks (a program Skald does not control wrote it). A click opens the Inbox.
pub fn server_questions_alert(servers: &[String]) -> Option<Alert> {
    let first = servers.first()?;
    Some(match servers {
        [_] => Alert {
            title: "An MCP server asks for your input in Skald".to_owned(),
            body: format!("\"{}\" waits for a form in the Inbox.", shown_name(first)),
            route: "#inbox".to_owned(),
        },
        _ => Alert {
            title: format!("{} MCP server questions wait in Skald", servers.len()),
            body: "Their forms are in the Inbox.".to_owned(),
            route: "#inbox".to_owned(),
        },
    })
}

/// The notification for a briefing delivered home: how many reports, never what they say (an
/// agent or a server wrote them). A click opens the home chat, where the agent's briefing is.
pub fn briefings_alert(briefings: &[Briefing]) -> Option<Alert> {
    let first = briefings.first()?;
    let total: u32 = briefings.iter().map(|b| b.notifications).sum();
    let route = match (&first.source, briefings.len()) {
        (Some(source), 1) => format!("#chat/{source}"),
        (None, 1) => format!("#session/{}", first.session_id),
        _ => "#sessions".to_owned(),
    };
    let reports = if total == 1 { "1 report".to_owned() } else { format!("{total} reports") };
    Some(Alert {
        title: "A briefing is ready in Skald".to_owned(),
        body: format!("{reports} from background work, summarised in your home chat."),
        route,
    })
}

/// A name someone chose, as a notification may show it: on one line, control, bidi and
/// invisible characters written as `\u{…}` escapes, markup characters (`<`, `&`, which servers
/// with body markup would read) as look-alike text, and at most `MAX_NAME_CHARS` characters.
pub fn shown_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let hidden = c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2028}'
                | '\u{2029}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{61c}');
        match c {
            _ if hidden => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            '<' => out.push('‹'),
            '>' => out.push('›'),
            '&' => out.push('＆'),
            _ => out.push(c),
        }
    }
    if out.chars().count() > MAX_NAME_CHARS {
        out = out.chars().take(MAX_NAME_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// What waits, by kind, with names and paths only: "write_file: src/main.rs", "a command in
/// /work", "mcp__github__create_issue (MCP server github)", "fetch_url wants to run".
fn describe(item: &InboxItem) -> String {
    let path = item.path.as_deref().filter(|path| !path.is_empty());
    match (item.kind, path, item.workdir.as_deref(), item.mcp_server.as_deref()) {
        (ApprovalKind::Write, Some(path), ..) => format!("{}: {}", item.tool_name, shorten(path)),
        (ApprovalKind::Command, _, Some(dir), _) => format!("a command in {}", shorten(dir)),
        (_, _, _, Some(server)) => format!("{} (MCP server {server})", item.tool_name),
        _ => format!("{} wants to run", item.tool_name),
    }
}

/// Keeps the end of a long path, where the file name is.
fn shorten(path: &str) -> String {
    let chars = path.chars().count();
    if chars <= MAX_PATH_CHARS {
        return path.to_owned();
    }
    let tail: String = path.chars().skip(chars - (MAX_PATH_CHARS - 1)).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn item(id: i64, tool: &str, path: Option<&str>) -> InboxItem {
        InboxItem {
            tool_call_id: id,
            session_id: 3,
            source: "web".into(),
            agent_id: "main".into(),
            context_label: None,
            frame_label: None,
            tool_name: tool.into(),
            tool_category: None,
            mcp_server: None,
            kind: ApprovalKind::Write,
            arguments: serde_json::json!({"path": path, "content": "API_KEY=sk-secret"}),
            summary: "write API_KEY=sk-secret".into(),
            path: path.map(str::to_owned),
            command: Some("curl -H 'Authorization: sk-secret'".into()),
            workdir: None,
            diff: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            age_secs: 0,
        }
    }

    #[test]
    fn one_waiting_approval_names_its_tool_and_path_and_opens_that_item() {
        let write = item(7, "write_file", Some("notes/todo.md"));
        let alert = waiting_alert(&[&write], &[]).unwrap();
        assert_eq!(alert.title, "Approval waiting in Skald");
        assert_eq!(alert.body, "write_file: notes/todo.md");
        assert_eq!(alert.route, "#inbox?item=7");
    }

    #[test]
    fn a_burst_is_one_notification_that_counts_them() {
        let items = [
            item(1, "write_file", Some("a.txt")),
            item(2, "edit_file", Some("b.txt")),
            item(3, "run_command", None),
            item(4, "write_file", Some("d.txt")),
        ];
        let refs: Vec<_> = items.iter().collect();
        let alert = waiting_alert(&refs[..3], &[]).unwrap();
        assert_eq!(alert.title, "3 approvals waiting in Skald");
        assert_eq!(alert.body, "write_file: a.txt\nedit_file: b.txt\nrun_command wants to run");
        assert_eq!(alert.route, "#inbox");
        assert_eq!(waiting_alert(&refs, &[]).unwrap().body.lines().count(), 3, "at most 3 lines");
        assert_eq!(waiting_alert(&[], &[]), None, "all decided meanwhile: nothing to show");
    }

    #[test]
    fn the_text_never_carries_contents_commands_or_summaries() {
        let items = [item(1, "write_file", Some("a.txt")), item(2, "run_command", None)];
        for refs in [vec![&items[0]], vec![&items[1]], items.iter().collect()] {
            let alert = waiting_alert(&refs, &[]).unwrap();
            let text = format!("{} {}", alert.title, alert.body);
            assert!(!text.contains("sk-secret") && !text.contains("curl"), "{text}");
        }
    }

    #[test]
    fn a_question_notifies_without_the_models_text() {
        let question = QuestionItem {
            tool_call_id: 11,
            session_id: 4,
            source: "web".into(),
            agent_id: "main".into(),
            context_label: None,
            frame_label: None,
            title: "Use key sk-secret?".into(),
            question: "Shall I paste sk-secret?".into(),
            suggested_answers: vec!["yes".into()],
            created_at: String::new(),
            age_secs: 0,
        };
        let alert = waiting_alert(&[], &[&question]).unwrap();
        assert_eq!(alert.title, "A question waits in Skald");
        assert_eq!(alert.route, "#inbox?item=11");
        assert!(!alert.body.contains("sk-secret"));
        let write = item(1, "write_file", Some("a.txt"));
        let mixed = waiting_alert(&[&write], &[&question]).unwrap();
        assert_eq!(mixed.title, "2 requests waiting in Skald");
        assert!(!format!("{} {}", mixed.title, mixed.body).contains("sk-secret"));
    }

    #[test]
    fn each_kind_of_approval_says_what_it_is_without_its_contents() {
        let mut command = item(1, "execute_cmd", None);
        command.kind = ApprovalKind::Command;
        command.workdir = Some("/home/me/project".into());
        let mut mcp = item(2, "mcp__github__create_issue", None);
        mcp.kind = ApprovalKind::Tool;
        mcp.mcp_server = Some("github".into());
        let mut other = item(3, "fetch_url", None);
        other.kind = ApprovalKind::Tool;
        let bodies: Vec<String> = [&command, &mcp, &other]
            .iter()
            .map(|item| waiting_alert(&[item], &[]).unwrap().body)
            .collect();
        assert_eq!(
            bodies,
            [
                "a command in /home/me/project",
                "mcp__github__create_issue (MCP server github)",
                "fetch_url wants to run"
            ]
        );
        assert!(!bodies[0].contains("curl"), "the command line stays in the window");
    }

    #[test]
    fn only_turns_that_failed_or_ran_out_of_rounds_alert() {
        let failed = TurnEnd::Failed { reason: "every model failed".into() };
        assert!(worth_an_alert(&failed));
        assert!(worth_an_alert(&TurnEnd::Exhausted { rounds: 50 }));
        assert!(!worth_an_alert(&TurnEnd::Cancelled {}), "the user stopped it");
        assert!(!worth_an_alert(&TurnEnd::Final { message_id: 4 }));
        assert!(!worth_an_alert(&TurnEnd::Parked { tool_call_ids: vec![5] }));
    }

    #[test]
    fn long_paths_keep_their_file_name() {
        let path = format!("/home/me/{}/main.rs", "deep/".repeat(40));
        let long = item(1, "write_file", Some(&path));
        let body = waiting_alert(&[&long], &[]).unwrap().body;
        assert!(body.ends_with("/main.rs") && body.contains('…'), "{body}");
        assert!(body.chars().count() <= "write_file: ".len() + MAX_PATH_CHARS);
    }

    #[test]
    fn failed_turns_say_which_session() {
        let one = failures_alert(&BTreeSet::from([12])).unwrap();
        assert_eq!(
            (one.title.as_str(), one.route.as_str()),
            ("A turn failed in session 12", "#session/12")
        );
        let two = failures_alert(&BTreeSet::from([12, 14])).unwrap();
        assert_eq!(two.title, "2 turns failed in Skald");
        assert_eq!(failures_alert(&BTreeSet::new()), None);
    }

    #[test]
    fn a_batch_closes_one_window_after_its_first_alert_and_counts_calls_once() {
        let start = Instant::now();
        let mut batch = Batch::default();
        assert_eq!(batch.deadline(), None);
        batch.approval(5, start);
        batch.approval(5, start + Duration::from_millis(10));
        batch.approval(6, start + Duration::from_millis(900));
        batch.failure(2, start + Duration::from_millis(950));
        batch.task_ended(3, task("scout#9", TaskState::Failed), start);
        batch.task_ended(3, task("scout#9", TaskState::Done), start);
        assert_eq!(batch.deadline(), Some(start + BATCH_WINDOW));
        let taken = batch.take();
        assert_eq!(taken.approvals, BTreeSet::from([5, 6]));
        assert_eq!(taken.failed_sessions, BTreeSet::from([2]));
        assert_eq!(taken.ended_tasks, [task("scout#9", TaskState::Done)], "the latest end");
        assert_eq!(batch.deadline(), None, "taking empties the batch");
        assert_eq!(batch.take(), Collected::default());
    }

    fn task(label: &str, state: TaskState) -> EndedTask {
        EndedTask { label: label.into(), state, source: Some("web".into()), parent_session_id: 4 }
    }

    #[test]
    fn an_ended_task_says_how_it_ended_and_opens_its_chat_without_its_report() {
        assert!(task_end(TaskState::Done) && task_end(TaskState::Failed));
        assert!(task_end(TaskState::Cancelled));
        assert!(!task_end(TaskState::Running) && !task_end(TaskState::Delivered));
        let one = tasks_alert(&[task("scout#9", TaskState::Done)]).unwrap();
        assert_eq!(one.title, "Background task scout#9 finished");
        assert_eq!(one.route, "#chat/web");
        let failed = tasks_alert(&[task("scout#9", TaskState::Failed)]).unwrap();
        assert_eq!(failed.title, "Background task scout#9 failed");
        let mut other = task("coder#11", TaskState::Cancelled);
        other.source = Some("cli".into());
        let two = tasks_alert(&[task("scout#9", TaskState::Done), other]).unwrap();
        assert_eq!(two.title, "2 background tasks ended in Skald");
        assert_eq!(two.body, "scout#9 finished\ncoder#11 was stopped");
        assert_eq!(two.route, "#sessions", "two chats: the session list");
        let mut unsourced = task("scout#9", TaskState::Done);
        unsourced.source = None;
        assert_eq!(tasks_alert(&[unsourced]).unwrap().route, "#session/4");
        assert_eq!(tasks_alert(&[]), None);
    }

    fn failed_run(title: &str, state: JobRunState, session: i64) -> FailedRun {
        FailedRun { job_title: title.into(), state, session_id: Some(session) }
    }

    #[test]
    fn a_failed_job_run_names_the_job_and_opens_its_session_without_the_reason() {
        let notice = HomeNotice {
            id: 1,
            job_id: 2,
            job_run_id: 3,
            job_title: "Nightly backup".into(),
            state: JobRunState::Failed,
            summary: "401 invalid api key sk-secret".into(),
            session_id: Some(44),
            created_at: String::new(),
        };
        let run = FailedRun::of(&notice).unwrap();
        let alert = runs_alert(std::slice::from_ref(&run)).unwrap();
        assert_eq!(alert.title, "Job \"Nightly backup\" failed");
        assert_eq!(alert.route, "#session/44");
        assert!(!format!("{} {}", alert.title, alert.body).contains("sk-secret"));
        for (state, told) in
            [(JobRunState::Expired, true), (JobRunState::Done, false), (JobRunState::Killed, false)]
        {
            let n = HomeNotice { state, ..notice.clone() };
            assert_eq!(FailedRun::of(&n).is_some(), told, "{state:?}");
        }
        let expired = failed_run("Digest", JobRunState::Expired, 45);
        assert_eq!(
            runs_alert(std::slice::from_ref(&expired)).unwrap().title,
            "Job \"Digest\" expired waiting for a person"
        );
        let two = runs_alert(&[run, expired]).unwrap();
        assert_eq!(two.title, "2 job runs failed in Skald");
        assert_eq!(two.body, "\"Nightly backup\" failed\n\"Digest\" expired waiting for a person");
        assert_eq!(two.route, "#jobs");
        assert_eq!(runs_alert(&[]), None);
    }

    #[test]
    fn briefings_in_one_window_are_one_notification_naming_the_count_not_the_facts() {
        let start = Instant::now();
        let mut batch = Batch::default();
        let home = |n| Briefing { session_id: 7, source: Some("web".into()), notifications: n };
        batch.briefing(home(2), start);
        batch.briefing(home(1), start);
        assert_eq!(batch.deadline(), Some(start + BATCH_WINDOW));
        let collected = batch.take();
        assert_eq!(collected.briefings, [home(3)]);
        let alert = briefings_alert(&collected.briefings).unwrap();
        assert_eq!(alert.title, "A briefing is ready in Skald");
        assert_eq!(alert.body, "3 reports from background work, summarised in your home chat.");
        assert_eq!(alert.route, "#chat/web");
        assert_eq!(briefings_alert(&[]), None);
        let unknown = Briefing { session_id: 9, source: None, notifications: 1 };
        let alert = briefings_alert(&[unknown]).unwrap();
        assert_eq!(
            (alert.body.as_str(), alert.route.as_str()),
            ("1 report from background work, summarised in your home chat.", "#session/9")
        );
    }

    #[test]
    fn a_servers_question_notifies_naming_the_server_escaped_never_its_words() {
        let start = Instant::now();
        let mut batch = Batch::default();
        batch.server_question(4, "evil\u{202e}txt\nname".into(), start);
        let collected = batch.take();
        let alert = server_questions_alert(&collected.server_questions).unwrap();
        assert_eq!(alert.route, "#inbox");
        assert!(alert.body.contains("evil\\u{202e}txt\\u{a}name"), "{}", alert.body);
        batch.server_question(5, "a".into(), start);
        batch.server_question(6, "b".into(), start);
        let two = server_questions_alert(&batch.take().server_questions).unwrap();
        assert_eq!(two.title, "2 MCP server questions wait in Skald");
        assert_eq!(server_questions_alert(&[]), None);
    }

    #[test]
    fn a_hostile_job_title_reaches_the_notification_escaped_and_short() {
        let hostile =
            "Re\u{202e}tro\u{1b}]8;;http://evil\u{7}\n<b>click</b> & \u{200b}".to_string();
        let alert = runs_alert(&[failed_run(&hostile, JobRunState::Failed, 1)]).unwrap();
        let title = &alert.title;
        assert!(
            !title.chars().any(|c| c.is_control() || c == '\u{202e}' || c == '\u{200b}'),
            "{title:?}"
        );
        assert!(!title.contains('<') && !title.contains('&'), "{title:?}");
        assert!(
            title.contains("\\u{202e}") && title.contains("\\u{1b}") && title.contains("\\u{a}"),
            "{title:?}"
        );
        let long = shown_name(&"x".repeat(500));
        assert_eq!(long.chars().count(), MAX_NAME_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(shown_name("Morning summary"), "Morning summary");
    }

    #[test]
    fn a_failed_run_is_told_once_not_again_as_its_sessions_failed_turn() {
        let start = Instant::now();
        let mut batch = Batch::default();
        batch.failure(44, start);
        batch.failure(12, start);
        batch.run_failed(3, failed_run("Nightly backup", JobRunState::Failed, 44), start);
        let taken = batch.take();
        assert_eq!(taken.failed_sessions, BTreeSet::from([12]), "44 is the job's run");
        assert_eq!(taken.failed_runs.len(), 1);
    }

    #[test]
    fn an_approval_waiting_in_a_jobs_run_says_which_job() {
        let mut write = item(7, "write_file", Some("notes/todo.md"));
        write.context_label = Some("Job: Nightly\u{1b}[2J backup".into());
        let alert = waiting_alert(&[&write], &[]).unwrap();
        assert_eq!(alert.body, "Job: Nightly\\u{1b}[2J backup\nwrite_file: notes/todo.md");
        assert_eq!(alert.route, "#inbox?item=7");
    }
}
