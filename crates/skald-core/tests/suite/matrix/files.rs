//! Bad inputs on files and paths, with approvals on: every call that leaves the working
//! directory or writes must be asked for by its real (resolved) path, nothing runs before the
//! human decides, and what the human approved is what happens to the file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::{DecisionInput, Event, EventEnvelope, InboxItem};
use skald_testkit::matrix::{Row, excerpt};
use skald_testkit::{Reply, ScriptedToolCall};
use tokio::sync::broadcast::Receiver;

use super::{answers, messages, stored_view, text_of, tool_results, user_view};
use crate::suite::turn::{Rig, drain};

pub(super) const ANSWER: &str = "Done as far as I was allowed.";

/// A rig whose turns ask for approval and end parked, with the events of every step kept.
pub(super) struct Session {
    pub(super) rig: Rig,
    rx: Receiver<EventEnvelope>,
    pub(super) events: Vec<Event>,
    pub(super) sid: i64,
    /// The temp root that holds the data dir, the working directory and "elsewhere".
    pub(super) root: PathBuf,
}

impl Session {
    pub(super) async fn new() -> Session {
        let rig = Rig::new("").await;
        let rx = rig.engine.subscribe();
        let root = std::fs::canonicalize(rig.dir.path()).unwrap();
        Session { rig, rx, events: Vec::new(), sid: 0, root }
    }

    pub(super) fn work(&self) -> &Path {
        &self.rig.work
    }

    pub(super) fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    /// A row with this session's temp paths redacted.
    pub(super) fn row(&self, id: &str) -> Row {
        let mut row = Row::new(id);
        row.redact(self.work().display().to_string(), "<workdir>")
            .redact(self.data().display().to_string(), "<data>")
            .redact(self.root.display().to_string(), "<tmp>");
        row
    }

    /// Scripts one reply with `calls`, then the final answer, and runs the turn until it ends
    /// (parked when a call waits for a human).
    pub(super) async fn turn(&mut self, calls: Vec<ScriptedToolCall>) -> TurnOutcome {
        let opts = self.opts();
        self.turn_as(vec![Reply::tool_calls(calls)], opts).await
    }

    /// The options of these turns: the rig's working directory, approvals on, parking on.
    pub(super) fn opts(&self) -> ChatOptions {
        ChatOptions {
            workdir: Some(self.rig.work.clone()),
            park_mode: ParkMode::Exit,
            ..Default::default()
        }
    }

    /// Scripts `replies`, then the final answer, and runs one turn with `opts` until it ends.
    pub(super) async fn turn_as(&mut self, replies: Vec<Reply>, opts: ChatOptions) -> TurnOutcome {
        for reply in replies {
            self.rig.fake.push(reply);
        }
        self.rig.fake.push(Reply::text(ANSWER));
        let receipt = self.rig.engine.send_message("test", "please do it", opts).await.unwrap();
        self.sid = receipt.session_id;
        let outcome = self.rig.engine.wait_turn(receipt.session_id).await.unwrap();
        self.collect();
        outcome
    }

    pub(super) fn collect(&mut self) {
        let sid = self.sid;
        self.events.extend(drain(&mut self.rx, sid));
    }

    pub(super) async fn inbox(&self) -> Vec<InboxItem> {
        self.rig.engine.inbox().await.unwrap().items
    }

    /// Decides every open approval (`approve(item)` says how), then resumes the turn.
    pub(super) async fn decide_all(&mut self, approve: impl Fn(&InboxItem) -> bool) -> TurnOutcome {
        for item in self.inbox().await {
            let input = DecisionInput { approved: approve(&item), note: None, bypass: None };
            self.rig.engine.decide(item.tool_call_id, input, "matrix").await.unwrap();
        }
        let outcome = self.rig.engine.resume(self.sid, ParkMode::Exit).await.unwrap();
        self.collect();
        outcome
    }

    pub(super) async fn stored(&self) -> String {
        stored_view(&self.rig.engine.session_detail(self.sid).await.unwrap())
    }

    pub(super) async fn finished(&self) -> bool {
        answers(&self.rig.engine.session_detail(self.sid).await.unwrap()) == [ANSWER]
    }

    /// The results the model got for this turn's calls (the request after the calls).
    pub(super) fn told(&self) -> Vec<String> {
        self.rig.fake.requests().get(1).map(tool_results).unwrap_or_default()
    }

    /// Whether `secret` reached the model in any request.
    pub(super) fn leaked(&self, secret: &str) -> bool {
        self.rig
            .fake
            .requests()
            .iter()
            .any(|r| messages(r).iter().any(|m| text_of(m).contains(secret)))
    }
}

pub(super) fn call(name: &str, args: serde_json::Value) -> ScriptedToolCall {
    ScriptedToolCall::new(name, &args.to_string())
}

/// How the inbox presented each waiting call: its summary and the path it names.
pub(super) fn asked(items: &[InboxItem]) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|i| match &i.path {
            Some(p) => format!("{} [path {p}]", excerpt(&i.summary, 240)),
            None => excerpt(&i.summary, 240),
        })
        .collect();
    format!("the inbox asks: {}", parts.join(" and "))
}

/// Whether the inbox shows `target` (the resolved path) for every waiting call.
pub(super) fn names_target(items: &[InboxItem], targets: &[&Path]) -> bool {
    items.len() == targets.len()
        && targets.iter().all(|t| {
            let t = t.display().to_string();
            items.iter().any(|i| i.path.as_deref() == Some(t.as_str()) || i.summary.contains(&t))
        })
}

pub(super) fn models_view(told: &[String]) -> String {
    let quoted: Vec<String> = told.iter().map(|t| excerpt(t, 90)).collect();
    format!("the calls are answered with {}", quoted.join(" and "))
}

#[tokio::test]
async fn path_traversal_with_dot_dot() {
    let mut s = Session::new().await;
    std::fs::write(s.root.join("outside.txt"), "OUTSIDE-SECRET\n").unwrap();
    let parked = s
        .turn(vec![
            call("read_file", json!({"path": "../outside.txt"})),
            call("write_file", json!({"path": "../escape.txt", "content": "escaped\n"})),
        ])
        .await;
    let items = s.inbox().await;
    let shown = names_target(&items, &[&s.root.join("outside.txt"), &s.root.join("escape.txt")]);
    let written_early = s.root.join("escape.txt").exists();
    let outcome = s.decide_all(|_| false).await;
    let mut row = s.row("files.traversal");
    row.user_sees(format!("{}; after both are denied: {}", asked(&items), user_view(&s.events)))
        .model_sees(models_view(&s.told()))
        .stored(format!("{}; nothing written outside the working directory", s.stored().await))
        .unapproved_if(
            written_early || s.root.join("escape.txt").exists(),
            "the write to ../escape.txt",
        )
        .unapproved_if(s.leaked("OUTSIDE-SECRET"), "the read of ../outside.txt")
        .recovered_if(
            matches!(parked, TurnOutcome::Parked { .. }) && shown && s.finished().await,
            &format!(
                "parked: {parked:?}, the inbox named the resolved paths: {shown}, then {outcome:?}"
            ),
        )
        .finish();
}

#[tokio::test]
async fn absolute_path_outside_the_workdir() {
    let mut s = Session::new().await;
    let elsewhere = s.root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("notes.txt"), "ELSEWHERE-SECRET\n").unwrap();
    let target = elsewhere.join("new.txt");
    let parked = s
        .turn(vec![
            call("read_file", json!({"path": elsewhere.join("notes.txt")})),
            call("write_file", json!({"path": target, "content": "approved content\n"})),
        ])
        .await;
    let items = s.inbox().await;
    let shown = names_target(&items, &[&elsewhere.join("notes.txt"), &target]);
    let written_early = target.exists();
    // The read is denied, the write approved.
    let outcome = s.decide_all(|i| i.tool_name == "write_file").await;
    let written = std::fs::read_to_string(&target).unwrap_or_default();
    let mut row = s.row("files.absolute-outside");
    row.user_sees(format!(
        "{}; the read denied, the write approved: {}",
        asked(&items),
        user_view(&s.events)
    ))
    .model_sees(models_view(&s.told()))
    .stored(format!("{}; {} holds {}", s.stored().await, target.display(), excerpt(&written, 40)))
    .unapproved_if(written_early, "the write before its approval")
    .unapproved_if(s.leaked("ELSEWHERE-SECRET"), "the denied read")
    .lost_if(written != "approved content\n", "the approved write")
    .recovered_if(
        matches!(parked, TurnOutcome::Parked { .. }) && shown && s.finished().await,
        &format!("parked: {parked:?}, the inbox named the paths: {shown}, then {outcome:?}"),
    )
    .finish();
}

#[tokio::test]
async fn a_symlink_out_of_the_workdir() {
    let mut s = Session::new().await;
    let private = s.root.join("private");
    std::fs::create_dir_all(&private).unwrap();
    std::fs::write(private.join("id_key"), "PRIVATE-KEY\n").unwrap();
    // Inside the project the link looks like documentation.
    std::os::unix::fs::symlink(&private, s.work().join("docs")).unwrap();
    let parked = s
        .turn(vec![
            call("read_file", json!({"path": "docs/id_key"})),
            call("write_file", json!({"path": "docs/planted.txt", "content": "planted\n"})),
        ])
        .await;
    let items = s.inbox().await;
    let shown = names_target(&items, &[&private.join("id_key"), &private.join("planted.txt")]);
    let written_early = private.join("planted.txt").exists();
    let outcome = s.decide_all(|_| false).await;
    let mut row = s.row("files.symlink-out");
    row.user_sees(format!(
        "{} (`docs` links to <tmp>/private); after both are denied: {}",
        asked(&items),
        user_view(&s.events)
    ))
    .model_sees(models_view(&s.told()))
    .stored(format!("{}; nothing written through the link", s.stored().await))
    .unapproved_if(
        written_early || private.join("planted.txt").exists(),
        "the write through the link",
    )
    .unapproved_if(s.leaked("PRIVATE-KEY"), "the read through the link")
    .recovered_if(
        matches!(parked, TurnOutcome::Parked { .. }) && shown && s.finished().await,
        &format!(
            "parked: {parked:?}, the inbox named the link's real target: {shown}, then {outcome:?}"
        ),
    )
    .finish();
}

#[tokio::test]
async fn a_symlink_into_the_data_dirs_memory() {
    let mut s = Session::new().await;
    let memory = s.data().join("memory");
    std::fs::create_dir_all(&memory).unwrap();
    let private = s.root.join("private");
    std::fs::create_dir_all(&private).unwrap();
    // Into memory/ from the project, and out of memory/ to elsewhere.
    std::os::unix::fs::symlink(&memory, s.work().join("notes")).unwrap();
    std::os::unix::fs::symlink(&private, memory.join("out")).unwrap();
    let into = memory.join("todo.md");
    let out = private.join("x.md");
    let outcome = s
        .turn(vec![
            call("write_file", json!({"path": "notes/todo.md", "content": "- remember\n"})),
            call("write_file", json!({"path": memory.join("out/x.md"), "content": "out\n"})),
        ])
        .await;
    let items = s.inbox().await;
    let memory_written = std::fs::read_to_string(&into).unwrap_or_default() == "- remember\n";
    let out_asked = names_target(&items, &[&out]);
    let out_written_early = out.exists();
    let after = s.decide_all(|_| false).await;
    let mut row = s.row("files.symlink-into-memory");
    row.user_sees(format!(
        "the write through `notes` (a link to <data>/memory) runs without asking, as the seeded \
         memory rule allows: {}; the write through memory/out (a link out) is asked: {}",
        user_view(&s.events),
        asked(&items)
    ))
    .model_sees(models_view(&s.told()))
    .stored(format!(
        "{}; <data>/memory/todo.md written: {memory_written}; nothing written out of memory/",
        s.stored().await
    ))
    .unapproved_if(out_written_early || out.exists(), "the write through memory/out")
    .lost_if(!memory_written, "the memory write")
    .recovered_if(
        matches!(outcome, TurnOutcome::Parked { .. }) && out_asked && s.finished().await,
        &format!("parked: {outcome:?}, the link out of memory/ was asked by its target: {out_asked}, then {after:?}"),
    )
    .finish();
}

#[tokio::test]
async fn a_binary_file() {
    let mut s = Session::new().await;
    let image = s.work().join("logo.png");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    std::fs::write(&image, &bytes).unwrap();
    let outcome = s
        .turn(vec![
            call("read_file", json!({"path": "logo.png"})),
            call("edit_file", json!({"path": "logo.png", "old": "PNG", "new": "JPG"})),
        ])
        .await;
    let items = s.inbox().await;
    let told = s.told();
    let error = told.first().cloned().unwrap_or_default();
    let mut row = s.row("files.binary");
    row.user_sees(user_view(&s.events))
        .model_sees(models_view(&told))
        .stored(format!(
            "{}; logo.png unchanged: {}",
            s.stored().await,
            std::fs::read(&image).unwrap() == bytes
        ))
        .unapproved_if(std::fs::read(&image).unwrap() != bytes, "a change to logo.png")
        .lost_if(!s.finished().await, "the turn's answer");
    if items.is_empty() && matches!(outcome, TurnOutcome::Final { .. }) {
        row.clear_error(&error, &["binary"]);
    } else {
        row.recovered_if(false, &format!("a call nobody can run waited for a human ({outcome:?})"));
    }
    row.finish();
}

/// Writes a text file of about `mb` megabytes whose last line is `last`.
fn big_file(path: &Path, mb: usize, last: &str) -> u64 {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let line = "a line of a very large generated text file, for the reliability matrix\n";
    for _ in 0..(mb * 1024 * 1024 / line.len()) {
        f.write_all(line.as_bytes()).unwrap();
    }
    writeln!(f, "{last}").unwrap();
    f.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

#[tokio::test]
async fn reading_a_50_mb_file() {
    let mut s = Session::new().await;
    big_file(&s.work().join("big.log"), 50, "THE LAST LINE");
    let outcome = s.turn(vec![call("read_file", json!({"path": "big.log"}))]).await;
    let told = s.told();
    let result = told.first().cloned().unwrap_or_default();
    let last_line = result.lines().last().unwrap_or_default().to_string();
    let mut row = s.row("files.read-50mb");
    row.user_sees(user_view(&s.events))
        .model_sees(format!(
            "the first {} lines ({} KB), ending {}",
            result.lines().filter(|l| !l.starts_with('[')).count(),
            result.len() / 1024,
            excerpt(&last_line, 80)
        ))
        .stored(s.stored().await)
        .lost_if(!s.finished().await, "the turn's answer")
        .recovered_if(
            matches!(outcome, TurnOutcome::Final { .. })
                && result.len() < 3 * 1024 * 1024
                && last_line.contains("start_line"),
            &format!("the model got {} bytes ending {}", result.len(), excerpt(&last_line, 80)),
        )
        .finish();
}

#[tokio::test]
async fn writing_a_50_mb_file() {
    let mut s = Session::new().await;
    let path = s.work().join("big.log");
    let size = big_file(&path, 50, "THE LAST LINE");
    // An edit tool holds the whole file in memory: on a file this size it must refuse before
    // anyone is asked to approve a diff it cannot make, and leave the file alone.
    let outcome = s
        .turn(vec![call(
            "edit_file",
            json!({"path": "big.log", "old": "THE LAST LINE", "new": "THE EDITED LAST LINE"}),
        )])
        .await;
    let items = s.inbox().await;
    let after = std::fs::metadata(&path).unwrap().len();
    let intact =
        after == size && std::fs::read_to_string(&path).unwrap().ends_with("THE LAST LINE\n");
    let told = s.told();
    let error = told.first().cloned().unwrap_or_default();
    let mut row = s.row("files.write-50mb");
    row.user_sees(format!(
        "{}; {}",
        if items.is_empty() { "no approval asked".to_string() } else { asked(&items) },
        user_view(&s.events)
    ))
    .model_sees(models_view(&told))
    .stored(format!("{}; big.log untouched ({after} bytes): {intact}", s.stored().await))
    .unapproved_if(!intact, "a change to big.log")
    .lost_if(!intact, "big.log as it was")
    .lost_if(!s.finished().await, "the turn's answer");
    if items.is_empty()
        && matches!(outcome, TurnOutcome::Final { .. })
        && error.starts_with("Error")
    {
        row.clear_error(&error, &["big.log", "too large", &size.to_string()]);
    } else {
        row.recovered_if(
            false,
            &format!("an edit of a 50 MB file ended {outcome:?}, asking {}", asked(&items)),
        );
    }
    row.finish();
}

#[tokio::test]
async fn a_file_deleted_between_approval_and_write() {
    let mut s = Session::new().await;
    std::fs::write(s.work().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(s.work().join("b.txt"), "beta\n").unwrap();
    let parked = s
        .turn(vec![
            call("edit_file", json!({"path": "a.txt", "old": "alpha", "new": "ALPHA"})),
            call("write_file", json!({"path": "b.txt", "content": "BETA\n"})),
        ])
        .await;
    let items = s.inbox().await;
    // The person deletes both files, then approves the diffs they saw earlier.
    std::fs::remove_file(s.work().join("a.txt")).unwrap();
    std::fs::remove_file(s.work().join("b.txt")).unwrap();
    let outcome = s.decide_all(|_| true).await;
    let told = s.told();
    let recreated: Vec<&str> =
        ["a.txt", "b.txt"].into_iter().filter(|f| s.work().join(f).exists()).collect();
    let mut row = s.row("files.deleted-before-write");
    row.user_sees(format!(
        "{}; both files deleted, then both approved: {}",
        asked(&items),
        user_view(&s.events)
    ))
    .model_sees(models_view(&told))
    .stored(format!(
        "{}; recreated: {}",
        s.stored().await,
        if recreated.is_empty() { "none".to_string() } else { recreated.join(", ") }
    ))
    .unapproved_if(
        !recreated.is_empty(),
        "a write the approved diff did not show (creating a deleted file)",
    )
    .lost_if(!s.finished().await, "the turn's answer");
    let errors_name_files = told.len() == 2
        && told[0].contains("a.txt")
        && told[1].contains("b.txt")
        && told.iter().all(|t| t.starts_with("Error"));
    if matches!(parked, TurnOutcome::Parked { .. }) && errors_name_files {
        row.clear_error(&told.join(" "), &["a.txt", "b.txt"]);
    } else {
        row.recovered_if(
            false,
            &format!("parked: {parked:?}, then {outcome:?}, the model was told {told:?}"),
        );
    }
    row.finish();
}

#[tokio::test]
async fn a_file_changed_between_approval_and_write() {
    let mut s = Session::new().await;
    std::fs::write(s.work().join("notes.txt"), "version one\n").unwrap();
    std::fs::write(s.work().join("plan.txt"), "step 1\nstep 2\nstep 3\n").unwrap();
    let parked = s
        .turn(vec![
            call("write_file", json!({"path": "notes.txt", "content": "the model's version\n"})),
            call("edit_file", json!({"path": "plan.txt", "old": "step 2", "new": "step two"})),
        ])
        .await;
    let items = s.inbox().await;
    // The person edits both files by hand, then approves the diffs they saw before.
    std::fs::write(s.work().join("notes.txt"), "the person's own edit\n").unwrap();
    std::fs::write(s.work().join("plan.txt"), "step 1 (done)\nstep 2\nstep 3\n").unwrap();
    let outcome = s.decide_all(|_| true).await;
    let notes = std::fs::read_to_string(s.work().join("notes.txt")).unwrap();
    let plan = std::fs::read_to_string(s.work().join("plan.txt")).unwrap();
    let told = s.told();
    let mut row = s.row("files.changed-before-write");
    row.user_sees(format!(
        "{}; both files edited by the person, then both approved: {}",
        asked(&items),
        user_view(&s.events)
    ))
    .model_sees(models_view(&told))
    .stored(format!(
        "{}; notes.txt holds {}, plan.txt holds {}",
        s.stored().await,
        excerpt(&notes, 40),
        excerpt(&plan, 60)
    ))
    .lost_if(notes != "the person's own edit\n", "the person's edit of notes.txt")
    .lost_if(!plan.starts_with("step 1 (done)"), "the person's edit of plan.txt")
    .unapproved_if(plan.contains("step two"), "an edit of plan.txt whose diff no one approved")
    .lost_if(!s.finished().await, "the turn's answer");
    let refused =
        told.len() == 2 && told.iter().all(|t| t.starts_with("Error") && t.contains("changed"));
    if matches!(parked, TurnOutcome::Parked { .. }) && refused {
        row.clear_error(&told.join(" "), &["notes.txt", "plan.txt", "approv"]);
    } else {
        row.recovered_if(
            false,
            &format!("parked: {parked:?}, then {outcome:?}, the model was told {told:?}"),
        );
    }
    row.finish();
}
