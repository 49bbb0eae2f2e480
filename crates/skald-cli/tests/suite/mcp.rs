//! `skald mcp list` and `skald mcp tools`: configured servers, their states and errors, and a
//! real server's tools (server-everything from npm, #[ignore]d like every test that needs it).

use super::{skald, stderr, stdout};

fn data_dir(servers: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yml"), format!("mcp:\n  servers:\n{servers}")).unwrap();
    dir
}

const BROKEN_AND_OFF: &str = "    - name: broken\n      command: /nonexistent/mcp-server\n      \
                              description: never starts\n    - name: remote\n      url: \
                              http://127.0.0.1:9/mcp\n      enabled: false\n";

#[test]
fn mcp_list_shows_each_server_its_state_and_why_it_failed() {
    let dir = data_dir(BROKEN_AND_OFF);
    let d = dir.path().to_str().unwrap();
    let out = skald(&["--data-dir", d, "mcp", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("broken               not started      -  stdio: /nonexistent/mcp-server"),
        "{text}"
    );
    assert!(text.contains("    never starts"), "{text}");
    assert!(
        text.contains("remote               disabled         -  http: http://127.0.0.1:9/mcp"),
        "{text}"
    );

    let out = skald(&["--data-dir", d, "mcp", "list", "--start"]);
    let text = stdout(&out);
    assert!(text.contains("broken               failed"), "{text}");
    assert!(text.contains("error: cannot run `/nonexistent/mcp-server`"), "{text}");

    let out = skald(&["--data-dir", d, "mcp", "tools", "broken"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("broken could not be started: cannot run"), "{}", stdout(&out));
    assert!(stdout(&out).contains("logs/mcp/broken.log"), "{}", stdout(&out));

    let out = skald(&["--data-dir", d, "mcp", "tools", "ghost"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("no MCP server named `ghost` in mcp.servers (configured: broken, remote)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_server_entry_is_a_config_error_naming_it() {
    let dir = data_dir("    - name: a__b\n      command: x\n");
    let out = skald(&["--data-dir", dir.path().to_str().unwrap(), "mcp", "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("config.yml:3:1: mcp.servers: `a__b` contains `__`"), "{err}");
    let dir = data_dir("    - name: both\n      command: x\n      url: http://h/mcp\n");
    let out = skald(&["--data-dir", dir.path().to_str().unwrap(), "mcp", "list"]);
    assert!(
        stderr(&out).contains("give either `command` (a local server) or `url`"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs mcp-server-everything (scripts/mcp-peers/install.sh)"]
fn mcp_tools_starts_the_server_and_says_which_tools_need_approval() {
    let bin = std::env::var("SKALD_MCP_EVERYTHING").expect("SKALD_MCP_EVERYTHING");
    let dir = data_dir(&format!("    - name: everything\n      command: {bin}\n"));
    let out = skald(&["--data-dir", dir.path().to_str().unwrap(), "mcp", "tools", "everything"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name}: {text}"))
    };
    assert!(row("mcp__everything__echo").contains("read-only  Echoes back"), "{text}");
    assert!(row("mcp__everything__toggle-simulated-logging").contains("approval"), "{text}");
}
