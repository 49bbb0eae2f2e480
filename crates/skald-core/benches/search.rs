//! `search_files` against ripgrep on this repository's tree, in the same run: the whole tool
//! call (argument parsing, walk, search, output) next to a `rg` process doing the same search,
//! with its default threads and with one thread (our walk is sequential).
//!
//! Run: `cargo bench -p skald-core --bench search`. Figures go to `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use skald_core::tools::{ToolContext, ToolRegistry, names};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

/// Few enough matches that no cap cuts the output, so both sides do the whole walk and search.
const PATTERN: &str = "ToolError::Cancelled";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn rg(root: &Path, threads: Option<&str>) -> usize {
    let mut cmd = Command::new("rg");
    cmd.current_dir(root).args(["--no-config", "-n", "--no-heading", "-e", PATTERN, "."]);
    if let Some(j) = threads {
        cmd.args(["-j", j]);
    }
    let out = cmd.output().expect("rg is needed for this benchmark (apt install ripgrep)");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

fn bench(c: &mut Criterion) {
    let root = repo_root();
    let rt = Runtime::new().unwrap();
    let tool = ToolRegistry::builtin().get(names::SEARCH_FILES).unwrap();
    let ctx = ToolContext::new(&root, CancellationToken::new());
    let args = json!({"pattern": PATTERN, "case": "sensitive", "max_matches": 1000});
    let ours = rt.block_on(tool.run(&args, &ctx)).unwrap().text;
    let lines = ours.lines().filter(|l| l.contains(PATTERN)).count();
    assert_eq!(lines, rg(&root, None), "both find the same lines: {ours}");
    assert!(!ours.contains("more results"), "{ours}");

    let mut group = c.benchmark_group("search_repo");
    group.bench_function("search_files", |b| {
        b.iter(|| rt.block_on(tool.run(&args, &ctx)).unwrap());
    });
    group.bench_function("rg", |b| b.iter(|| rg(&root, None)));
    group.bench_function("rg -j1", |b| b.iter(|| rg(&root, Some("1"))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
