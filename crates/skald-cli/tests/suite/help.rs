use super::{skald, stdout};

#[test]
fn every_command_has_help_and_only_existing_commands_are_listed() {
    for args in [
        vec!["--help"],
        vec!["sessions", "--help"],
        vec!["sessions", "list", "--help"],
        vec!["sessions", "show", "--help"],
    ] {
        let out = skald(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(stdout(&out).contains("Usage: skald"), "{args:?}: {}", stdout(&out));
    }
    let top = stdout(&skald(&["--help"]));
    assert!(top.contains("sessions"));
    for future in ["chat", "serve", "inbox", "approve", "jobs", "mcp", "resume", "tic"] {
        assert!(
            !top.lines().any(|l| l.trim_start().starts_with(&format!("{future} "))),
            "`{future}` is listed before it exists:\n{top}"
        );
    }
}
