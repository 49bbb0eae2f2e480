//! `search_files` finds what ripgrep finds, on this repository's own tree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use tokio_util::sync::CancellationToken;

use super::grep::{Case, GrepRequest, grep};
use super::walk::Scope;
use crate::tools::ReadFilter;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// ripgrep, when it is installed; `scripts/test.sh` installs it and sets `SKALD_REQUIRE_RG`, so
/// the suite fails rather than skips there.
fn rg() -> Option<&'static str> {
    let found = Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("SKALD_REQUIRE_RG").is_some() {
        panic!("SKALD_REQUIRE_RG is set but `rg` is not on PATH");
    }
    if !found {
        eprintln!("skipped: ripgrep (`rg`) is not installed");
    }
    found.then_some("rg")
}

/// `(path, line)` of every match ripgrep reports under `root`.
fn rg_matches(rg: &str, root: &Path, flags: &[&str], pattern: &str) -> BTreeSet<(String, u64)> {
    let out = Command::new(rg)
        .current_dir(root)
        .args(["--no-config", "--line-number", "--no-heading", "--with-filename", "--color=never"])
        .args(flags)
        .args(["-e", pattern, "."])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "rg failed: {out:?}");
    parse(&String::from_utf8_lossy(&out.stdout), |p| p.strip_prefix("./").unwrap_or(p))
}

fn parse(text: &str, fix: impl Fn(&str) -> &str) -> BTreeSet<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (path, line) = (parts.next()?, parts.next()?.parse().ok()?);
            parts.next()?;
            Some((fix(path).to_string(), line))
        })
        .collect()
}

fn ours(root: &Path, req: &GrepRequest) -> BTreeSet<(String, u64)> {
    let scope = Scope::resolve(root, None).unwrap();
    let text = grep(&scope, req, &ReadFilter::everything(), &CancellationToken::new()).unwrap();
    assert!(!text.contains("more results"), "a cap was reached: {text}");
    parse(&text, |p| p)
}

fn request(pattern: &str, literal: bool, case: Case) -> GrepRequest {
    GrepRequest {
        pattern: pattern.to_string(),
        literal,
        case,
        glob: None,
        before: 0,
        after: 0,
        max_matches: usize::MAX,
        max_bytes: usize::MAX,
    }
}

#[test]
fn five_patterns_match_the_same_lines_as_ripgrep() {
    let Some(rg) = rg() else { return };
    let root = repo_root();
    let cases: [(&str, &[&str], GrepRequest); 5] = [
        (
            "fn resolve_path",
            &["--case-sensitive"],
            request("fn resolve_path", false, Case::Sensitive),
        ),
        (
            r"\bimpl\s+Tool\s+for\b",
            &["--case-sensitive"],
            request(r"\bimpl\s+Tool\s+for\b", false, Case::Sensitive),
        ),
        (
            "unwrap_or_else(|_|",
            &["--fixed-strings", "--case-sensitive"],
            request("unwrap_or_else(|_|", true, Case::Sensitive),
        ),
        ("approval", &["--ignore-case"], request("approval", false, Case::Insensitive)),
        ("Sqlite", &["--smart-case"], request("Sqlite", false, Case::Smart)),
    ];
    for (pattern, flags, req) in cases {
        let expected = rg_matches(rg, &root, flags, pattern);
        assert!(!expected.is_empty(), "{pattern}: rg found nothing, the pattern tests nothing");
        let found = ours(&root, &req);
        let missing: Vec<_> = expected.difference(&found).take(5).collect();
        let extra: Vec<_> = found.difference(&expected).take(5).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{pattern}: {} lines by rg, {} by search_files; missing {missing:?}, extra {extra:?}",
            expected.len(),
            found.len()
        );
    }
}

#[test]
fn a_glob_narrows_like_ripgreps() {
    let Some(rg) = rg() else { return };
    let root = repo_root();
    let expected = rg_matches(rg, &root, &["--case-sensitive", "--glob", "*.toml"], "workspace");
    let mut req = request("workspace", false, Case::Sensitive);
    req.glob = Some("*.toml".into());
    assert!(!expected.is_empty());
    assert_eq!(ours(&root, &req), expected);
}
