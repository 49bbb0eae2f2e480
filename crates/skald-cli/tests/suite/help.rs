use super::{skald, stdout};

#[test]
fn every_command_has_help_and_only_existing_commands_are_listed() {
    for args in [
        vec!["--help"],
        vec!["sessions", "--help"],
        vec!["sessions", "list", "--help"],
        vec!["sessions", "show", "--help"],
        vec!["chat", "--help"],
        vec!["stop", "--help"],
        vec!["resume", "--help"],
        vec!["inbox", "--help"],
        vec!["approve", "--help"],
        vec!["deny", "--help"],
        vec!["answer", "--help"],
        vec!["bypass", "--help"],
        vec!["bypass", "list", "--help"],
        vec!["bypass", "revoke", "--help"],
        vec!["serve", "--help"],
        vec!["api", "--help"],
        vec!["agents", "--help"],
        vec!["agents", "list", "--help"],
        vec!["tasks", "--help"],
        vec!["tasks", "list", "--help"],
        vec!["tasks", "continue", "--help"],
        vec!["jobs", "--help"],
        vec!["jobs", "list", "--help"],
        vec!["jobs", "add", "--help"],
        vec!["jobs", "edit", "--help"],
        vec!["jobs", "rm", "--help"],
        vec!["jobs", "enable", "--help"],
        vec!["jobs", "disable", "--help"],
        vec!["jobs", "run", "--help"],
        vec!["jobs", "runs", "--help"],
        vec!["jobs", "kill", "--help"],
        vec!["jobs", "preview", "--help"],
        vec!["tic", "--help"],
        vec!["tic", "run", "--help"],
        vec!["tic", "list", "--help"],
        vec!["mcp", "--help"],
        vec!["mcp", "list", "--help"],
        vec!["mcp", "tools", "--help"],
    ] {
        let out = skald(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(stdout(&out).contains("Usage: skald"), "{args:?}: {}", stdout(&out));
    }
    let top = stdout(&skald(&["--help"]));
    let commands = [
        "sessions", "chat", "stop", "resume", "inbox", "approve", "deny", "answer", "bypass",
        "serve", "api", "agents", "tasks", "jobs", "tic", "mcp",
    ];
    for cmd in commands {
        assert!(
            top.lines().any(|l| l.trim_start().starts_with(&format!("{cmd} "))),
            "{cmd}: {top}"
        );
    }
}
