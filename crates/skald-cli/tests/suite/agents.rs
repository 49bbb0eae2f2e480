use super::{skald, stderr, stdout};

#[test]
fn agents_list_shows_built_ins_user_agents_and_a_broken_one_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scout = d.join("agents/scout");
    std::fs::create_dir_all(&scout).unwrap();
    std::fs::write(
        scout.join("meta.json"),
        r#"{"name": "Scout", "description": "looks around", "type": "task", "strength": "high"}"#,
    )
    .unwrap();
    std::fs::write(scout.join("AGENT.md"), "Look.").unwrap();
    let broken = d.join("agents/broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("meta.json"),
        r#"{"name": "B", "description": "b", "type": "chat"}"#,
    )
    .unwrap();

    let out = skald(&["--data-dir", d.to_str().unwrap(), "agents", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("ID"), "{text}");
    let row = |id: &str| *lines.iter().find(|l| l.starts_with(&format!("{id} "))).unwrap();
    assert!(row("scout").contains("task   user      auto, ≥ high"), "{text}");
    assert!(row("main").contains("chat   built-in  auto"), "{text}");
    assert!(row("generalist").contains("task   built-in"), "{text}");
    assert!(row("tic").contains("system built-in"), "{text}");
    let missing = broken.join("AGENT.md").display().to_string();
    assert!(text.contains(&format!("error: agent `broken`: {missing}: missing")), "{text}");

    let json = skald(&["--data-dir", d.to_str().unwrap(), "--json", "agents", "list"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let ids: Vec<&str> = v.as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["broken", "generalist", "main", "scout", "tic"]);
}

#[test]
fn chat_refuses_an_unknown_agent_before_creating_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = skald(&["--data-dir", d, "chat", "--agent", "nobody", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("agent `nobody` not found"), "{}", stderr(&out));
    let list = skald(&["--data-dir", d, "--json", "sessions", "list"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(v["total"], 0);
}
