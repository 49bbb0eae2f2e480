//! The `skald-fake-llm` binary: listening line, script file, models flag.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// Kills the child even when an assertion fails.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary with `args` (stdout and stderr piped); returns it and the base URL from
/// its listening line.
async fn start(args: &[&str]) -> (KillOnDrop, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_skald-fake-llm"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let stdout = child.0.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let base =
        line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("{line:?}")).to_owned();
    (child, base)
}

#[tokio::test]
async fn binary_prints_its_listening_line_and_serves_the_script() {
    let dir = std::env::temp_dir().join(format!("skald-fake-llm-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    std::fs::write(
        &script,
        r#"{"replies":[{"type":"text","content":"scripted hello"}],
            "by_model":{"beta":[{"type":"text","content":"beta only"}]}}"#,
    )
    .unwrap();

    let args = ["--script", script.to_str().unwrap(), "--models", "alpha,beta"];
    let (_child, base) = start(&[&args[..], &["--when-empty", "error"]].concat()).await;
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"), "{base}");

    let client = reqwest::Client::new();
    let models: Value =
        client.get(format!("{base}/models")).send().await.unwrap().json().await.unwrap();
    let ids: Vec<&str> =
        models["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["alpha", "beta"]);

    let chat = |model: &str| {
        client
            .post(format!("{base}/chat/completions"))
            .json(&json!({ "model": model, "messages": [{ "role": "user", "content": "hi" }] }))
            .send()
    };
    let beta: Value = chat("beta").await.unwrap().json().await.unwrap();
    assert_eq!(beta["choices"][0]["message"]["content"], "beta only");
    let alpha: Value = chat("alpha").await.unwrap().json().await.unwrap();
    assert_eq!(alpha["choices"][0]["message"]["content"], "scripted hello");
    let empty = chat("alpha").await.unwrap();
    assert_eq!(empty.status().as_u16(), 500, "--when-empty error");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn binary_rejects_a_broken_script() {
    let dir = std::env::temp_dir().join(format!("skald-fake-llm-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("bad.json");
    std::fs::write(&script, r#"[{"type":"nonsense"}]"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skald-fake-llm"))
        .args(["--script", script.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no listening line for a broken script");
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid reply script"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn binary_answers_unscripted_requests_with_an_error_and_reports_them_on_exit() {
    let (mut child, base) = start(&[]).await;
    let resp = reqwest::Client::new()
        .post(format!("{base}/chat/completions"))
        .json(&json!({ "model": "fake-model", "messages": [{ "role": "user", "content": "unasked" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 500, "no echo unless asked for");

    let interrupted =
        Command::new("kill").args(["-INT", &child.0.id().to_string()]).status().unwrap();
    assert!(interrupted.success());
    let mut stderr = child.0.stderr.take().unwrap();
    let report = tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        text
    })
    .await
    .unwrap();
    assert!(report.contains("1 request with no scripted reply queued"), "{report}");
    assert!(report.contains("unasked"), "{report}");
    assert!(child.0.wait().unwrap().success(), "a report is not a crash");
}
