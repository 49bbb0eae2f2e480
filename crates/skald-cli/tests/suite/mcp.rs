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
    // What the log says last is printed under it.
    assert!(stdout(&out).contains("[lifecycle] start failed: cannot run"), "{}", stdout(&out));

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
    let dir = data_dir("    - name: slow\n      command: x\n      timeout_secs: 0\n");
    let out = skald(&["--data-dir", dir.path().to_str().unwrap(), "mcp", "list"]);
    let err = stderr(&out);
    assert!(
        err.contains("config.yml:5:1: mcp.servers[slow].timeout_secs: from 1 to 3600 seconds"),
        "{err}"
    );
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
    // Trusted: its read-only hints count (an untrusted server's tools all need approval).
    let dir =
        data_dir(&format!("    - name: everything\n      command: {bin}\n      trusted: true\n"));
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

#[test]
fn servers_are_added_disabled_enabled_and_removed_in_config_yml_keeping_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let file = dir.path().join("config.yml");
    std::fs::write(&file, "# my settings\nllm:\n  max_tool_rounds: 9 # nine\n").unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--data-dir", d, "mcp"];
        all.extend_from_slice(args);
        skald(&all)
    };
    let out = run(&[
        "add",
        "notes",
        "--description",
        "my notes",
        "--env",
        "T=${TOKEN}",
        "--",
        "npx",
        "-y",
        "srv",
        "/n",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Added the MCP server notes"), "{}", stdout(&out));
    let out = run(&[
        "add",
        "tracker",
        "--url",
        "https://h.example/mcp",
        "--api-key-env",
        "TK",
        "--trusted",
        "--keep-connected",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(run(&["disable", "tracker"]).status.code(), Some(0));
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        text,
        "# my settings\nllm:\n  max_tool_rounds: 9 # nine\nmcp:\n  servers:\n    - name: notes\n      \
         description: my notes\n      command: npx\n      args:\n      - -y\n      - srv\n      - /n\n      \
         env:\n        T: ${TOKEN}\n    - name: tracker\n      url: https://h.example/mcp\n      \
         api_key_env: TK\n      trusted: true\n      keep_connected: true\n      enabled: false\n"
    );
    let listed = stdout(&run(&["list"]));
    assert!(listed.contains("tracker              disabled"), "{listed}");

    let taken = run(&["add", "notes", "--", "x"]);
    assert_eq!(taken.status.code(), Some(1));
    assert!(
        stderr(&taken).contains("an MCP server named `notes` exists already"),
        "{}",
        stderr(&taken)
    );
    let bad = run(&["add", "two words", "--", "x"]);
    assert!(stderr(&bad).contains("`two words` contains ` `"), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("config.yml: mcp.servers:"),
        "no line of a file never written: {}",
        stderr(&bad)
    );
    let neither = run(&["add", "empty"]);
    assert!(stderr(&neither).contains("give either `command`"), "{}", stderr(&neither));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "a refused edit writes nothing");

    assert_eq!(run(&["enable", "tracker"]).status.code(), Some(0));
    assert_eq!(run(&["remove", "notes"]).status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# my settings\nllm:\n  max_tool_rounds: 9 # nine\nmcp:\n  servers:\n    - name: tracker\n      \
         url: https://h.example/mcp\n      api_key_env: TK\n      trusted: true\n      keep_connected: true\n      \
         enabled: true\n"
    );
    let gone = run(&["remove", "ghost"]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(stderr(&gone).contains("no MCP server named `ghost`"), "{}", stderr(&gone));
}

#[test]
fn mcp_list_without_servers_names_the_command_that_adds_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = skald(&["--data-dir", dir.path().to_str().unwrap(), "mcp", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("skald mcp add NAME -- COMMAND"), "{text}");
    assert!(text.contains("Settings"), "{text}");
}

/// `scripts/mcp-peers/oauth-server.mjs` (an MCP server behind OAuth), killed when dropped.
struct OAuthPeer {
    child: std::process::Child,
    base: String,
}

impl Drop for OAuthPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn oauth_peer() -> OAuthPeer {
    use std::io::BufRead as _;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/mcp-peers/oauth-server.mjs");
    let mut child = std::process::Command::new("node")
        .arg(script)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs oauth-server.mjs");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let base = line.trim().strip_prefix("listening ").expect("listening <url>").to_string();
    OAuthPeer { child, base }
}

/// Every file under `dir`, read.
fn files_text(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&files_text(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()));
        }
    }
    text
}

#[test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
fn mcp_login_prints_the_page_waits_for_the_browser_and_starts_the_server() {
    use std::io::BufRead as _;
    let peer = oauth_peer();
    let dir = data_dir(&format!("    - name: remote\n      url: {}/mcp\n", peer.base));
    let d = dir.path().to_str().unwrap();
    let out = skald(&["--data-dir", d, "mcp", "list", "--start"]);
    let text = stdout(&out);
    assert!(text.contains("remote               needs auth"), "{text}");
    assert!(text.contains("authorize Skald (`skald mcp login remote`"), "{text}");

    let mut login = std::process::Command::new(env!("CARGO_BIN_EXE_skald"))
        .args(["--data-dir", d, "mcp", "login", "remote"])
        .env_remove("SKALD_DATA_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(login.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let url = loop {
        let line = lines.next().expect("the page is printed").unwrap();
        printed.push(line.clone());
        if let Some(url) = line.trim().strip_prefix("http") {
            break format!("http{url}");
        }
    };
    assert!(printed[0].contains("Open this page in a browser to authorize Skald with remote"));
    assert!(
        url.contains("code_challenge_method=S256")
            && url.contains("redirect_uri=http%3A%2F%2F127.0.0.1")
    );
    // The person consents in the browser, which follows the redirect back to Skald.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let page = runtime.block_on(async { reqwest::get(&url).await.unwrap().text().await.unwrap() });
    assert!(page.contains("Skald is authorized"), "{page}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = login.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert!(rest.iter().any(|l| l == "Authorized: remote is ready with 1 tools."), "{rest:?}");
    // Tokens go to the keychain, never to config.yml, the database or a log.
    let written = files_text(dir.path());
    assert!(!written.contains("refresh_token") && !written.contains("access_token"));
    // Leave no entry behind in the keychain of the machine running the test. Without a keychain
    // (a headless Linux without Secret Service) the login kept the tokens in its memory only,
    // and logging out says the keychain cannot be reached.
    let out = skald(&["--data-dir", d, "mcp", "logout", "remote"]);
    if out.status.code() == Some(0) {
        assert!(stdout(&out).contains("Forgot the authorization of remote"), "{}", stdout(&out));
    } else {
        assert!(
            stderr(&out).contains("cannot remove its tokens from the keychain"),
            "{}",
            stderr(&out)
        );
    }
}
