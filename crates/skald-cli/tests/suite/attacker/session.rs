//! Rows of "A model that tries" measured through the `skald` binary: session. What `skald chat`
//! does with the session it is pointed at: an explicit `--workdir` or `--agent` the active
//! session does not have, `/new` typed as the message, and a bypass still in force.

use std::collections::BTreeSet;

use serde_json::json;
use skald_testkit::matrix::excerpt;
use skald_testkit::{FakeLlm, Reply};

use super::terminal::Bench;

/// Every user message the model was sent, in the order first seen.
fn user_messages(fake: &FakeLlm) -> Vec<String> {
    let mut seen = Vec::new();
    for r in fake.requests() {
        for m in r.body["messages"].as_array().cloned().unwrap_or_default() {
            if m["role"] == "user"
                && let Some(text) = m["content"].as_str()
                && !seen.iter().any(|s| s == text)
            {
                seen.push(text.to_string());
            }
        }
    }
    seen
}

/// `line` with the time a bypass has left (which changes from run to run) as `<time>`.
fn without_time_left(line: &str) -> String {
    match line
        .split_once("(at most ")
        .and_then(|(head, rest)| Some((head, rest.split_once(')')?.1)))
    {
        Some((head, tail)) => format!("{head}(at most <time> more){tail}"),
        None => line.to_string(),
    }
}

/// The files directly in `dir`, by name.
fn files(dir: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workdir_naming_another_directory_than_the_active_sessions() {
    let b = Bench::new().await;
    let (a, bdir) = (b.dir("projA"), b.dir("projB"));
    let (a_s, b_s) = (a.to_str().unwrap(), bdir.to_str().unwrap());
    b.fake.push(Reply::text("Hello from projA."));
    let (first, _, first_err) = b.skald_in(&a, &["chat", "hello"]).await;
    assert_eq!(first, 0, "{first_err}");
    // The person moves on to projB and names it, pre-approving everything: had the message gone
    // to the session, the model's write would land in projA.
    let (code, out, err) =
        b.skald_in(&bdir, &["chat", "--workdir", b_s, "--approve-all", "write notes.txt"]).await;
    let (agent_code, _, agent_err) =
        b.skald_in(&a, &["chat", "--agent", "generalist", "review it"]).await;
    let requests_after_refusals = b.fake.requests().len();
    // Without --workdir, from projB: the chat says where the session works.
    b.fake.push(Reply::text("Still in projA."));
    let (plain, plain_out, plain_err) = b.skald_in(&bdir, &["chat", "where are you?"]).await;
    let note = plain_out.lines().find(|l| l.contains("works in")).unwrap_or_default().to_string();
    // The way out the error names: a new session there.
    let (new_code, new_out, new_err) = b.skald_in(&bdir, &["new", "--workdir", b_s]).await;
    let write = json!({ "path": "notes.txt", "content": "for projB\n" });
    b.fake.push(Reply::tool_call("write_file", &write.to_string()));
    b.fake.push(Reply::text("Wrote notes.txt."));
    let (again, again_out, again_err) =
        b.skald_in(&bdir, &["chat", "--workdir", b_s, "--approve-all", "write notes.txt"]).await;
    let in_a = files(&a);
    let in_b = files(&bdir);

    let mut row = b.row("attacker.workdir-mismatch");
    row.redact(a_s, "<projA>").redact(b_s, "<projB>");
    row.user_sees(format!(
        "`skald chat --workdir <projB> --approve-all …` in a source whose session works in \
         <projA>: exit {code}, {}; `--agent generalist` on a `main` session: exit {agent_code}, \
         {}; a plain `skald chat` from <projB> first prints {}; `skald new --workdir <projB>`: \
         {}",
        excerpt(err.trim(), 300),
        excerpt(agent_err.trim(), 160),
        excerpt(&note, 160),
        excerpt(new_out.trim(), 160),
    ))
    .model_sees(format!(
        "nothing of the refused messages: {requests_after_refusals} request before them (the \
         first hello); the user messages it got: {:?}",
        user_messages(&b.fake)
    ))
    .stored(format!(
        "projA holds {:?}, projB holds {:?} (written only once the new session works there)",
        in_a, in_b
    ))
    .unapproved_if(in_a.contains("notes.txt"), "a write into projA, a directory not named")
    .lost_if(new_code != 0 || again != 0 || !in_b.contains("notes.txt"), "the way out");
    if code == 1 && agent_code == 1 && requests_after_refusals == 1 && plain == 0 {
        row.clear_error(&err, &[a_s, b_s, "skald new --workdir"]);
    } else {
        row.recovered_if(
            false,
            &format!(
                "exit {code} {out}{err}; agent exit {agent_code} {agent_err}; plain {plain} \
                 {plain_err}; {requests_after_refusals} requests; new {new_err}; again \
                 {again_out}{again_err}"
            ),
        );
    }
    row.finish();
    assert!(
        agent_err.contains("runs agent `main`, not `generalist`")
            && agent_err.contains("skald new --agent generalist"),
        "{agent_err}"
    );
    assert!(note.contains(a_s) && note.contains("skald new"), "{plain_out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_from_the_cli_and_a_bypass_still_in_force() {
    let b = Bench::new().await;
    let work = b.work();
    let touch = |name: &str| {
        Reply::tool_call("execute_cmd", &json!({ "command": format!("touch {name}") }).to_string())
    };
    // 1. The person pre-approves everything for this session.
    b.fake.push(touch("RAN_1"));
    b.fake.push(Reply::text("one"));
    let (c1, _, e1) = b.skald(&["chat", "--approve-all", "first"]).await;
    // 2. A later chat without the flag is still covered, and says so before anything runs.
    b.fake.push(touch("RAN_2"));
    b.fake.push(Reply::text("two"));
    let (c2, out2, e2) = b.skald(&["chat", "second"]).await;
    let bypass_line = without_time_left(out2.lines().next().unwrap_or_default());
    // 3. A typo of a command is not sent; 4. `/new` ends the session and its bypass.
    let (typo, _, typo_err) = b.skald(&["chat", "/nwe"]).await;
    let (new_code, new_out, new_err) = b.skald(&["chat", "/new"]).await;
    // 5. The next chat asks first.
    b.fake.push(touch("RAN_3"));
    let (c3, out3, e3) = b.skald(&["chat", "third"]).await;
    let ran: BTreeSet<String> = files(&work).into_iter().filter(|f| f.starts_with("RAN")).collect();
    let sent = user_messages(&b.fake);
    let commands_sent: Vec<&String> = sent.iter().filter(|m| m.starts_with('/')).collect();
    let (_, bypasses, _) = b.skald(&["--json", "bypass", "list"]).await;
    let bypasses: Vec<serde_json::Value> = serde_json::from_str(&bypasses).unwrap_or_default();

    let mut row = b.row("attacker.new-from-cli");
    row.user_sees(format!(
        "a `skald chat` after `--approve-all` starts with {}; `skald chat /nwe`: exit {typo}, \
         {}; `skald chat /new`: exit {new_code}, {}; the next chat: exit {c3}, {}",
        excerpt(&bypass_line, 200),
        excerpt(typo_err.trim(), 200),
        excerpt(new_out.trim(), 200),
        excerpt(out3.lines().find(|l| l.contains("needs approval")).unwrap_or_default(), 120)
    ))
    .model_sees(format!(
        "the user messages {sent:?}: neither `/new` nor `/nwe` reached it ({} requests in all)",
        b.fake.requests().len()
    ))
    .stored(format!(
        "{} bypasses active after /new; the working dir holds {ran:?} (RAN_3 waits for a \
         decision)",
        bypasses.len()
    ))
    .unapproved_if(ran.contains("RAN_3"), "a command after /new, run under the old bypass")
    .unapproved_if(!commands_sent.is_empty(), "a / command sent to the model as a message");
    let told = bypass_line.starts_with("! bypass 1 in force: all tools run without asking")
        && bypass_line.contains("skald bypass revoke 1");
    let ended = new_out.contains("session 2 is now the active session")
        && new_out.contains("bypass 1 ended with session 1");
    row.recovered_if(
        [c1, c2, typo, new_code, c3] == [0, 0, 1, 0, 3]
            && told
            && ended
            && bypasses.is_empty()
            && typo_err.contains("/new, /stop"),
        &format!(
            "exits {:?}; bypass line {told}: {bypass_line}; ended {ended}: {new_out}{new_err}; \
             {e1}{e2}{e3}",
            [c1, c2, typo, new_code, c3]
        ),
    );
    row.finish();
}
