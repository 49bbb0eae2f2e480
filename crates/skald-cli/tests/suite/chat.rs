//! `skald chat`, `skald resume` and `skald stop` as processes against the fake provider (in this
//! test process, over loopback HTTP): exit codes, `--json` event lines, the debug tree after a
//! write, a resume with nothing to do, and a stop sent from another process.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use skald_protocol::{Event, EventEnvelope, TurnEnd};
use skald_testkit::{FakeLlm, HANG_GUARD, Reply};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// `skald` with the fake as the env-defined model and nothing from the user's environment.
pub(super) fn cli(fake: &FakeLlm, data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skald"));
    cmd.env_remove("SKALD_DATA_DIR")
        .env_remove("SKALD_LLM_API_KEY")
        .env("SKALD_LLM_BASE_URL", fake.base_url())
        .env("SKALD_LLM_MODEL", "fake-model")
        .arg("--data-dir")
        .arg(data)
        .kill_on_drop(true);
    cmd
}

pub(super) async fn run(mut cmd: Command) -> (i32, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("skald hung")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(super) fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = std::fs::canonicalize(work).unwrap();
    (dir, data, work)
}

fn envelopes(stdout: &str) -> Vec<EventEnvelope> {
    stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<EventEnvelope>(l)
                .unwrap_or_else(|e| panic!("not an event line ({e}): {l}"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_with_approve_all_writes_the_file_and_the_debug_tree_shows_the_turn() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    fake.push(Reply::tool_call(
        "write_file",
        &json!({"path": "hello.txt", "content": "hi from the cli\n"}).to_string(),
    ));
    fake.push(Reply::text("Wrote hello.txt."));
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "--approve-all", "--workdir"]).arg(&work).arg("write hello.txt");
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(std::fs::read_to_string(work.join("hello.txt")).unwrap(), "hi from the cli\n");
    assert!(stdout.contains("Wrote hello.txt."), "{stdout}");
    // The applied change is printed under the call: a one-line hunk adding the text.
    assert!(stdout.contains("(+1 −0)"), "{stdout}");
    assert!(
        stdout.contains("    @@ -0,0 +1 @@") || stdout.contains("    @@ -0,0 +1,1 @@"),
        "{stdout}"
    );
    assert!(stdout.contains("    +hi from the cli"), "{stdout}");
    assert!(!stdout.contains("+++ "), "no file header: {stdout}");

    let mut show = cli(&fake, &data);
    show.args(["--json", "sessions", "show", "1"]);
    let (code, stdout, stderr) = run(show).await;
    assert_eq!(code, 0, "{stderr}");
    let tree: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let kinds: Vec<&str> =
        tree["messages"].as_array().unwrap().iter().filter_map(|m| m["kind"].as_str()).collect();
    assert_eq!(kinds, ["user", "thinking", "tool", "assistant"], "{stdout}");
    let tool = &tree["messages"][2];
    assert_eq!(
        (tool["name"].as_str(), tool["status"].as_str()),
        (Some("write_file"), Some("done"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_without_approve_all_parks_with_exit_3_and_nothing_is_written() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    fake.push(Reply::tool_call(
        "write_file",
        &json!({"path": "parked.txt", "content": "x"}).to_string(),
    ));
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "--workdir"]).arg(&work).arg("write parked.txt");
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 3, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("waiting for your decision"), "{stdout}");
    assert!(!work.join("parked.txt").exists());
    assert_eq!(fake.requests().len(), 1, "a parked turn must not call the model again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_cut_off_and_asked_again_is_marked_before_the_full_answer() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, _work) = dirs();
    fake.push(Reply::DropMidStream { partial: "Here is the pl".into() });
    fake.push(Reply::text("Here is the plan, in full."));
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "what is the plan?"]);
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    // The terminal cannot take back the cut-off text: a line says it was void.
    let lines: Vec<&str> = stdout.lines().collect();
    let cut = lines.iter().position(|l| *l == "Here is the pl");
    let retry = lines.iter().position(|l| {
        l.starts_with("  ↻ model env (SKALD_LLM_BASE_URL / SKALD_LLM_MODEL) failed (")
            && l.ends_with("); asking again")
    });
    let full = lines.iter().position(|l| *l == "Here is the plan, in full.");
    assert!(cut.is_some() && cut < retry && retry < full, "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_one_event_envelope_per_line_and_a_failure_exits_1() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    fake.push(Reply::text("plain answer"));
    let mut cmd = cli(&fake, &data);
    cmd.args(["--json", "chat", "--workdir"]).arg(&work).arg("hello");
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 0, "{stderr}");
    let evs = envelopes(&stdout);
    assert!(
        matches!(&evs.iter().find(|e| matches!(e.event, Event::UserMessage { .. })).unwrap().event,
        Event::UserMessage { content, .. } if content == "hello")
    );
    let done = evs.iter().find_map(|e| match &e.event {
        Event::Done { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert_eq!(done.as_deref(), Some("plain answer"));
    assert!(
        evs.iter().all(|e| e.session_id == evs[0].session_id && e.source.as_deref() == Some("cli"))
    );

    // A request the provider rejects (400, also when asked once more without streaming, as the
    // client does for servers that cannot stream tool calls) fails the turn: exit 1.
    fake.push(Reply::Status { code: 400, times: 2, retry_after: None, body: None });
    let mut cmd = cli(&fake, &data);
    cmd.args(["--json", "chat", "--workdir"]).arg(&work).arg("again");
    let (code, stdout, _stderr) = run(cmd).await;
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {_stderr}");
    let ended = envelopes(&stdout).into_iter().find_map(|e| match e.event {
        Event::TurnEnded { outcome } => Some(outcome),
        _ => None,
    });
    assert!(matches!(ended, Some(TurnEnd::Failed { .. })), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skald_stop_from_another_process_stops_a_running_chat() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    fake.push(Reply::Stall { ms: 30_000, then_hang: true });
    let mut cmd = cli(&fake, &data);
    cmd.args(["--json", "chat", "--workdir"]).arg(&work).arg("wait forever");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut chat = cmd.spawn().unwrap();
    let mut lines = BufReader::new(chat.stdout.take().unwrap()).lines();

    // The echo names the session; then wait until the model request is really in flight.
    let session_id = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("chat ended early");
            let ev: EventEnvelope = serde_json::from_str(&line).unwrap();
            if matches!(ev.event, Event::UserMessage { .. }) {
                return ev.session_id.unwrap();
            }
        }
    })
    .await
    .expect("no user_message echo");
    fake.wait_in_flight(1).await;

    // The model never answers: only the stop ends the chat.
    let mut stop = cli(&fake, &data);
    stop.args(["stop", "--session", &session_id.to_string()]);
    let (code, stdout, stderr) = run(stop).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("stop requested"), "{stdout}");

    let status = tokio::time::timeout(HANG_GUARD, chat.wait())
        .await
        .expect("the chat process did not stop")
        .unwrap();
    assert_eq!(status.code(), Some(1), "a cancelled turn exits 1");
    let mut rest = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        rest.push(serde_json::from_str::<EventEnvelope>(&line).unwrap().event);
    }
    assert!(rest.contains(&Event::TurnEnded { outcome: TurnEnd::Cancelled {} }), "{rest:?}");
    // The model request was aborted.
    fake.wait_in_flight(0).await;

    // The session is usable again from a new process.
    fake.push(Reply::text("fresh start"));
    let mut again = cli(&fake, &data);
    again.args(["chat", "--workdir"]).arg(&work).arg("hello again");
    let (code, stdout, stderr) = run(again).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("fresh start"));
}

/// A turn that parks on a question prints the question whole (title, every line of its text,
/// the suggested answers) and how to answer, before the line saying it waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_parks_the_chat_is_shown_whole() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    let args = json!({
        "title": "Which branch?",
        "question": "I found two branches.\nThe second one deletes the `data/` folder.",
        "suggested_answers": ["main", "cleanup"],
    });
    fake.push(Reply::tool_call("ask_user_clarification", &args.to_string()));
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "--workdir"]).arg(&work).arg("merge it");
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 3, "stdout: {stdout}\nstderr: {stderr}");
    let lines: Vec<&str> = stdout.lines().map(str::trim).collect();
    let head = lines.iter().position(|l| l.starts_with("? Which branch? (question "));
    let head = head.unwrap_or_else(|| panic!("no question line: {stdout}"));
    assert!(lines[head].ends_with("skald answer 1 TEXT"), "{stdout}");
    assert_eq!(
        lines[head + 1..head + 4],
        [
            "I found two branches.",
            "The second one deletes the `data/` folder.",
            "suggested: main | cleanup"
        ],
        "{stdout}"
    );
    assert!(stdout.contains("waiting for your decision in session 1"), "{stdout}");
}

/// The app's other slash commands run from `skald chat` on the active session; `//text` sends
/// `/text` to the model; `skald new --json` names the new session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_run_on_the_active_session_and_a_double_slash_sends_one() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    let chat = |msg: &str| {
        let mut cmd = cli(&fake, &data);
        cmd.current_dir(&work).args(["chat", msg]);
        run(cmd)
    };
    fake.push(Reply::text("literal"));
    let (code, out, err) = chat("//etc/hosts is what I mean").await;
    assert_eq!((code, out.trim()), (0, "literal"), "{err}");
    let sent = fake.requests()[0].body["messages"].to_string();
    assert!(sent.contains("\"/etc/hosts is what I mean\""), "{sent}");

    let (code, out, err) = chat("/context").await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("session 1: the next request carries "), "{out}");
    let (code, out, err) = chat("/cost").await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("session 1: ") && out.contains("1 model replies"), "{out}");
    let (code, out, err) = chat("/resettools").await;
    assert_eq!(
        (code, out.trim()),
        (
            0,
            "session 1: 0 activated tool groups revoked; the agents activate them again when they need them"
        ),
        "{err}"
    );
    let (code, out, err) = chat("/stop").await;
    assert_eq!((code, out.trim()), (0, "session 1 has no running turn"), "{err}");
    let (code, _, err) = chat("/stop now").await;
    assert_eq!(code, 1);
    assert!(err.contains("/stop takes no argument"), "{err}");

    let mut new = cli(&fake, &data);
    new.current_dir(&work).args(["--json", "new"]);
    let (code, out, err) = run(new).await;
    assert_eq!(code, 0, "{err}");
    let created: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(created, json!({"session_id": 2, "ended_bypasses": []}));
    assert_eq!(fake.requests().len(), 1, "no command reached the model");
}

/// `skald resume` on a session whose turn already answered says so instead of printing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_of_an_answered_session_says_there_is_nothing_to_resume() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    fake.push(Reply::text("All done here."));
    let mut chat = cli(&fake, &data);
    chat.args(["chat", "--workdir"]).arg(&work).arg("hello");
    let (code, stdout, stderr) = run(chat).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");

    let mut resume = cli(&fake, &data);
    resume.args(["resume", "--session", "1"]);
    let (code, stdout, stderr) = run(resume).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(
        stdout.trim_end(),
        "session 1: nothing to resume (the last turn ended with its answer: All done here.)"
    );
    assert_eq!(fake.requests().len(), 1, "the resume asked the model nothing");
}

/// `sessions show` reads like a transcript: a model step with no words prints nothing of its
/// own, a long result shows its first lines and says how to see it whole, `--full` shows it all,
/// and the session is titled by its prompt in `sessions list`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_show_keeps_long_results_short_until_asked_and_list_shows_the_title() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    let big: String = (1..=300).map(|n| format!("line {n} of a long file\n")).collect();
    std::fs::write(work.join("big.txt"), &big).unwrap();
    fake.push(Reply::tool_call("read_file", &json!({"path": "big.txt"}).to_string()));
    fake.push(Reply::text("It is long."));
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "--approve-all", "--workdir"]).arg(&work).arg("read big.txt for me");
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");

    let mut show = cli(&fake, &data);
    show.args(["sessions", "show", "1"]);
    let (code, shown, stderr) = run(show).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!shown.lines().any(|l| l.trim_end() == "thinking:"), "an empty step: {shown}");
    assert!(shown.contains("line 1 of a long file"), "{shown}");
    assert!(!shown.contains("line 299 of a long file"), "the whole result: {shown}");
    assert!(
        shown.contains("more bytes") && shown.contains("skald sessions show 1 --full"),
        "{shown}"
    );
    assert!(shown.lines().count() < 40, "{} lines", shown.lines().count());

    let mut full = cli(&fake, &data);
    full.args(["sessions", "show", "1", "--full"]);
    let (code, whole, _) = run(full).await;
    assert_eq!(code, 0);
    assert!(whole.contains("line 299 of a long file"), "--full shows it all: {whole}");

    let mut list = cli(&fake, &data);
    list.args(["sessions", "list"]);
    let (_, listed, _) = run(list).await;
    assert!(listed.contains("read big.txt for me"), "titled by its prompt: {listed}");

    // A prompt is anyone's text: the title it gives cannot drive the terminal that lists it.
    fake.push(Reply::text("ok"));
    let mut hostile = cli(&fake, &data);
    hostile
        .args(["chat", "--new", "--workdir"])
        .arg(&work)
        .arg("\u{1b}]0;owned\u{7}clear \u{202e}txt.exe");
    let (code, out, err) = run(hostile).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let mut list = cli(&fake, &data);
    list.args(["sessions", "list"]);
    let (_, listed, _) = run(list).await;
    assert!(!listed.contains('\u{1b}') && !listed.contains('\u{202e}'), "{listed:?}");
    assert!(listed.contains("clear"), "{listed}");
}

/// A model that cannot be reached is named as the person configured it: the client from the
/// environment by its variables, and the server it tried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_model_names_its_variables_and_server() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut cmd = cli(&fake, &data);
    cmd.env("SKALD_LLM_BASE_URL", format!("http://{dead}/v1"));
    cmd.args(["chat", "--workdir"]).arg(&work).arg("hello?");
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("SKALD_LLM_BASE_URL"), "{said}");
    assert!(said.contains(&format!("http://{dead}")), "{said}");
}
