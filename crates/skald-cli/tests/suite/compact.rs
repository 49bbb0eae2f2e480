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
