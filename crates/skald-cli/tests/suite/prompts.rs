//! Long prompts: `skald chat -` reads the message from stdin, `--file PATH` from a file (a
//! regular one only), against the strict fake provider.

use std::process::Stdio;

use skald_testkit::{FakeLlm, Reply};
use tokio::io::AsyncWriteExt;

use super::chat::{cli, dirs, run};

/// The text of the last user message the fake received.
fn last_user_text(fake: &FakeLlm) -> String {
    let requests = fake.requests();
    let body = &requests.last().expect("the model was asked").body;
    let messages = body["messages"].as_array().expect("a chat request");
    let user = messages.iter().rev().find(|m| m["role"] == "user").expect("a user message");
    user["content"].as_str().map(str::to_string).unwrap_or_else(|| user["content"].to_string())
}

/// Longer than one argument may be on Linux (128 KiB), so only stdin or a file can carry it.
fn long_prompt() -> String {
    let line = "Summarise this line of the report, which goes on for quite a while.\n";
    format!("{}the end", line.repeat(3_000))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_dash_sends_what_stdin_holds() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    fake.push(Reply::text("Read it."));
    let prompt = long_prompt();
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "--workdir"]).arg(&work).arg("-");
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The closing line end is dropped, as `$(cat file)` would.
    // A `skald` that never reads stdin closes the pipe: the assertions below tell what it sent.
    let _ = stdin.write_all(format!("{prompt}\n").as_bytes()).await;
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("Read it."), "{stdout}");
    assert_eq!(last_user_text(&fake), prompt);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_file_sends_the_file_as_written_even_when_it_starts_with_a_slash() {
    let fake = FakeLlm::start().await.unwrap();
    let (dir, data, work) = dirs();
    fake.push(Reply::text("Noted."));
    // Read from a file, `/new …` is a message: a prompt file is never a session command.
    let prompt = format!("/new plan\n{}", long_prompt());
    let file = dir.path().join("prompt.md");
    std::fs::write(&file, format!("{prompt}\r\n")).unwrap();
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "--workdir"]).arg(&work).arg("--file").arg(&file);
    let (code, stdout, stderr) = run(cmd).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(last_user_text(&fake), prompt);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_file_names_the_path_it_cannot_read_and_refuses_what_is_not_a_file() {
    let fake = FakeLlm::start().await.unwrap();
    let (dir, data, work) = dirs();
    let missing = dir.path().join("no-such-prompt.md");
    #[cfg(unix)]
    let fifo = {
        let fifo = dir.path().join("prompt.fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        fifo
    };
    let mut refused = vec![(missing.clone(), "No such file"), (work.clone(), "a directory")];
    #[cfg(unix)]
    refused.push((fifo, "a FIFO"));
    for (path, why) in refused {
        let mut cmd = cli(&fake, &data);
        cmd.args(["chat", "--workdir"]).arg(&work).arg("--file").arg(&path);
        // A FIFO nobody writes to would hang a reader: `run` fails the test after 60 s.
        let (code, stdout, stderr) = run(cmd).await;
        assert_eq!(code, 1, "{}: stdout: {stdout}\nstderr: {stderr}", path.display());
        assert!(stderr.contains(&path.display().to_string()), "names the path: {stderr}");
        assert!(stderr.contains(why), "says why ({why}): {stderr}");
    }
    let mut both = cli(&fake, &data);
    both.args(["chat", "--file"]).arg(&missing).arg("hello");
    assert_eq!(run(both).await.0, 2, "a message and --file together are bad usage");
    assert!(fake.requests().is_empty(), "nothing reached the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_help_names_stdin_and_file() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, _work) = dirs();
    let mut cmd = cli(&fake, &data);
    cmd.args(["chat", "--help"]);
    let (code, stdout, _) = run(cmd).await;
    assert_eq!(code, 0);
    assert!(stdout.contains("--file <PATH>"), "{stdout}");
    assert!(stdout.contains("`-` reads it from stdin"), "{stdout}");
}
