//! The built-in file and shell tools on real temp dirs and real processes.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skald_core::tools::paths::{is_within, resolve_path};
use skald_core::tools::{ToolCategory, ToolContext, ToolError, ToolOutput, ToolRegistry, names};
use skald_testkit::{HANG_GUARD, eventually};
use tokio_util::sync::CancellationToken;

fn workdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    (dir, canonical)
}

fn ctx(wd: &Path) -> ToolContext {
    ToolContext::new(wd, CancellationToken::new())
}

async fn call(name: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let tool = ToolRegistry::builtin().get(name).unwrap();
    tool.run(&args, ctx).await
}

async fn ok(name: &str, args: Value, ctx: &ToolContext) -> ToolOutput {
    match call(name, args.clone(), ctx).await {
        Ok(out) => out,
        Err(e) => panic!("{name} {args} failed: {e}"),
    }
}

async fn failed(name: &str, args: Value, ctx: &ToolContext) -> String {
    match call(name, args.clone(), ctx).await {
        Ok(out) => panic!("{name} {args} unexpectedly succeeded: {}", out.text),
        Err(ToolError::Cancelled) => panic!("{name} {args} was cancelled"),
        Err(e) => e.to_string(),
    }
}

/// `predict_write` must describe exactly what `run` then writes.
async fn predicted_then_run(name: &str, args: Value, ctx: &ToolContext, file: &Path) -> String {
    let tool = ToolRegistry::builtin().get(name).unwrap();
    let before = std::fs::read_to_string(file).ok();
    let (old, new) = tool.predict_write(&args, ctx).unwrap().unwrap();
    assert_eq!(old, before, "predicted old content");
    assert_eq!(std::fs::read_to_string(file).ok(), before, "predict_write must not write");
    let out = tool.run(&args, ctx).await.unwrap();
    assert_eq!(out.changed_path(), Some(file));
    let after = std::fs::read_to_string(file).unwrap();
    assert_eq!(after, new, "run wrote what predict_write showed");
    after
}

// ---------- paths ----------

#[test]
fn relative_paths_resolve_against_the_workdir_and_dotdot_is_removed() {
    let (_d, wd) = workdir();
    std::fs::create_dir(wd.join("a")).unwrap();
    assert_eq!(resolve_path(&wd, "a/../b").unwrap(), wd.join("b"));
    assert_eq!(resolve_path(&wd, "./new/dir/../f.txt").unwrap(), wd.join("new/f.txt"));
    assert_eq!(resolve_path(&wd, "/abs/x/../y").unwrap(), PathBuf::from("/abs/y"));
    assert!(matches!(resolve_path(&wd, ""), Err(ToolError::InvalidArguments(_))));
}

#[cfg(unix)]
#[test]
fn symlinks_are_resolved_before_any_check() {
    let (_d, wd) = workdir();
    let (_o, outside) = workdir();
    std::fs::write(outside.join("secret.txt"), "x").unwrap();
    std::os::unix::fs::symlink(&outside, wd.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("later.txt"), wd.join("dangling")).unwrap();

    let through = resolve_path(&wd, "link/secret.txt").unwrap();
    assert_eq!(through, outside.join("secret.txt"));
    assert!(!is_within(&through, &wd));
    // `..` applies after the link, as the kernel does.
    let parent = outside.parent().unwrap();
    assert_eq!(resolve_path(&wd, "link/../z").unwrap(), parent.join("z"));
    // A dangling link is followed to where a write would land.
    assert_eq!(resolve_path(&wd, "dangling").unwrap(), outside.join("later.txt"));
    // A non-existing tail under a link is appended lexically.
    assert_eq!(resolve_path(&wd, "link/n/m.txt").unwrap(), outside.join("n/m.txt"));
}

#[test]
fn is_within_compares_whole_components() {
    assert!(is_within(Path::new("/a/b"), Path::new("/a")));
    assert!(is_within(Path::new("/a"), Path::new("/a")));
    assert!(!is_within(Path::new("/a-b"), Path::new("/a")));
    assert!(!is_within(Path::new("/ab/c"), Path::new("/a")));
}

// ---------- read_file ----------

#[tokio::test]
async fn read_file_numbers_lines_and_honours_the_range() {
    let (_d, wd) = workdir();
    std::fs::write(wd.join("f.txt"), "one\ntwo\r\nthree\nfour").unwrap();
    let c = ctx(&wd);
    let all = ok(names::READ_FILE, json!({"path": "f.txt"}), &c).await.text;
    assert_eq!(all, "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n");
    let part =
        ok(names::READ_FILE, json!({"path": "f.txt", "start_line": 2, "end_line": 3}), &c).await;
    assert_eq!(part.text, "     2\ttwo\n     3\tthree\n");
    assert_eq!(part.changed_path(), None);
    let limited = ok(names::READ_FILE, json!({"path": "f.txt", "limit": 2}), &c).await.text;
    assert!(limited.starts_with("     1\tone\n     2\ttwo\n"), "{limited}");
    assert!(limited.contains("continue with start_line=3"), "{limited}");
}

#[tokio::test]
async fn read_file_errors_are_actionable() {
    let (_d, wd) = workdir();
    std::fs::write(wd.join("f.txt"), "a\nb\n").unwrap();
    let c = ctx(&wd);
    let e = failed(names::READ_FILE, json!({}), &c).await;
    assert_eq!(e, "invalid arguments: `path` is required (string)");
    let e = failed(names::READ_FILE, json!({"path": 3}), &c).await;
    assert!(e.contains("`path` must be a string"), "{e}");
    let e = failed(names::READ_FILE, json!({"path": "missing.txt"}), &c).await;
    assert!(e.contains("missing.txt does not exist"), "{e}");
    let e = failed(names::READ_FILE, json!({"path": "."}), &c).await;
    assert!(e.contains("is a directory; use list_dir"), "{e}");
    let e = failed(names::READ_FILE, json!({"path": "f.txt", "start_line": 9}), &c).await;
    assert!(e.contains("start_line 9 is past the end") && e.contains("(2 lines)"), "{e}");
    let e = failed(names::READ_FILE, json!({"path": "f.txt", "limit": 5000}), &c).await;
    assert!(e.contains("`limit` must be between 1 and 2000"), "{e}");
    let e = failed(names::READ_FILE, json!({"path": "f.txt", "start_line": 0}), &c).await;
    assert!(e.contains("`start_line` must be a positive integer"), "{e}");
}

#[tokio::test]
async fn read_file_refuses_binary_files() {
    let (_d, wd) = workdir();
    std::fs::write(wd.join("nul.bin"), b"abc\0def").unwrap();
    std::fs::write(wd.join("latin1.txt"), b"caf\xe9 au lait").unwrap();
    let c = ctx(&wd);
    let e = failed(names::READ_FILE, json!({"path": "nul.bin"}), &c).await;
    assert!(e.ends_with("nul.bin is a binary file (7 bytes); read_file only reads text"), "{e}");
    // One stray Latin-1 byte is text with a wrong byte, not a binary file.
    let shown = ok(names::READ_FILE, json!({"path": "latin1.txt"}), &c).await.text;
    assert!(shown.contains("caf\u{fffd} au lait"), "{shown}");
    assert!(shown.contains("not all valid UTF-8") && shown.contains("line 1"), "{shown}");
    // Mostly bytes that are not UTF-8: binary.
    std::fs::write(wd.join("noise.dat"), [0xffu8, 0xfe, 0x80, 0x81, 0x41, 0x90, 0x91]).unwrap();
    let e = failed(names::READ_FILE, json!({"path": "noise.dat"}), &c).await;
    assert!(e.contains("is a binary file (7 bytes)"), "{e}");
}

#[tokio::test]
async fn edit_tools_refuse_text_that_is_not_utf8_saying_where_and_what_to_do() {
    let (_d, wd) = workdir();
    std::fs::write(wd.join("latin1.txt"), b"first line\ncaf\xe9 au lait\n").unwrap();
    let c = ctx(&wd);
    let args = json!({"path": "latin1.txt", "old": "first", "new": "1st"});
    let e = failed(names::EDIT_FILE, args, &c).await;
    assert!(e.contains("is not valid UTF-8") && e.contains("line 2"), "{e}");
    assert!(e.contains("iconv"), "{e}");
    assert_eq!(std::fs::read(wd.join("latin1.txt")).unwrap(), b"first line\ncaf\xe9 au lait\n");
}

#[tokio::test]
async fn read_file_caps_huge_files_with_a_marker() {
    let (_d, wd) = workdir();
    let body: String = (1..=500).map(|i| format!("line {i}\n")).collect();
    std::fs::write(wd.join("big.txt"), &body).unwrap();
    let mut c = ctx(&wd);
    c.limits.max_read_bytes = 1000;
    let out = ok(names::READ_FILE, json!({"path": "big.txt"}), &c).await.text;
    let marker = out.lines().last().unwrap();
    assert!(
        marker
            .starts_with(&format!("[… truncated: file is {} bytes, showing lines 1-", body.len())),
        "{marker}"
    );
    assert!(marker.ends_with("; use start_line/end_line]"), "{marker}");
    assert!(out.len() < 1200, "output {} bytes", out.len());
    // The rest stays reachable by paging.
    let tail = ok(names::READ_FILE, json!({"path": "big.txt", "start_line": 499}), &c).await.text;
    assert_eq!(tail, "   499\tline 499\n   500\tline 500\n");
}

// ---------- list_dir ----------

#[tokio::test]
async fn list_dir_sorts_marks_dirs_and_skips_secrets() {
    let (_d, wd) = workdir();
    std::fs::create_dir_all(wd.join("src/inner")).unwrap();
    std::fs::create_dir_all(wd.join("secrets")).unwrap();
    std::fs::write(wd.join("secrets/key"), "k").unwrap();
    std::fs::write(wd.join("b.txt"), "12345").unwrap();
    std::fs::write(wd.join("a.txt"), "").unwrap();
    std::fs::write(wd.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(wd.join("src/inner/deep.rs"), "").unwrap();
    let c = ctx(&wd);

    let top = ok(names::LIST_DIR, json!({}), &c).await.text;
    let lines: Vec<&str> = top.lines().collect();
    assert_eq!(lines[0], format!("{}/", wd.display()));
    assert_eq!(&lines[1..], ["a.txt  (0 B)", "b.txt  (5 B)", "src/"]);

    let deep = ok(names::LIST_DIR, json!({"path": ".", "depth": 2}), &c).await.text;
    let lines: Vec<&str> = deep.lines().skip(1).collect();
    assert_eq!(
        lines,
        ["a.txt  (0 B)", "b.txt  (5 B)", "src/", "src/inner/", "src/main.rs  (13 B)"]
    );
    assert!(!deep.contains("secret") && !deep.contains("key"), "{deep}");

    let e = failed(names::LIST_DIR, json!({"path": "a.txt"}), &c).await;
    assert!(e.contains("is a file, not a directory"), "{e}");
    let e = failed(names::LIST_DIR, json!({"depth": 4}), &c).await;
    assert!(e.contains("`depth` must be between 1 and 3"), "{e}");
}

#[tokio::test]
async fn list_dir_caps_entries_with_a_marker() {
    let (_d, wd) = workdir();
    for i in 0..1005 {
        std::fs::write(wd.join(format!("f{i:04}")), "").unwrap();
    }
    let out = ok(names::LIST_DIR, json!({"path": wd.to_str().unwrap()}), &ctx(&wd)).await.text;
    assert_eq!(out.lines().count(), 1 + 1000 + 1);
    assert!(out.lines().last().unwrap().starts_with("[… truncated: showing the first 1000"));
}

// ---------- write tools ----------

#[tokio::test]
async fn write_file_creates_parents_and_reports_what_it_did() {
    let (_d, wd) = workdir();
    let c = ctx(&wd);
    let file = wd.join("new/dir/f.txt");
    let tool = ToolRegistry::builtin().get(names::WRITE_FILE).unwrap();
    let args = json!({"path": "new/dir/f.txt", "content": "hello\n"});
    assert_eq!(tool.target_path(&args, &wd), Some(file.clone()));
    let (old, new) = tool.predict_write(&args, &c).unwrap().unwrap();
    assert_eq!((old, new.as_str()), (None, "hello\n"));
    assert!(!file.exists(), "predict_write wrote");
    let out = tool.run(&args, &c).await.unwrap();
    assert!(
        out.text.starts_with("Created ") && out.text.contains("6 bytes written"),
        "{}",
        out.text
    );
    assert_eq!(out.changed_path(), Some(file.as_path()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");

    let again =
        ok(names::WRITE_FILE, json!({"path": file.to_str().unwrap(), "content": "x"}), &c).await;
    assert!(again.text.starts_with("Overwrote ") && again.text.contains("it had 6 bytes"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    let leftovers: Vec<_> = std::fs::read_dir(wd.join("new/dir")).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temp files left behind");

    let e = failed(names::WRITE_FILE, json!({"path": "new"}), &c).await;
    assert_eq!(e, "invalid arguments: `content` is required (string)");
    let e = failed(names::WRITE_FILE, json!({"path": "new", "content": ""}), &c).await;
    assert!(e.contains("is a directory"), "{e}");
}

#[cfg(unix)]
#[tokio::test]
async fn write_tools_keep_permissions_and_write_through_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, wd) = workdir();
    let script = wd.join("run.sh");
    std::fs::write(&script, "echo one\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink(&script, wd.join("alias.sh")).unwrap();
    let c = ctx(&wd);
    let out =
        ok(names::EDIT_FILE, json!({"path": "alias.sh", "old": "one", "new": "two"}), &c).await;
    assert_eq!(out.changed_path(), Some(script.as_path()));
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo two\n");
    assert!(std::fs::symlink_metadata(wd.join("alias.sh")).unwrap().file_type().is_symlink());
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
}

#[tokio::test]
async fn edit_file_replaces_a_unique_snippet() {
    let (_d, wd) = workdir();
    let file = wd.join("m.rs");
    std::fs::write(&file, "fn a() {}\nfn b() {}\n").unwrap();
    let c = ctx(&wd);
    let args = json!({"path": "m.rs", "old": "fn b() {}", "new": "fn b() -> u8 { 1 }"});
    let after = predicted_then_run(names::EDIT_FILE, args, &c, &file).await;
    assert_eq!(after, "fn a() {}\nfn b() -> u8 { 1 }\n");
}

#[tokio::test]
async fn edit_file_reports_zero_and_several_matches() {
    let (_d, wd) = workdir();
    let file = wd.join("m.txt");
    std::fs::write(&file, "x = 1\nx = 1\ny = 2\n").unwrap();
    let c = ctx(&wd);
    let e =
        failed(names::EDIT_FILE, json!({"path": "m.txt", "old": "z = 3", "new": "z"}), &c).await;
    assert!(e.contains("`old` was not found in") && e.contains("m.txt"), "{e}");
    let e =
        failed(names::EDIT_FILE, json!({"path": "m.txt", "old": "x = 1", "new": "x"}), &c).await;
    assert!(e.contains("`old` occurs 2 times") && e.contains("replace_all"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = 1\nx = 1\ny = 2\n", "unchanged");
    let tool = ToolRegistry::builtin().get(names::EDIT_FILE).unwrap();
    let bad = json!({"path": "m.txt", "old": "x = 1", "new": "x"});
    assert!(matches!(tool.predict_write(&bad, &c), Some(Err(ToolError::Failed(_)))));

    let all = json!({"path": "m.txt", "old": "x = 1", "new": "x = 9", "replace_all": true});
    let out = ok(names::EDIT_FILE, all, &c).await;
    assert!(out.text.contains("replaced 2 occurrences"), "{}", out.text);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = 9\nx = 9\ny = 2\n");
    let e = failed(names::EDIT_FILE, json!({"path": "m.txt", "old": "", "new": "q"}), &c).await;
    assert!(e.starts_with("invalid arguments: `old` must not be empty"), "{e}");
    let e = failed(names::EDIT_FILE, json!({"path": "nope.txt", "old": "a", "new": "b"}), &c).await;
    assert!(e.contains("does not exist; use write_file"), "{e}");
}

#[tokio::test]
async fn edit_file_keeps_crlf_line_endings() {
    let (_d, wd) = workdir();
    let file = wd.join("win.txt");
    std::fs::write(&file, "alpha\r\nbeta\r\ngamma\r\n").unwrap();
    let c = ctx(&wd);
    let args = json!({"path": "win.txt", "old": "alpha\nbeta\n", "new": "alpha\nBETA\nextra\n"});
    let after = predicted_then_run(names::EDIT_FILE, args, &c, &file).await;
    assert_eq!(after, "alpha\r\nBETA\r\nextra\r\ngamma\r\n");
}

#[tokio::test]
async fn edit_tools_refuse_binary_files() {
    let (_d, wd) = workdir();
    std::fs::write(wd.join("b.bin"), b"\0\x01\x02").unwrap();
    let c = ctx(&wd);
    let e = failed(names::EDIT_FILE, json!({"path": "b.bin", "old": "a", "new": "b"}), &c).await;
    assert!(e.contains("b.bin is a binary file (3 bytes); edit_file only edits text"), "{e}");
    let args = json!({"path": "b.bin", "line": 1, "content": "x"});
    let e = failed(names::INSERT_AT_LINE, args, &c).await;
    assert!(e.contains("is a binary file"), "{e}");
}

#[tokio::test]
async fn insert_at_line_inserts_before_after_and_appends() {
    let (_d, wd) = workdir();
    let file = wd.join("l.txt");
    std::fs::write(&file, "a\nb\nc").unwrap();
    let c = ctx(&wd);
    let after = predicted_then_run(
        names::INSERT_AT_LINE,
        json!({"path": "l.txt", "line": 2, "content": "x"}),
        &c,
        &file,
    )
    .await;
    assert_eq!(after, "a\nx\nb\nc");
    let after = predicted_then_run(
        names::INSERT_AT_LINE,
        json!({"path": "l.txt", "line": 1, "content": "y\nz\n", "placement": "after"}),
        &c,
        &file,
    )
    .await;
    assert_eq!(after, "a\ny\nz\nx\nb\nc");
    // Appending after an unterminated last line keeps lines separate.
    let out = ok(
        names::INSERT_AT_LINE,
        json!({"path": "l.txt", "line": 6, "content": "end", "placement": "after"}),
        &c,
    )
    .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\ny\nz\nx\nb\nc\nend\n");
    assert!(out.text.contains("     7\tend"), "the result shows the change: {}", out.text);

    let e = failed(names::INSERT_AT_LINE, json!({"path": "l.txt", "line": 9, "content": "q"}), &c)
        .await;
    assert!(e.contains("line 9 is past the end") && e.contains("(7 lines)"), "{e}");
    let args = json!({"path": "l.txt", "line": 1, "content": "q", "placement": "middle"});
    let e = failed(names::INSERT_AT_LINE, args, &c).await;
    assert!(e.contains("`placement` must be \"before\" or \"after\""), "{e}");
    let e = failed(names::INSERT_AT_LINE, json!({"path": "l.txt", "content": "q"}), &c).await;
    assert_eq!(e, "invalid arguments: `line` is required (positive integer)");
}

#[tokio::test]
async fn replace_lines_replaces_and_deletes_ranges() {
    let (_d, wd) = workdir();
    let file = wd.join("r.txt");
    std::fs::write(&file, "1\n2\n3\n4\n5\n").unwrap();
    let c = ctx(&wd);
    let after = predicted_then_run(
        names::REPLACE_LINES,
        json!({"path": "r.txt", "from_line": 2, "to_line": 3, "new": "two\nthree\nthree-b"}),
        &c,
        &file,
    )
    .await;
    assert_eq!(after, "1\ntwo\nthree\nthree-b\n4\n5\n");
    let after = predicted_then_run(
        names::REPLACE_LINES,
        json!({"path": "r.txt", "from_line": 1, "to_line": 1, "new": ""}),
        &c,
        &file,
    )
    .await;
    assert_eq!(after, "two\nthree\nthree-b\n4\n5\n");
    let args = json!({"path": "r.txt", "from_line": 4, "to_line": 9, "new": "x"});
    let e = failed(names::REPLACE_LINES, args, &c).await;
    assert!(e.contains("`to_line` 9 is past the end") && e.contains("(5 lines)"), "{e}");
    let args = json!({"path": "r.txt", "from_line": 3, "to_line": 2, "new": "x"});
    let e = failed(names::REPLACE_LINES, args, &c).await;
    assert!(e.starts_with("invalid arguments: `to_line` (2) is before `from_line` (3)"), "{e}");
}

#[tokio::test]
async fn write_tools_do_not_start_once_cancelled() {
    let (_d, wd) = workdir();
    let c = ctx(&wd);
    c.cancel.cancel();
    let r = call(names::WRITE_FILE, json!({"path": "f.txt", "content": "x"}), &c).await;
    assert!(matches!(r, Err(ToolError::Cancelled)));
    assert!(!wd.join("f.txt").exists());
}

// ---------- execute_cmd ----------

/// Running, as opposed to gone or a zombie waiting to be reaped.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start().chars().next();
            !matches!(state, Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

async fn wait_for_pid(file: &Path) -> u32 {
    let pid = || std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse().ok());
    eventually(&format!("the command to write {}", file.display()), || pid().is_some()).await;
    pid().unwrap()
}

/// The commands below sleep 600 s, far longer than this waits: only a kill ends them in time.
async fn assert_gone(pid: u32) {
    eventually(&format!("process {pid} to be killed"), || !alive(pid)).await;
}

#[cfg(unix)]
#[tokio::test]
async fn execute_cmd_reports_exit_codes_and_both_streams() {
    let (_d, wd) = workdir();
    let c = ctx(&wd);
    let out =
        ok(names::EXECUTE_CMD, json!({"command": "echo hi; echo oops >&2; exit 3"}), &c).await;
    assert_eq!(out.text, "exit code 3\n--- stdout ---\nhi\n--- stderr ---\noops\n");
    let out = ok(names::EXECUTE_CMD, json!({"command": "true"}), &c).await;
    assert_eq!(out.text, "exit code 0\n(no output)\n");
    let e = failed(names::EXECUTE_CMD, json!({"command": " "}), &c).await;
    assert!(e.contains("`command` must not be empty"), "{e}");
    let e = failed(names::EXECUTE_CMD, json!({"command": "true", "timeout": 601}), &c).await;
    assert!(e.contains("`timeout` must be between 1 and 600 seconds"), "{e}");
}

#[cfg(unix)]
#[tokio::test]
async fn execute_cmd_runs_in_the_workdir_or_the_given_one() {
    let (_d, wd) = workdir();
    std::fs::create_dir(wd.join("sub")).unwrap();
    let c = ctx(&wd);
    let out = ok(names::EXECUTE_CMD, json!({"command": "pwd -P"}), &c).await;
    assert_eq!(out.text, format!("exit code 0\n--- stdout ---\n{}\n", wd.display()));
    let out = ok(names::EXECUTE_CMD, json!({"command": "pwd -P", "workdir": "sub"}), &c).await;
    assert!(out.text.ends_with(&format!("{}\n", wd.join("sub").display())), "{}", out.text);
    let e = failed(names::EXECUTE_CMD, json!({"command": "pwd", "workdir": "nope"}), &c).await;
    assert!(e.contains("does not exist or is not a directory"), "{e}");
}

#[cfg(unix)]
#[tokio::test]
async fn execute_cmd_caps_huge_output_with_a_marker() {
    let (_d, wd) = workdir();
    let mut c = ctx(&wd);
    c.limits.max_output_bytes = 1000;
    let command = "i=0; while [ $i -lt 5000 ]; do echo \"row $i\"; i=$((i+1)); done";
    let out = ok(names::EXECUTE_CMD, json!({"command": command}), &c).await.text;
    let total: usize = (0..5000).map(|i| format!("row {i}\n").len()).sum();
    assert!(
        out.contains(&format!(
            "[… output truncated: {total} bytes total, showing first 500 and last 500]"
        )),
        "{out}"
    );
    assert!(out.contains("row 0\n") && out.ends_with("row 4999\n"), "{out}");
    assert!(out.len() < 1200, "{} bytes", out.len());
}

#[cfg(unix)]
#[tokio::test]
async fn execute_cmd_times_out_and_kills_the_tree() {
    let (_d, wd) = workdir();
    let c = ctx(&wd);
    let args = json!({
        "command": "echo started; sh -c 'sleep 600 & echo $! > pid; wait'",
        "timeout": 1
    });
    let e = failed(names::EXECUTE_CMD, args, &c).await;
    assert!(e.starts_with("command timed out after 1s"), "{e}");
    assert!(e.contains("started"), "partial output is kept: {e}");
    let pid = wait_for_pid(&wd.join("pid")).await;
    assert_gone(pid).await;
}

#[cfg(unix)]
#[tokio::test]
async fn cancel_stops_a_sleeping_command_and_its_children() {
    for command in ["echo $$ > pid; exec sleep 600", "sh -c 'sleep 600 & echo $! > pid; wait'"] {
        let (_d, wd) = workdir();
        let c = ctx(&wd);
        let token = c.cancel.clone();
        let pidfile = wd.join("pid");
        // Cancel once the command surely runs (it wrote its pid).
        tokio::spawn(async move {
            wait_for_pid(&pidfile).await;
            token.cancel();
        });
        let r = tokio::time::timeout(
            HANG_GUARD,
            call(names::EXECUTE_CMD, json!({"command": command}), &c),
        )
        .await
        .expect("the cancel did not end the command");
        assert!(matches!(r, Err(ToolError::Cancelled)), "{command}: {:?}", r.map(|o| o.text));
        let pid = wait_for_pid(&wd.join("pid")).await;
        assert_gone(pid).await;
    }
}

#[cfg(unix)]
#[tokio::test]
async fn dropping_the_future_kills_the_command() {
    let (_d, wd) = workdir();
    let c = ctx(&wd);
    let tool = ToolRegistry::builtin().get(names::EXECUTE_CMD).unwrap();
    let args = json!({"command": "sh -c 'sleep 600 & echo $! > pid; wait'"});
    // Dropped once the command surely runs (it wrote its pid): leaving `select!` drops `run`.
    let pidfile = wd.join("pid");
    let pid = tokio::select! {
        r = tool.run(&args, &c) => panic!("the command ended by itself: {:?}", r.map(|o| o.text)),
        pid = wait_for_pid(&pidfile) => pid,
    };
    assert_gone(pid).await;
}

#[cfg(unix)]
#[tokio::test]
async fn background_jobs_do_not_outlive_or_stall_the_call() {
    let (_d, wd) = workdir();
    let c = ctx(&wd);
    let args = json!({"command": "sleep 600 & echo $! > pid; echo done"});
    let out = tokio::time::timeout(HANG_GUARD, ok(names::EXECUTE_CMD, args, &c))
        .await
        .expect("the call waited for its background job");
    assert!(out.text.starts_with("exit code 0\n--- stdout ---\ndone\n"), "{}", out.text);
    let pid = wait_for_pid(&wd.join("pid")).await;
    assert_gone(pid).await;
}

// ---------- registry and labels ----------

#[test]
fn the_registry_lists_sorted_unique_object_schemas() {
    let registry = ToolRegistry::builtin();
    let defs = registry.defs();
    let listed: Vec<&str> = defs.iter().map(|d| d.name).collect();
    let mut expected = vec![
        names::READ_FILE,
        names::LIST_DIR,
        names::SEARCH_FILES,
        names::FIND_FILES,
        names::WRITE_FILE,
        names::EDIT_FILE,
        names::INSERT_AT_LINE,
        names::REPLACE_LINES,
        names::EXECUTE_CMD,
    ];
    expected.sort();
    assert_eq!(listed, expected, "sorted by name, each once");
    for def in &defs {
        let schema = &def.parameters;
        assert_eq!(schema["type"], "object", "{}", def.name);
        assert!(schema["properties"].is_object(), "{}", def.name);
        for required in schema["required"].as_array().into_iter().flatten() {
            let key = required.as_str().unwrap();
            assert!(schema["properties"].get(key).is_some(), "{}: {key}", def.name);
        }
        let openai = def.to_openai();
        assert_eq!(openai["type"], "function");
        assert_eq!(openai["function"]["name"], def.name);
        assert_eq!(&openai["function"]["parameters"], schema);
        assert_eq!(def.read_only, names::is_read_tool(def.name), "{}", def.name);
    }
    let exec = registry.get(names::EXECUTE_CMD).unwrap();
    assert_eq!(exec.def().category, ToolCategory::Shell);
    // Byte-identical between calls (prompt caching).
    let a = serde_json::to_string(&defs.iter().map(|d| d.to_openai()).collect::<Vec<_>>()).unwrap();
    let b = ToolRegistry::builtin().defs().iter().map(|d| d.to_openai()).collect::<Vec<_>>();
    assert_eq!(a, serde_json::to_string(&b).unwrap());
}

#[test]
fn labels_are_cut_on_a_char_boundary() {
    let registry = ToolRegistry::builtin();
    let read = registry.get(names::READ_FILE).unwrap();
    let label =
        read.describe(&json!({"path": "src/main.rs", "start_line": 3, "end_line": 9}), false);
    assert_eq!(label, "read_file src/main.rs:3-9");
    let exec = registry.get(names::EXECUTE_CMD).unwrap();
    let long = format!("echo {}\nexit 1", "é".repeat(200));
    let short = exec.describe(&json!({"command": long}), false);
    let full = exec.describe(&json!({"command": long}), true);
    assert_eq!(short.chars().count(), 60);
    assert_eq!(full.chars().count(), 120);
    assert!(short.starts_with("execute_cmd echo éé") && short.ends_with('…'), "{short}");
    assert!(!full.contains('\n'));
}

// ---------- search_files / find_files ----------

/// A small project: a git repository (so `.gitignore` counts) with a binary, an ignored file
/// and a hidden one holding the same word as the ordinary files.
fn search_tree() -> (tempfile::TempDir, PathBuf) {
    let (d, wd) = workdir();
    std::fs::create_dir_all(wd.join(".git")).unwrap();
    std::fs::create_dir_all(wd.join("src")).unwrap();
    std::fs::write(wd.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(wd.join("build")).unwrap();
    std::fs::write(wd.join("build/out.txt"), "needle in the build\n").unwrap();
    std::fs::write(wd.join(".hidden.txt"), "needle hidden\n").unwrap();
    std::fs::write(wd.join("blob.bin"), b"needle\0\x01\x02").unwrap();
    std::fs::write(wd.join("src/a.rs"), "one\ntwo\nNeedle three\nfour\nfive\n").unwrap();
    std::fs::write(wd.join("src/b.rs"), "needle\n".repeat(30)).unwrap();
    (d, wd)
}

#[tokio::test]
async fn search_files_respects_gitignore_skips_binaries_and_hidden_and_shows_context() {
    let (_d, wd) = search_tree();
    let c = ctx(&wd);
    let out =
        ok("search_files", json!({"pattern": "needle", "glob": "a.rs", "context": 1}), &c).await;
    assert_eq!(
        out.text,
        "src/a.rs-2-two\nsrc/a.rs:3:Needle three\nsrc/a.rs-4-four\n\n[1 matches in 1 file]\n"
    );
    let all = ok("search_files", json!({"pattern": "needle"}), &c).await.text;
    assert!(all.contains("src/a.rs:3:") && all.contains("src/b.rs:30:needle"), "{all}");
    for absent in ["build/", "hidden", "blob.bin"] {
        assert!(!all.contains(absent), "{absent}: {all}");
    }
    let exact = ok("search_files", json!({"pattern": "needle", "case": "sensitive"}), &c).await;
    assert!(!exact.text.contains("a.rs"), "{}", exact.text);
    let none = ok("search_files", json!({"pattern": "absent(", "literal": true}), &c).await;
    assert_eq!(none.text, "No matches for `absent(` in ..");
    let bad = failed("search_files", json!({"pattern": "absent("}), &c).await;
    assert!(bad.contains("not a valid regular expression"), "{bad}");
}

#[tokio::test]
async fn search_files_stops_at_its_cap_and_says_more_results_exist() {
    let (_d, wd) = search_tree();
    let out = ok("search_files", json!({"pattern": "needle", "max_matches": 5}), &ctx(&wd)).await;
    assert_eq!(out.text.to_lowercase().matches("needle").count(), 5, "{}", out.text);
    assert!(out.text.contains("[… more results: showing the first 5 matches"), "{}", out.text);
}

#[tokio::test]
async fn find_files_lists_newest_first_and_caps() {
    let (_d, wd) = search_tree();
    let c = ctx(&wd);
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(wd.join("src/b.rs"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let out = ok("find_files", json!({"pattern": "*.rs"}), &c).await;
    assert_eq!(out.text, "src/a.rs\nsrc/b.rs\n[2 files, newest first]\n");
    let capped = ok("find_files", json!({"pattern": "src/*", "max_results": 1}), &c).await;
    assert_eq!(
        capped.text,
        "src/a.rs\n[… more results: 1 more files match; narrow the pattern or the path, or raise `max_results`]\n"
    );
    let file = failed("find_files", json!({"pattern": "*", "path": "src/a.rs"}), &c).await;
    assert!(file.contains("is a file"), "{file}");
}

#[test]
fn search_labels_name_the_pattern_and_the_place() {
    let registry = ToolRegistry::builtin();
    let search = registry.get(names::SEARCH_FILES).unwrap();
    let args = json!({"pattern": "fn main", "path": "src", "glob": "*.rs"});
    assert_eq!(search.describe(&args, false), "search_files /fn main/ in src (*.rs)");
    let find = registry.get(names::FIND_FILES).unwrap();
    assert_eq!(find.describe(&json!({"pattern": "*.toml"}), true), "find_files *.toml in .");
}

#[tokio::test]
async fn a_stopped_search_ends_cancelled() {
    let (_d, wd) = search_tree();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let c = ToolContext::new(&wd, cancel);
    for (name, args) in
        [("search_files", json!({"pattern": "needle"})), ("find_files", json!({"pattern": "*.rs"}))]
    {
        let out = call(name, args, &c).await;
        assert!(matches!(out, Err(ToolError::Cancelled)), "{name}: {out:?}");
    }
}
