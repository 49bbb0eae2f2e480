//! `skald sessions list --search` after real turns: full-text matches with their best snippet,
//! title matches kept.

use serde_json::json;
use skald_testkit::{FakeLlm, Reply};

use super::chat::{cli, dirs, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_search_finds_words_and_paths_and_marks_the_best_snippet() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    std::fs::write(work.join("ledger.csv"), "a,b\n").unwrap();
    fake.push(Reply::tool_call("read_file", &json!({"path": "ledger.csv"}).to_string()));
    fake.push(Reply::text("The ledger balances: every quarterly figure adds up."));
    let mut chat = cli(&fake, &data);
    chat.args(["chat", "--workdir"]).arg(&work).arg("check the ledger");
    let (code, stdout, stderr) = run(chat).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    fake.push(Reply::text("Unrelated answer."));
    let mut chat = cli(&fake, &data);
    chat.args(["chat", "--source", "other", "--workdir"]).arg(&work).arg("hello there");
    let (code, _, stderr) = run(chat).await;
    assert_eq!(code, 0, "{stderr}");

    let mut list = cli(&fake, &data);
    list.args(["sessions", "list", "--search", "quarterly"]);
    let (code, stdout, stderr) = run(list).await;
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "header, the session, its best match, the footer: {stdout}");
    assert!(lines[1].trim_start().starts_with("1 "), "{stdout}");
    assert!(
        lines[2].contains("(assistant): The ledger balances: every «quarterly» figure adds up."),
        "{stdout}"
    );
    assert!(lines[3].contains("1 sessions"), "{stdout}");

    // A path fragment finds the call; JSON carries the hit as data.
    let mut list = cli(&fake, &data);
    list.args(["--json", "sessions", "list", "--search", "dger.cs"]);
    let (code, stdout, stderr) = run(list).await;
    assert_eq!(code, 0, "{stderr}");
    let page: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(page["total"], 1, "{page:#}");
    let hit = &page["items"][0]["best_hit"];
    assert_eq!(
        (hit["at"]["kind"].as_str(), hit["tool_name"].as_str()),
        (Some("tool"), Some("read_file"))
    );
    let marked: Vec<&str> = hit["snippet"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["hit"] == true)
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(marked, vec!["dger.cs"]);

    // The ranked search across sessions is the table's operation, reachable as `skald api`.
    let mut api = cli(&fake, &data);
    api.args(["api", "search", r#"{"query":{"text":"quarterl","limit":5}}"#]);
    let (code, stdout, stderr) = run(api).await;
    assert_eq!(code, 0, "{stderr}");
    let found: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(found["hits"].as_array().map(Vec::len), Some(1), "{found:#}");
    assert_eq!(found["hits"][0]["at"]["kind"], "assistant");

    // Hostile text is plain text: no error, no match.
    let mut list = cli(&fake, &data);
    list.args(["sessions", "list", "--search", "NEAR(\"x* :col"]);
    let (code, stdout, stderr) = run(list).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("No sessions"), "{stdout}");
}
