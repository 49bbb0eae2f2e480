//! `/compact [focus]` from the command line: a summary row, then the next request starts from it.

use std::process::Command;

use skald_testkit::{FakeLlm, Reply};

#[tokio::test(flavor = "multi_thread")]
async fn slash_compact_summarises_and_the_next_request_starts_from_the_summary() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.yml"),
        "llm:\n  compaction:\n    enabled: false\n    keep_recent_tokens: 5\n",
    )
    .unwrap();
    let run = |msg: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_skald"))
            .args(["--data-dir", data.to_str().unwrap(), "chat", msg])
            .env("SKALD_LLM_BASE_URL", fake.base_url())
            .env("SKALD_LLM_MODEL", "fake-model")
            .env_remove("SKALD_DATA_DIR")
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    for i in 0..4 {
        fake.push(Reply::text(&format!("answer number {i} with some words in it")));
        assert_eq!(run(&format!("question number {i} about the parser")).0, Some(0));
    }
    let summary = "## Goal\nFix the parser.\n## Next Steps\nWrite tests.";
    fake.push(Reply::text(summary));
    let (code, out) = run("/compact keep the parser details");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("compacted session 1: "), "{out}");
    assert!(out.ends_with(&format!(")\n{summary}\n")), "the summary is printed: {out}");
    let summariser = fake.requests().last().unwrap().body.to_string();
    assert!(summariser.contains("keep the parser details"), "the focus reaches the summariser");
    fake.push(Reply::text("ok"));
    assert_eq!(run("next").0, Some(0));
    let last = fake.requests().last().unwrap().body.clone();
    let text = last["messages"].to_string();
    assert!(text.contains("Fix the parser."), "{text}");
    assert!(!text.contains("question number 0"), "old rows are replaced by the summary: {text}");

    // A second /compact folds the first summary into a new one, and the next request carries
    // the new one only.
    let second = "## Goal\nFix the parser.\n## Progress\nQuestion 3 answered.";
    fake.push(Reply::text(second));
    let (code, out) = run("/compact");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with(&format!(")\n{second}\n")), "the new summary is printed: {out}");
    let summariser = fake.requests().last().unwrap().body.to_string();
    assert!(summariser.contains("Write tests."), "the previous summary is updated: {summariser}");
    fake.push(Reply::text("fine"));
    assert_eq!(run("after").0, Some(0));
    let text = fake.requests().last().unwrap().body["messages"].to_string();
    assert!(text.contains("Question 3 answered."), "{text}");
    assert!(!text.contains("Write tests."), "the old summary is replaced: {text}");
}

/// A model whose window the request outgrows: `skald chat` says so in a line (the window the
/// server named, that it is summarising), then prints the answer to the retried request; the
/// next `skald chat` knows the window (`/context` shows it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_tells_of_a_context_overflow_then_answers_after_summarising() {
    use super::chat::{cli, dirs, run};

    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    let say = |msg: &str| {
        let mut cmd = cli(&fake, &data);
        cmd.args(["chat", "--workdir"]).arg(&work).arg(msg);
        cmd
    };
    fake.push(Reply::text("first answer"));
    assert_eq!(run(say("a first question")).await.0, 0);
    let overflow = r#"{"error":{"message":"Requested tokens (5000) exceed context window of 4096","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    fake.push(Reply::Status {
        code: 400,
        times: 1,
        retry_after: None,
        body: Some(overflow.into()),
    });
    fake.push(Reply::text("SUMMARY: one question asked."));
    fake.push(Reply::text("second answer"));
    let (code, out, err) = run(say("a second question")).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let told = out.lines().find(|l| l.contains("context window is 4096 tokens")).expect(&out);
    assert!(told.trim_start().starts_with("↻ model env"), "{told}");
    assert!(told.contains("needs 5000 tokens: summarising"), "{told}");
    assert!(told.ends_with("asking again"), "{told}");
    assert!(out.trim_end().ends_with("second answer"), "{out}");

    let mut context = cli(&fake, &data);
    context.args(["chat", "--workdir"]).arg(&work).arg("/context");
    let (code, out, err) = run(context).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("of a 4096-token window"), "the window is known now: {out}");
}
