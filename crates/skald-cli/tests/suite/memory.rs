//! `skald memory` as processes: an agent's memory_write (from `skald chat`, let through by the
//! seeded rule) listed, shown and in the history with its diff — terminal escapes it wrote shown
//! escaped, never raw — then undone, and undone again refused.

use skald_testkit::{FakeLlm, Reply, ScriptedToolCall};

use super::chat::{cli, dirs, run};

async fn skald(fake: &FakeLlm, data: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = cli(fake, data);
    cmd.args(args);
    run(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_memory_write_is_listed_shown_escaped_and_undone() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    let hostile = "Cat: Miso\u{1b}]0;pwned\u{7}\u{1b}[2J\n";
    let args = serde_json::json!({"path": "notes.md", "content": hostile}).to_string();
    fake.push(Reply::tool_calls(vec![ScriptedToolCall::new("memory_write", &args)]));
    fake.push(Reply::text("Noted."));
    let mut chat = cli(&fake, &data);
    chat.current_dir(&work).args(["chat", "remember my cat"]);
    let (code, _, err) = run(chat).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(data.join("memory/notes.md")).unwrap(), hostile);

    let (code, out, err) = skald(&fake, &data, &["memory", "list"]).await;
    assert_eq!((code, out.as_str()), (0, "      24  notes.md\n"), "{err}");
    let (code, out, _) = skald(&fake, &data, &["memory", "show", "notes.md"]).await;
    assert_eq!(code, 0);
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "raw escapes reached the terminal");
    assert_eq!(out, "Cat: Miso\\e]0;pwned\\x07\\e[2J\n");

    let (code, out, _) = skald(&fake, &data, &["memory", "history"]).await;
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("#1 ") && first.ends_with(" notes.md by agent main (session 1)"),
        "{out}"
    );
    assert!(out.contains("+Cat: Miso\\e]0;pwned"), "{out}");
    assert!(!out.contains('\u{1b}'), "raw escapes in the history");

    let (code, out, err) = skald(&fake, &data, &["memory", "undo", "1"]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "undid write 1: notes.md deleted (that write created it)\n");
    assert!(!data.join("memory/notes.md").exists());
    let (code, _, err) = skald(&fake, &data, &["memory", "undo", "1"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("already undone"), "{err}");
    let (code, _, err) = skald(&fake, &data, &["memory", "show", "../config.yml"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("`..` is not accepted"), "{err}");
}
