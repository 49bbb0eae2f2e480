use super::{skald, stderr, stdout};

#[test]
fn sessions_list_on_a_fresh_dir_prints_the_empty_page() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("fresh");
    let out = skald(&["--data-dir", d.to_str().unwrap(), "--json", "sessions", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"items\":[],\"total\":0,\"page\":1,\"per_page\":20}\n");
}

#[test]
fn sessions_list_accepts_filters_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = skald(&[
        "--data-dir",
        d,
        "--json",
        "sessions",
        "list",
        "--source",
        "tic",
        "--page",
        "2",
        "--per-page",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!((v["page"].as_u64(), v["per_page"].as_u64()), (Some(2), Some(5)));
    let text = skald(&["--data-dir", d, "sessions", "list"]);
    assert!(stdout(&text).contains("No sessions"), "{}", stdout(&text));
}

#[test]
fn a_malformed_config_is_one_line_with_file_and_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yml"), "llm:\n  max_tool_rounds: [\n").unwrap();
    let out = skald(&["--data-dir", dir.path().to_str().unwrap(), "sessions", "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let expected = format!("{}:", dir.path().join("config.yml").display());
    assert!(err.contains(&expected), "{err}");
    assert!(err.starts_with("skald: error: configuration error:"), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn json_errors_are_json_and_a_missing_session_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        skald(&["--data-dir", dir.path().to_str().unwrap(), "--json", "sessions", "show", "7"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(v["code"], "not_found");
    assert!(v["message"].as_str().unwrap().contains("session 7"));
}

#[test]
fn bad_usage_exits_2() {
    let out = skald(&["sessions", "list", "--page", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let out = skald(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn any_operation_runs_by_name_and_prints_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("data");
    let data = d.to_str().unwrap();
    let created = skald(&["--data-dir", data, "api", "new_session", r#"{"source":"notes"}"#]);
    assert_eq!(created.status.code(), Some(0), "{}", stderr(&created));
    let created: serde_json::Value = serde_json::from_str(&stdout(&created)).unwrap();
    let id = created["session_id"].as_i64().unwrap();
    let stopped =
        skald(&["--data-dir", data, "api", "stop_turn", &format!(r#"{{"session_id":{id}}}"#)]);
    assert_eq!(stdout(&stopped).trim(), r#"{"stopped":false}"#);

    let bad = skald(&["--data-dir", data, "--json", "api", "stop_turn", "{}"]);
    assert_eq!(bad.status.code(), Some(1));
    let err: serde_json::Value = serde_json::from_str(stderr(&bad).trim()).unwrap();
    assert_eq!(err["code"], "invalid_input");
    assert!(err["message"].as_str().unwrap().contains("session_id"), "{err}");

    let listed = stdout(&skald(&["api"]));
    assert!(listed.lines().any(|l| l.starts_with("stop_turn ")), "{listed}");
}

/// `sessions show` and `sessions list --search` print stored model text through the same
/// layer as `chat`: an escape sequence in an answer shows as text, a title's line feed as `\n`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_model_text_is_shown_as_text_by_sessions_show_and_list() {
    use super::chat::{cli, dirs, run};
    let fake = skald_testkit::FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    fake.push(skald_testkit::Reply::text("fine\u{1b}]52;c;ZXZpbA==\u{7}\r\u{1b}[2Kall good"));
    let mut chat = cli(&fake, &data);
    chat.current_dir(&work).args(["chat", "hello"]);
    assert_eq!(run(chat).await.0, 0);
    let mut rename = cli(&fake, &data);
    rename.args(["api", "rename_session", r#"{"session_id": 1, "title": "a\nb \u202e"}"#]);
    let (code, _, err) = run(rename).await;
    assert_eq!(code, 0, "{err}");
    let mut show = cli(&fake, &data);
    show.args(["sessions", "show", "1"]);
    let (code, out, err) = run(show).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r"assistant: fine\e]52;c;ZXZpbA==\x07\r\e[2Kall good"), "{out}");
    let mut list = cli(&fake, &data);
    list.args(["sessions", "list", "--search", "good"]);
    let (code, out, err) = run(list).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r"a\nb \u{202e}"), "{out}");
    assert!(!out.chars().any(|c| c == '\u{1b}' || c == '\r' || c == '\u{202e}'), "{out:?}");
}

/// `skald api list_sessions` without params, or with part of the paging, uses the defaults a
/// person expects (first page, 20 a page) instead of refusing the call.
#[test]
fn api_list_sessions_fills_in_the_paging_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let paging = |args: &[&str]| {
        let out = skald(&[&["--data-dir", d, "api", "list_sessions"], args].concat());
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        (v["page"].as_u64(), v["per_page"].as_u64())
    };
    assert_eq!(paging(&[]), (Some(1), Some(20)));
    assert_eq!(paging(&["{}"]), (Some(1), Some(20)));
    assert_eq!(paging(&[r#"{"query":{"page":3}}"#]), (Some(3), Some(20)));
    assert_eq!(paging(&[r#"{"query":{"per_page":5,"source":"tic"}}"#]), (Some(1), Some(5)));
}
