//! A shell command never outlives a killed `skald chat`: the engine's process is SIGKILLed while
//! an approved `execute_cmd` runs; the shell dies with it (parent-death signal) and the next
//! engine to open kills the background job it left, so the delayed side effects never happen;
//! resumed, the command is flagged for the user (listed by `skald inbox`), never run again.
#![cfg(target_os = "linux")]

use std::process::Stdio;

use serde_json::json;
use skald_testkit::{FakeLlm, HANG_GUARD, Reply, eventually};

use super::chat::{cli, dirs, run};

/// Live (not zombie) processes whose process group is `pgid`.
pub(super) fn group_members(pgid: i64) -> Vec<i64> {
    let stat = |pid: i64| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .filter(|pid| {
            stat(*pid).is_some_and(|s| {
                let fields: Vec<&str> =
                    s.rsplit_once(')').map_or(Vec::new(), |(_, r)| r.split_whitespace().collect());
                fields.len() > 2 && !matches!(fields[0], "Z" | "X") && fields[2] == pgid.to_string()
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_chat_leaves_no_command_running_and_its_delayed_effects_never_happen() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    // The shell and a background job both write a marker after a delay far longer than the test.
    let script = "echo $$ > leader; (sleep 60; echo late > job-marker) & echo $! > job; \
                  sleep 60; echo late > marker";
    fake.push(Reply::tool_call("execute_cmd", &json!({ "command": script }).to_string()));
    let mut chat = cli(&fake, &data);
    chat.args(["chat", "--approve-all", "--workdir"]).arg(&work).arg("run the slow script");
    chat.stdout(Stdio::null()).stderr(Stdio::null());
    let mut chat = chat.spawn().unwrap();
    let pid_in = |name: &str| {
        std::fs::read_to_string(work.join(name)).ok().and_then(|t| t.trim().parse::<i64>().ok())
    };
    eventually("the command to start", || pid_in("leader").is_some() && pid_in("job").is_some())
        .await;
    let (leader, job) = (pid_in("leader").unwrap(), pid_in("job").unwrap());
    assert!(group_members(leader).contains(&job), "the job runs in the command's group");

    chat.start_kill().unwrap();
    tokio::time::timeout(HANG_GUARD, chat.wait()).await.unwrap().unwrap();

    // The shell dies with the engine's process, before any engine opens again.
    eventually("the shell to die with skald", || !group_members(leader).contains(&leader)).await;
    // The next engine to open (any command) kills the job the shell left behind.
    let mut list = cli(&fake, &data);
    list.args(["sessions", "list"]);
    let (code, _, stderr) = run(list).await;
    assert_eq!(code, 0, "{stderr}");
    eventually("no process of the command's group to be left", || group_members(leader).is_empty())
        .await;
    // With the whole group gone nothing can write the markers any more.
    assert!(!work.join("marker").exists() && !work.join("job-marker").exists());

    // Resumed, the command is not run again but flagged, and the inbox asks what happened.
    fake.push(Reply::text("The script was cut off; tell me whether it ran."));
    let mut resume = cli(&fake, &data);
    resume.args(["resume", "--session", "1"]);
    let (code, _, stderr) = run(resume).await;
    assert_eq!(code, 0, "{stderr}");
    let mut inbox = cli(&fake, &data);
    inbox.arg("inbox");
    let (code, out, stderr) = run(inbox).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(out.starts_with("interrupted call 1 · session 1 · execute_cmd"), "{out}");
    assert!(out.contains("skald api reconcile_call"), "{out}");
    assert!(!out.contains("Nothing is waiting"), "{out}");
    let mut json = cli(&fake, &data);
    json.args(["--json", "inbox"]);
    let (_, out, _) = run(json).await;
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["interrupted"][0]["tool_call_id"], 1, "{listed}");
    assert_eq!(listed["total"], 0, "{listed}");
}
