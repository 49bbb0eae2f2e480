//! Rule evaluation, bypasses, the gate verdict and the diffs a human reviews.

use std::path::{Path, PathBuf};

use skald_core::approval::gate::{
    GateInput, LoadedRules, RulesUnavailable, SEEDS, load_rules, verdict_under,
};
use skald_core::approval::rules::{CallFacts, tool_matches};
use skald_core::approval::{Action, BypassScope, Rule, RuleSet, Verdict, diff};
use skald_core::tools::ToolCategory;
use skald_protocol::RunContext;

fn rule(id: i64, tool: &str, path: Option<&str>, action: Action, priority: i64) -> Rule {
    Rule {
        id,
        tool_pattern: tool.into(),
        path_pattern: path.map(str::to_string),
        agent_id: None,
        source: None,
        action,
        priority,
        note: None,
    }
}

/// The seeded default policy, as rows in the order the seeder writes them.
fn seeded() -> RuleSet {
    RuleSet::new(vec![
        rule(1, "@fs_any", Some("secrets/*"), Action::Deny, 5),
        rule(2, "@fs_write", Some("memory/*"), Action::Allow, 6),
        rule(3, "execute_cmd", None, Action::Require, 10),
        rule(4, "@fs_write", None, Action::Require, 10),
        rule(5, "@mcp_write", None, Action::Require, 900),
    ])
}

struct Env {
    _dir: tempfile::TempDir,
    data: PathBuf,
    work: PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let data = root.join("data");
    let work = root.join("work");
    for d in [data.join("memory"), data.join("secrets"), work.join("src"), work.join("secrets")] {
        std::fs::create_dir_all(d).unwrap();
    }
    Env { _dir: dir, data, work }
}

fn check(
    rules: &LoadedRules,
    bypass: &[BypassScope],
    e: &Env,
    tool: &str,
    path: Option<&Path>,
    rc: &RunContext,
) -> Verdict {
    // In these cases an MCP tool whose name ends in `_ro` is one its server calls read-only.
    let read_only = matches!(tool, "read_file" | "list_dir") || tool.ends_with("_ro");
    let category = if tool.starts_with("mcp__") {
        None
    } else if tool == "execute_cmd" {
        Some(ToolCategory::Shell)
    } else {
        Some(ToolCategory::Filesystem)
    };
    verdict_under(
        rules,
        bypass,
        &GateInput {
            session_id: 1,
            tool,
            category,
            read_only,
            target: path,
            args: &serde_json::Value::Null,
            agent_id: "main",
            source: "web",
            workdir: &e.work,
            data_dir: &e.data,
            home: None,
            run_context: rc,
        },
    )
}

#[test]
fn tool_patterns_match_as_documented() {
    let cases = [
        ("execute_cmd", "execute_cmd", true),
        ("execute_cmd", "execute_cmd_x", false),
        ("mcp__gmail__*", "mcp__gmail__send", true),
        ("mcp__gmail__*", "mcp__gmailx__send", false),
        ("mcp__*", "mcp__a__b", true),
        ("*", "anything", true),
        ("@fs_read", "read_file", true),
        ("@fs_read", "write_file", false),
        ("@fs_write", "edit_file", true),
        ("@fs_write", "replace_lines", true),
        ("@fs_any", "list_dir", true),
        ("@fs_any", "execute_cmd", false),
    ];
    for (pattern, tool, expected) in cases {
        assert_eq!(tool_matches(pattern, tool, false), expected, "{pattern} vs {tool}");
    }
    // `@mcp_write`: MCP tools their server does not call read-only, and nothing else.
    assert!(tool_matches("@mcp_write", "mcp__git__commit", false));
    assert!(!tool_matches("@mcp_write", "mcp__git__log", true));
    assert!(!tool_matches("@mcp_write", "write_file", false));
    assert!(tool_matches("mcp__*", "mcp__git__log", true), "name patterns ignore the hint");
}

#[test]
fn first_match_by_priority_wins_and_filters_apply() {
    let mut agent_only = rule(10, "execute_cmd", None, Action::Allow, 1);
    agent_only.agent_id = Some("builder".into());
    let set = RuleSet::new(vec![rule(11, "execute_cmd", None, Action::Deny, 50), agent_only]);
    let facts = |agent| CallFacts {
        tool: "execute_cmd",
        agent_id: agent,
        source: "web",
        path: None,
        data_dir: Path::new("/data"),
        workdir: Path::new("/work"),
        read_only: false,
    };
    assert_eq!(set.evaluate(&facts("builder")).unwrap().action, Action::Allow);
    assert_eq!(set.evaluate(&facts("main")).unwrap().action, Action::Deny);
}

#[test]
fn the_seeded_policy_table() {
    let e = env();
    let rules: LoadedRules = Ok(seeded());
    let bypass: [BypassScope; 0] = [];
    let rc = RunContext::default();
    let outside = std::fs::canonicalize(std::env::temp_dir()).unwrap().join("elsewhere.txt");
    let cases: Vec<(&str, Option<PathBuf>, Verdict)> = vec![
        ("read_file", Some(e.work.join("src/main.rs")), Verdict::Allow),
        ("list_dir", Some(e.work.clone()), Verdict::Allow),
        ("read_file", Some(outside.clone()), Verdict::Require),
        ("write_file", Some(e.work.join("src/main.rs")), Verdict::Require),
        ("edit_file", Some(e.work.join("a.txt")), Verdict::Require),
        ("execute_cmd", None, Verdict::Require),
        ("mcp__srv__tool", None, Verdict::Require),
        ("mcp__srv__lookup_ro", None, Verdict::Allow),
        ("update_scratchpad", None, Verdict::Allow),
        ("write_file", Some(e.data.join("memory/notes.md")), Verdict::Allow),
    ];
    for (tool, path, expected) in cases {
        let got = check(&rules, &bypass, &e, tool, path.as_deref(), &rc);
        assert_eq!(got, expected, "{tool} {path:?}");
    }
    for (tool, path) in [
        ("read_file", e.work.join("secrets/key.pem")),
        ("write_file", e.data.join("secrets/token")),
        ("list_dir", e.work.join("secrets")),
    ] {
        let got = check(&rules, &bypass, &e, tool, Some(&path), &rc);
        assert!(matches!(got, Verdict::Deny(_)), "{tool} {path:?} → {got:?}");
    }
}

#[test]
fn traversal_and_symlinks_out_of_memory_get_no_exemption() {
    let e = env();
    let rules: LoadedRules = Ok(seeded());
    let bypass: [BypassScope; 0] = [];
    let rc = RunContext::default();
    // `memory/../src/main.rs` is not under memory/.
    let traversal = e.data.join("memory/../config.yml");
    assert_eq!(check(&rules, &bypass, &e, "write_file", Some(&traversal), &rc), Verdict::Require);
    // A symlink inside memory/ pointing out of it is judged by where it points.
    let link = e.data.join("memory/escape");
    std::os::unix::fs::symlink(&e.work, &link).unwrap();
    let through = link.join("src/main.rs");
    assert_eq!(check(&rules, &bypass, &e, "write_file", Some(&through), &rc), Verdict::Require);
    // A symlink into secrets/ is denied like the real path.
    let sneaky = e.work.join("innocent");
    std::os::unix::fs::symlink(e.work.join("secrets"), &sneaky).unwrap();
    let got = check(&rules, &bypass, &e, "read_file", Some(&sneaky.join("key")), &rc);
    assert!(matches!(got, Verdict::Deny(_)), "{got:?}");
    // `memory-secrets/` is not `memory/`.
    let sibling = e.data.join("memory-secrets/x");
    assert_eq!(check(&rules, &bypass, &e, "write_file", Some(&sibling), &rc), Verdict::Require);
}

#[test]
fn memory_means_the_data_dirs_memory_and_never_the_projects() {
    let e = env();
    let rules: LoadedRules = Ok(seeded());
    let bypass: [BypassScope; 0] = [];
    let rc = RunContext::default();
    let write = |p: &Path| check(&rules, &bypass, &e, "write_file", Some(p), &rc);
    assert_eq!(write(&e.data.join("memory/notes.md")), Verdict::Allow);
    assert_eq!(write(&e.data.join("memory/new/deeper/file.md")), Verdict::Allow);
    // A project folder that happens to be called memory/ is the user's code.
    std::fs::create_dir_all(e.work.join("memory")).unwrap();
    assert_eq!(write(&e.work.join("memory/x")), Verdict::Require);
    assert_eq!(write(&e.work.join("memory")), Verdict::Require);
    // `..` out of the data dir's memory into the data dir itself.
    assert_eq!(write(&e.data.join("memory/../memory-old/x")), Verdict::Require);
    // From the project into the data dir's memory through a link: the target decides (allowed),
    // also for a file (and folders) that do not exist yet.
    let into = e.work.join("notes");
    std::os::unix::fs::symlink(e.data.join("memory"), &into).unwrap();
    assert_eq!(write(&into.join("today.md")), Verdict::Allow);
    assert_eq!(write(&into.join("2026/06/today.md")), Verdict::Allow);
    // Out of the data dir's memory through links: to the project, to /etc, and a dangling link
    // whose target does not exist yet.
    std::os::unix::fs::symlink(&e.work, e.data.join("memory/project")).unwrap();
    assert_eq!(write(&e.data.join("memory/project/memory/x")), Verdict::Require);
    assert_eq!(write(&e.data.join("memory/project/new-dir/x")), Verdict::Require);
    std::os::unix::fs::symlink("/etc", e.data.join("memory/etc")).unwrap();
    assert_eq!(write(&e.data.join("memory/etc/hosts")), Verdict::Require);
    std::os::unix::fs::symlink(e.work.join("later.txt"), e.data.join("memory/later")).unwrap();
    assert_eq!(write(&e.data.join("memory/later")), Verdict::Require);
    // Narrowing rules still match under both roots.
    assert!(matches!(write(&e.work.join("secrets/k")), Verdict::Deny(_)));
    assert!(matches!(write(&e.data.join("secrets/k")), Verdict::Deny(_)));
}

#[test]
fn relative_allow_patterns_resolve_against_the_data_dir_and_absolute_ones_where_they_say() {
    let e = env();
    let rc = RunContext::default();
    let bypass: [BypassScope; 0] = [];
    let src = e.work.join("src/lib.rs");
    let with = |extra: Rule| -> LoadedRules {
        let mut rules = seeded().rules().to_vec();
        rules.push(extra);
        Ok(RuleSet::new(rules))
    };
    let relative = with(rule(20, "@fs_write", Some("src/*"), Action::Allow, 1));
    assert_eq!(check(&relative, &bypass, &e, "write_file", Some(&src), &rc), Verdict::Require);
    let data_src = e.data.join("src/x");
    assert_eq!(check(&relative, &bypass, &e, "write_file", Some(&data_src), &rc), Verdict::Allow);
    let absolute = format!("{}/*", e.work.join("src").display());
    let absolute = with(rule(20, "@fs_write", Some(&absolute), Action::Allow, 1));
    assert_eq!(check(&absolute, &bypass, &e, "write_file", Some(&src), &rc), Verdict::Allow);
    // Prefix patterns: the directory part is resolved, the name part is a prefix.
    let prefix = with(rule(20, "@fs_write", Some("memory/draft*"), Action::Deny, 1));
    let draft = e.data.join("memory/drafts/a.md");
    assert!(matches!(
        check(&prefix, &bypass, &e, "write_file", Some(&draft), &rc),
        Verdict::Deny(_)
    ));
    let project_draft = e.work.join("memory/draft.md");
    let got = check(&prefix, &bypass, &e, "write_file", Some(&project_draft), &rc);
    assert!(matches!(got, Verdict::Deny(_)), "a narrowing rule matches in the project: {got:?}");
    let other = e.data.join("memory/final.md");
    assert_eq!(check(&prefix, &bypass, &e, "write_file", Some(&other), &rc), Verdict::Allow);
}

#[test]
fn bypass_relaxes_require_by_scope_but_never_a_deny() {
    let e = env();
    let rules: LoadedRules = Ok(seeded());
    let rc = RunContext::default();
    let file = e.work.join("a.txt");
    let secret = e.work.join("secrets/k");

    let shell_only = [BypassScope::Category(ToolCategory::Shell)];
    assert_eq!(check(&rules, &shell_only, &e, "execute_cmd", None, &rc), Verdict::Allow);
    assert_eq!(check(&rules, &shell_only, &e, "write_file", Some(&file), &rc), Verdict::Require);

    let mcp = [BypassScope::McpServer("srv".into())];
    assert_eq!(check(&rules, &mcp, &e, "mcp__srv__x", None, &rc), Verdict::Allow);
    assert_eq!(check(&rules, &mcp, &e, "mcp__other__x", None, &rc), Verdict::Require);

    let all = [BypassScope::All];
    assert_eq!(check(&rules, &all, &e, "write_file", Some(&file), &rc), Verdict::Allow);
    assert!(matches!(check(&rules, &all, &e, "write_file", Some(&secret), &rc), Verdict::Deny(_)));
    assert!(matches!(check(&rules, &all, &e, "read_file", Some(&secret), &rc), Verdict::Deny(_)));
    assert_eq!(check(&rules, &[], &e, "execute_cmd", None, &rc), Verdict::Require);
}

/// The boundary `docs/reliability.md` states, one verdict per line of its table.
#[test]
fn a_bypass_stays_inside_the_workdir_and_off_protected_paths() {
    let e = env();
    let rules: LoadedRules = Ok(seeded());
    let rc = RunContext::default();
    let home = e.data.parent().unwrap().to_path_buf();
    let judge = |bypass: &[BypassScope], tool: &str, path: Option<&Path>, args| {
        let category = match tool {
            "execute_cmd" => Some(ToolCategory::Shell),
            t if t.starts_with("mcp__") => None,
            "register_mcp" => Some(ToolCategory::Session),
            _ => Some(ToolCategory::Filesystem),
        };
        verdict_under(
            &rules,
            bypass,
            &GateInput {
                session_id: 1,
                tool,
                category,
                read_only: tool == "read_file",
                target: path,
                args: &args,
                agent_id: "main",
                source: "web",
                workdir: &e.work,
                data_dir: &e.data,
                home: Some(&home),
                run_context: &rc,
            },
        )
    };
    let none = serde_json::Value::Null;
    let files = [BypassScope::Category(ToolCategory::Filesystem)];
    let all = [BypassScope::All];
    // A write's bypass: writes in the project, not reads or writes elsewhere, not protected ones.
    assert_eq!(
        judge(&files, "write_file", Some(&e.work.join("src/a.rs")), none.clone()),
        Verdict::Allow
    );
    let outside = home.join("elsewhere/id_key");
    assert_eq!(judge(&files, "read_file", Some(&outside), none.clone()), Verdict::Require);
    assert_eq!(judge(&all, "write_file", Some(&outside), none.clone()), Verdict::Require);
    for protected in [
        e.data.join("config.yml"),
        e.work.join(".git/hooks/pre-commit"),
        e.work.join(".github/workflows/ci.yml"),
        e.work.join(".envrc"),
    ] {
        assert_eq!(judge(&all, "write_file", Some(&protected), none.clone()), Verdict::Require);
    }
    // Reading Skald's own files asks (the rows try it from a workdir that holds them).
    let token = e.data.join("serve.token");
    assert_eq!(judge(&all, "read_file", Some(&token), none.clone()), Verdict::Require);
    // Deny rules reach a shell command's words and an MCP tool's path arguments.
    let cmd = |c: &str| serde_json::json!({ "command": c });
    assert!(matches!(judge(&all, "execute_cmd", None, cmd("cat se'cr'ets/*")), Verdict::Deny(_)));
    assert_eq!(judge(&all, "execute_cmd", None, cmd("cargo test")), Verdict::Allow);
    assert_eq!(
        judge(&all, "execute_cmd", None, cmd("cat ~/.ssh/id_ed25519")),
        Verdict::Require,
        "a home dot-entry named by a command asks"
    );
    let outside_cmd = serde_json::json!({ "command": "ls", "workdir": "/" });
    assert_eq!(judge(&all, "execute_cmd", None, outside_cmd), Verdict::Require);
    let mcp = [BypassScope::McpServer("fs".into())];
    let mcp_args = serde_json::json!({ "path": "secrets/api-key.txt" });
    assert!(matches!(judge(&mcp, "mcp__fs__read", None, mcp_args), Verdict::Deny(_)));
    // The `config` group chooses which programs run: it always asks.
    assert_eq!(judge(&all, "register_mcp", None, none), Verdict::Require);
}

#[test]
fn run_context_pre_authorises_writes_but_never_overrides_a_deny() {
    let e = env();
    let rules: LoadedRules = Ok(seeded());
    let bypass: [BypassScope; 0] = [];
    let rc =
        RunContext { allow_fs_writes: vec!["src".into(), "secrets".into()], ..Default::default() };
    assert_eq!(
        check(&rules, &bypass, &e, "write_file", Some(&e.work.join("src/lib.rs")), &rc),
        Verdict::Allow
    );
    assert_eq!(
        check(&rules, &bypass, &e, "write_file", Some(&e.work.join("README.md")), &rc),
        Verdict::Require
    );
    let secret = e.work.join("secrets/x");
    assert!(matches!(
        check(&rules, &bypass, &e, "write_file", Some(&secret), &rc),
        Verdict::Deny(_)
    ));
}

#[test]
fn rules_that_cannot_be_loaded_fail_closed() {
    let e = env();
    let rules: LoadedRules = Err(RulesUnavailable::Store(skald_store::StoreError::Corrupt {
        column: "approval_rules.group_id",
        value: "?".into(),
    }));
    // Even under an `all` bypass.
    let bypass = [BypassScope::All];
    let rc = RunContext::default();
    let file = e.work.join("a.txt");
    assert!(matches!(check(&rules, &bypass, &e, "write_file", Some(&file), &rc), Verdict::Deny(_)));
    assert!(matches!(check(&rules, &bypass, &e, "execute_cmd", None, &rc), Verdict::Deny(_)));
    assert_eq!(check(&rules, &bypass, &e, "read_file", Some(&file), &rc), Verdict::Allow);
}

#[tokio::test]
async fn a_rule_with_an_unknown_stored_action_denies_what_it_matches_and_nothing_else() {
    let e = env();
    let store = skald_store::Store::open_in_dir(&e.data).await.unwrap();
    store.seed_rules(SEEDS).await.unwrap();
    super::write_unchecked(&e.data, super::UNKNOWN_ACTION_RULE).await;
    let rules = load_rules(&store, None).await;
    let rc = RunContext::default();
    // Even under an `all` bypass, which relaxes Require only.
    let bypass = [BypassScope::All];
    let denied = check(&rules, &bypass, &e, "execute_cmd", None, &rc);
    assert!(matches!(denied, Verdict::Deny(_)), "{denied:?}");
    assert!(
        rules.as_ref().unwrap().hides_tool("execute_cmd", false),
        "not offered, like any denied tool"
    );
    // The calls the rule does not match keep the rest of the policy.
    let file = e.work.join("a.txt");
    assert_eq!(check(&rules, &[], &e, "write_file", Some(&file), &rc), Verdict::Require);
    assert_eq!(check(&rules, &bypass, &e, "write_file", Some(&file), &rc), Verdict::Allow);
}

#[test]
fn a_tool_denied_by_name_is_not_offered() {
    let set = RuleSet::new(vec![rule(1, "execute_cmd", None, Action::Deny, 1)]);
    assert!(set.hides_tool("execute_cmd", false));
    assert!(!set.hides_tool("read_file", true));
    assert!(!seeded().hides_tool("execute_cmd", false));
}

fn snap(name: &str, old: Option<&str>, new: Option<&str>) {
    let d = diff::file_diff("src/demo.txt", old.map(str::as_bytes), new.map(str::as_bytes));
    insta::assert_json_snapshot!(name, d);
}

#[test]
fn diff_insert() {
    snap("diff_insert", Some("a\nb\nc\n"), Some("a\nb\nnew line\nc\n"));
}

#[test]
fn diff_delete() {
    snap("diff_delete", Some("a\nb\nc\nd\n"), Some("a\nd\n"));
}

#[test]
fn diff_modify_has_word_level_spans() {
    snap(
        "diff_modify",
        Some("let total = price * qty;\nok\n"),
        Some("let total = price * quantity;\nok\n"),
    );
}

#[test]
fn diff_new_file() {
    snap("diff_new_file", None, Some("fn main() {}\n"));
}

#[test]
fn diff_crlf() {
    snap("diff_crlf", Some("one\r\ntwo\r\n"), Some("one\r\n2\r\n"));
}

#[test]
fn diff_no_trailing_newline() {
    snap("diff_no_trailing_newline", Some("x\ny"), Some("x\ny\n"));
}

#[test]
fn diff_large_and_binary_files_get_a_summary() {
    let big = "line\n".repeat(25_000);
    let d =
        diff::file_diff("big.log", Some(big.as_bytes()), Some(format!("{big}more\n").as_bytes()));
    assert_eq!(d.kind, skald_protocol::DiffKind::TooLarge);
    assert!(d.hunks.is_empty() && d.summary.contains("too large"), "{}", d.summary);
    let b = diff::file_diff("img.png", Some(&[0x89, 0, 1, 2]), Some(&[0x89, 0, 9]));
    assert_eq!(b.kind, skald_protocol::DiffKind::Binary);
    assert_eq!(b.summary, "binary file: 4 B → 3 B");
    let same = diff::file_diff("x", Some(b"a\n"), Some(b"a\n"));
    assert_eq!(same.kind, skald_protocol::DiffKind::Unchanged);
}

#[test]
fn a_diff_that_changes_only_line_endings_says_so() {
    let d = diff::file_diff("w.txt", Some(b"a\nb\n"), Some(b"a\r\nb\r\n"));
    assert_eq!(d.kind, skald_protocol::DiffKind::Modify);
    assert!(d.summary.ends_with("line endings LF → CRLF"), "{}", d.summary);
    let back = diff::file_diff("w.txt", Some(b"a\r\nb\r\n"), Some(b"a\nb\nc\n"));
    assert!(back.crlf, "the old side's endings are flagged");
    assert!(back.summary.ends_with("line endings CRLF → LF"), "{}", back.summary);
    let kept = diff::file_diff("w.txt", Some(b"a\r\n"), Some(b"a\r\nb\r\n"));
    assert!(!kept.summary.contains("line endings"), "{}", kept.summary);
}

/// The changed runs of the first `tag` line of the only hunk.
fn marked(d: &skald_protocol::FileDiff, tag: skald_protocol::DiffLineTag) -> Vec<String> {
    let line = d.hunks[0].lines.iter().find(|l| l.tag == tag).expect("a line with that tag");
    let joined: String = line.spans.iter().map(|s| s.text.as_str()).collect();
    assert!(line.spans.is_empty() || joined == line.text, "spans cover the line exactly");
    line.spans.iter().filter(|s| s.changed).map(|s| s.text.clone()).collect()
}

#[test]
fn diff_marks_the_words_of_a_line_whose_indentation_and_words_changed() {
    let d = diff::file_diff(
        "src/main.rs",
        Some(b"fn main() {\n    println!(\"hello\");\n}\n"),
        Some(b"fn main() {\n\tprintln!(\"hello, world\");\n}\n"),
    );
    use skald_protocol::DiffLineTag::{Delete, Insert};
    assert_eq!(marked(&d, Delete), ["    "]);
    assert_eq!(marked(&d, Insert), ["\t", ", world"]);
}

#[test]
fn diff_leaves_a_rewritten_line_unmarked() {
    // Nothing but punctuation and spaces in common: the whole line is the change.
    let d = diff::file_diff("a.txt", Some(b"alpha (beta);\n"), Some(b"gamma (delta);\n"));
    use skald_protocol::DiffLineTag::{Delete, Insert};
    assert!(marked(&d, Delete).is_empty());
    assert!(marked(&d, Insert).is_empty());
}

/// Scheduling a job (`execute_task` mode `cron`) always asks a person: a rule allowing the tool
/// (or everything), an "all tools" bypass and write pre-authorisation do not let it through;
/// only a deny rule answers it otherwise. Its `sync` mode follows the rules as before.
#[test]
fn scheduling_a_job_asks_a_person_whatever_rules_and_bypasses_say() {
    let e = env();
    let rc =
        RunContext { allow_fs_writes: vec![e.work.display().to_string()], ..Default::default() };
    let judge = |rules: Vec<Rule>, bypass: &[BypassScope], mode: &str| {
        let args = serde_json::json!({ "mode": mode, "agent_id": "scout", "prompt": "p" });
        verdict_under(
            &Ok(RuleSet::new(rules)),
            bypass,
            &GateInput {
                session_id: 1,
                tool: "execute_task",
                category: None,
                read_only: false,
                target: None,
                args: &args,
                agent_id: "main",
                source: "web",
                workdir: &e.work,
                data_dir: &e.data,
                home: None,
                run_context: &rc,
            },
        )
    };
    let allow_tool = || vec![rule(1, "execute_task", None, Action::Allow, 1)];
    let allow_all = || vec![rule(1, "*", None, Action::Allow, 1)];
    let all = [BypassScope::All];
    for rules in [Vec::new(), allow_tool(), allow_all()] {
        for bypass in [&[][..], &all[..]] {
            assert_eq!(judge(rules.clone(), bypass, "cron"), Verdict::Require, "{rules:?}");
        }
    }
    let deny = vec![rule(1, "execute_task", None, Action::Deny, 1)];
    assert!(matches!(judge(deny, &all, "cron"), Verdict::Deny(_)));
    assert_eq!(judge(allow_tool(), &[], "sync"), Verdict::Allow);
    assert_eq!(judge(Vec::new(), &all, "sync"), Verdict::Allow);
}
