//! The kill harness for a job's run: `skald jobs run` (which claims the run, creates its
//! session and queued work in one transaction, then runs it in its own process) is killed after
//! each of its writes in turn, on a fresh copy of a data dir holding one job, and recovered as a
//! person would with fresh processes (`skald resume` on the run's session). Every point must end
//! with no run at all (killed before the claim committed: nothing of it is stored) or exactly one
//! run, `done`, whose prompt reached the model at most twice (once more when the kill lost the
//! answer) — never a second run, a session without its run, or a run left unfinished.
//!
//! `#[ignore]`d like the turn's harness; `scripts/test.sh` runs every `kill_harness` test.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use serde_json::Value;
use skald_testkit::{FakeLlm, Reply, When};

use super::kill_harness::{copy_tree, output};
use tokio::process::Command;

const KEY: &str = "JOB-KILL";
const ANSWER: &str = "JOB-KILL: nothing to report";

struct Dir {
    _root: tempfile::TempDir,
    data: PathBuf,
    count: PathBuf,
}

/// A copy of `template` (config, database, agent, the job) of its own.
fn copy(template: &Path) -> Dir {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    copy_tree(template, &data);
    let count = root.path().join("writes");
    Dir { _root: root, data, count }
}

fn skald(fake: &FakeLlm, data: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skald"));
    cmd.env_remove("SKALD_DATA_DIR")
        .env_remove("SKALD_LLM_API_KEY")
        .env_remove("SKALD_COUNT_WRITES")
        .env_remove("SKALD_KILL_AFTER_WRITES")
        .env("SKALD_LLM_BASE_URL", fake.base_url())
        .env("SKALD_LLM_MODEL", "fake-model")
        .arg("--json")
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .kill_on_drop(true);
    cmd
}

async fn ok(fake: &FakeLlm, data: &Path, args: &[&str]) -> Result<String, String> {
    let (status, stdout, stderr) = output(skald(fake, data, args)).await;
    match status.code() {
        Some(0) => Ok(stdout),
        _ => Err(format!("`skald {}` ended {status}: {stderr}", args.join(" "))),
    }
}

fn fake_script(fake: &FakeLlm) {
    fake.on(When::user_says(KEY), Reply::text(ANSWER));
}

/// `skald jobs run 1`, counting its writes into `dir.count`, killed after `kill_after` of them.
async fn run_now(fake: &FakeLlm, dir: &Dir, kill_after: Option<u64>) -> ExitStatus {
    let mut cmd = skald(fake, &dir.data, &["jobs", "run", "1"]);
    cmd.env("SKALD_COUNT_WRITES", &dir.count);
    if let Some(k) = kill_after {
        cmd.env("SKALD_KILL_AFTER_WRITES", k.to_string());
    }
    output(cmd).await.0
}

async fn runs(fake: &FakeLlm, data: &Path) -> Result<Vec<Value>, String> {
    let text = ok(fake, data, &["jobs", "runs", "1"]).await?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    Ok(v.as_array().cloned().unwrap_or_default())
}

/// How many requests asked the job's prompt.
fn asked(fake: &FakeLlm) -> usize {
    fake.requests()
        .iter()
        .filter(|r| {
            let messages = r.body["messages"].as_array().unwrap();
            messages.iter().any(|m| m["content"].as_str().is_some_and(|c| c.starts_with(KEY)))
        })
        .count()
}

/// Recovers with fresh processes and checks the point's end state.
async fn recover(fake: &FakeLlm, data: &Path) -> Result<String, String> {
    for _ in 0..4 {
        let rows = runs(fake, data).await?;
        match rows.as_slice() {
            [] => {
                // Killed before the claim committed: no session of it may exist either.
                let detail = ok(fake, data, &["api", "session_detail", r#"{"session_id":1}"#]);
                return match detail.await {
                    Err(_) if asked(fake) == 0 => Ok("no run: the claim never committed".into()),
                    Err(_) => Err("the model was asked for a run that is not stored".into()),
                    Ok(_) => Err("a session exists without its run".into()),
                };
            }
            [run] => {
                let session = run["session_id"].as_i64().ok_or("a claimed run has no session")?;
                if run["state"] == "done" {
                    // Its end and its notice for the home chat are one transaction: one notice.
                    let text = ok(fake, data, &["api", "home_notices", "{}"]).await?;
                    let all: Value =
                        serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
                    let mine: Vec<&Value> = all
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|n| n["job_run_id"] == run["id"] && n["state"] == "done")
                        .collect();
                    if mine.len() != 1 {
                        return Err(format!("the done run has {} notices: {all}", mine.len()));
                    }
                    let n = asked(fake);
                    return if (1..=2).contains(&n) {
                        Ok(format!("one run, done; the prompt asked {n} time(s)"))
                    } else {
                        Err(format!("the prompt was asked {n} times"))
                    };
                }
                ok(fake, data, &["resume", "--session", &session.to_string()]).await?;
            }
            more => return Err(format!("{} runs of one `jobs run`: {more:?}", more.len())),
        }
    }
    Err(format!("the run did not end in 4 recovery steps: {:?}", runs(fake, data).await?))
}

/// A data dir under `root` with a task agent `scout` and one daily job of it, working in a
/// folder of its own: the template every kill point starts from.
async fn template_with_a_job(fake: &FakeLlm, root: &Path) -> PathBuf {
    let template = root.join("template");
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let agent = template.join("agents").join("scout");
    std::fs::create_dir_all(&agent).unwrap();
    let meta = serde_json::json!({ "name": "scout", "description": "the scout", "type": "task" });
    std::fs::write(agent.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(agent.join("AGENT.md"), "You are the scout.").unwrap();
    let work_s = work.display().to_string();
    let mut add: Vec<&str> =
        "jobs add --title nightly --every 86400 --agent scout".split(' ').collect();
    add.extend(["--prompt", "JOB-KILL: look around", "--workdir", &work_s]);
    ok(fake, &template, &add).await.unwrap();
    template
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "dozens of processes: run by scripts/test.sh with the other kill harness"]
async fn kill_harness_a_job_run_started_now_recovers_at_every_write() {
    let root = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await.unwrap();
    let template = template_with_a_job(&fake, root.path()).await;

    // The counting run: the whole `jobs run` once.
    let counting = copy(&template);
    fake_script(&fake);
    let status = run_now(&fake, &counting, None).await;
    assert!(status.success(), "{status}");
    let writes: Vec<String> =
        std::fs::read_to_string(&counting.count).unwrap().lines().map(str::to_string).collect();
    assert!(recover(&fake, &counting.data).await.unwrap().starts_with("one run, done"));
    assert!(writes.len() >= 4, "too few kill points: {writes:?}");

    let mut failures = Vec::new();
    for (k, next) in writes.iter().enumerate() {
        let dir = copy(&template);
        let fake = FakeLlm::start().await.unwrap();
        fake.allow_leftover_replies();
        fake.allow_unscripted_requests();
        fake_script(&fake);
        let status = run_now(&fake, &dir, Some(k as u64)).await;
        if status.signal() != Some(9) {
            failures.push(format!("after {k} writes: not killed ({status})"));
            continue;
        }
        match recover(&fake, &dir.data).await {
            Ok(note) => eprintln!("  after {k} writes, before [{next}]: {note}"),
            Err(e) => {
                eprintln!("  after {k} writes, before [{next}]: FAILED {e}");
                failures.push(format!("after {k} writes: {e}"));
            }
        }
    }
    let line =
        format!("job kill points: {}, recovered: {}", writes.len(), writes.len() - failures.len());
    eprintln!("{line}");
    assert!(failures.is_empty(), "{line}\n{}", failures.join("\n"));
}

/// `skald api deliver_briefing` on `dir`, counting its writes, killed after `kill_after`.
async fn deliver(fake: &FakeLlm, dir: &Dir, kill_after: Option<u64>) -> ExitStatus {
    let mut cmd = skald(fake, &dir.data, &["api", "deliver_briefing", "{}"]);
    cmd.env("SKALD_COUNT_WRITES", &dir.count);
    if let Some(k) = kill_after {
        cmd.env("SKALD_KILL_AFTER_WRITES", k.to_string());
    }
    output(cmd).await.0
}

/// After a (killed) delivery and a whole one: every notification delivered, all by one briefing
/// input of the home session, which holds exactly one.
async fn delivered_once(fake: &FakeLlm, data: &Path) -> Result<String, String> {
    let text = ok(fake, data, &["api", "list_notifications", "{}"]).await?;
    let notes: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    let notes = notes.as_array().cloned().unwrap_or_default();
    if notes.is_empty() {
        return Err("no notification of the run".into());
    }
    let homes: std::collections::BTreeSet<Option<i64>> =
        notes.iter().map(|n| n["delivered_session_id"].as_i64()).collect();
    let [Some(home)] = homes.iter().copied().collect::<Vec<_>>()[..] else {
        return Err(format!("not all delivered to one session: {notes:?}"));
    };
    let store = skald_store::Store::open_in_dir(data).await.map_err(|e| e.to_string())?;
    let count = |sql: &'static str| {
        let pool = store.pool().clone();
        async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await }
    };
    let briefings = count("SELECT COUNT(*) FROM pending_inputs WHERE kind = 'briefing'")
        .await
        .map_err(|e| e.to_string())?;
    let inputs = count("SELECT COUNT(DISTINCT briefing_input_id) FROM notifications")
        .await
        .map_err(|e| e.to_string())?;
    if inputs != 1 {
        return Err(format!("the notifications went in {inputs} briefings"));
    }
    if briefings == 1 {
        Ok(format!("{} notification(s), one briefing in session {home}", notes.len()))
    } else {
        Err(format!("{briefings} briefing inputs in session {home}"))
    }
}

/// A briefing's delivery (the home session made, the batch put in its root inbox and marked) is
/// killed after each of its writes; delivering again afterwards gives the home session exactly
/// one briefing carrying every notification — never none, never two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "dozens of processes: run by scripts/test.sh with the other kill harness"]
async fn kill_harness_a_briefing_delivery_is_delivered_once_at_every_write() {
    let root = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await.unwrap();
    let template = template_with_a_job(&fake, root.path()).await;
    // A run that ended: its end waits as a notification (a one-shot `jobs run` delivers none).
    fake_script(&fake);
    let template_dir = Dir {
        _root: tempfile::tempdir().unwrap(),
        data: template.clone(),
        count: root.path().join("run-writes"),
    };
    assert!(run_now(&fake, &template_dir, None).await.success());

    let counting = copy(&template);
    assert!(deliver(&fake, &counting, None).await.success());
    let writes: Vec<String> =
        std::fs::read_to_string(&counting.count).unwrap().lines().map(str::to_string).collect();
    delivered_once(&fake, &counting.data).await.unwrap();
    assert!(!writes.is_empty(), "a delivery writes");

    let mut failures = Vec::new();
    for (k, next) in writes.iter().enumerate() {
        let dir = copy(&template);
        let status = deliver(&fake, &dir, Some(k as u64)).await;
        if status.signal() != Some(9) {
            failures.push(format!("after {k} writes: not killed ({status})"));
            continue;
        }
        let again = deliver(&fake, &dir, None).await;
        let checked = if again.success() {
            delivered_once(&fake, &dir.data).await
        } else {
            Err(format!("the second delivery ended {again}"))
        };
        match checked {
            Ok(note) => eprintln!("  after {k} writes, before [{next}]: {note}"),
            Err(e) => {
                eprintln!("  after {k} writes, before [{next}]: FAILED {e}");
                failures.push(format!("after {k} writes: {e}"));
            }
        }
    }
    let line = format!(
        "briefing kill points: {}, delivered once: {}",
        writes.len(),
        writes.len() - failures.len()
    );
    eprintln!("{line}");
    assert!(failures.is_empty(), "{line}\n{}", failures.join("\n"));
}
