//! `skald jobs` as processes: a job is added with its schedule checked and explained, listed,
//! run now in the command's own process to its end, its runs listed, disabled and deleted; a
//! title carrying terminal escapes is shown escaped.

use serde_json::Value;
use skald_testkit::{FakeLlm, Reply};

use super::chat::{cli, dirs, run};
use super::tasks::scout_agent;

async fn skald(fake: &FakeLlm, data: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = cli(fake, data);
    cmd.args(args);
    run(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_is_added_run_now_to_its_end_listed_and_deleted() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    scout_agent(&data);
    let work_s = work.display().to_string();

    let preview = ["jobs", "preview", "--cron", "0 0 9 * * 1-5 *", "--tz", "Europe/Berlin"];
    let (code, out, err) = skald(&fake, &data, &preview).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next(), Some("every weekday at 09:00, Europe/Berlin"), "{out}");
    assert_eq!(out.lines().count(), 6, "the next five fire times: {out}");

    let bad = ["jobs", "add", "--title", "t", "--cron", "0 9 * * *", "--agent", "scout"];
    let (code, _, err) = skald(&fake, &data, &[&bad[..], &["--prompt", "p"]].concat()).await;
    assert_eq!(code, 1);
    assert!(err.contains("seven fields"), "{err}");

    let add = [
        "--json",
        "jobs",
        "add",
        "--title",
        "Nightly \u{1b}[2Jreport",
        "--cron",
        "0 0 3 * * * *",
        "--tz",
        "UTC",
        "--agent",
        "scout",
        "--prompt",
        "JOB-CLI: count the files",
        "--workdir",
        &work_s,
        "--approval-timeout",
        "600",
    ];
    let (code, out, err) = skald(&fake, &data, &add).await;
    assert_eq!(code, 0, "{err}");
    let job: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(job["id"], 1);
    assert_eq!(job["description"], "every day at 03:00, UTC");
    assert_eq!(job["run_context"]["working_directory"], work_s.as_str());
    assert_eq!(job["policies"]["approval_timeout_secs"], 600);

    let (code, out, _) = skald(&fake, &data, &["jobs", "list"]).await;
    assert_eq!(code, 0);
    let row = out.lines().nth(1).unwrap();
    assert!(row.starts_with("1     yes") && row.contains("T03:00:00.000Z"), "{out}");
    assert!(row.contains("Nightly \\e[2Jreport") && !out.contains('\u{1b}'), "{out}");

    fake.push_for_prompt("JOB-CLI", Reply::text("There are 3 files."));
    let (code, out, err) = skald(&fake, &data, &["jobs", "run", "1"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("run 1 started in session 1"), "{out}");
    assert!(out.lines().last().unwrap().starts_with("1      done"), "{out}");

    let (code, out, _) = skald(&fake, &data, &["--json", "jobs", "runs", "1"]).await;
    assert_eq!(code, 0);
    let runs: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(runs[0]["state"], "done");
    assert_eq!(runs[0]["manual"], true);
    assert_eq!(runs[0]["session_id"], 1);

    let (code, out, _) = skald(&fake, &data, &["jobs", "disable", "1"]).await;
    assert_eq!(code, 0);
    assert!(out.starts_with("1     no       -"), "{out}");
    let (code, _, err) = skald(&fake, &data, &["jobs", "kill", "1"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("has ended already"), "{err}");
    let (code, out, _) = skald(&fake, &data, &["jobs", "rm", "1"]).await;
    assert_eq!(code, 0);
    assert!(out.contains("its runs are kept"), "{out}");
    assert!(out.contains("skald jobs runs 1"), "says where the runs are: {out}");
    let (_, out, _) = skald(&fake, &data, &["jobs", "list"]).await;
    assert_eq!(out.lines().count(), 1, "only the header: {out}");
    // The deleted job's kept runs are still there to read.
    let (code, out, err) = skald(&fake, &data, &["jobs", "runs", "1"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().nth(1).is_some_and(|l| l.starts_with("1      done")), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_job_names_the_field_that_is_wrong() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, _work) = dirs();
    scout_agent(&data);
    let base = ["jobs", "add", "--title", "t", "--agent", "scout", "--prompt", "p"];
    let cases: [(&[&str], &str); 3] = [
        (
            &["--cron", "0 0 9 * * * *", "--tz", "Europe/Berln"],
            "timezone: unknown time zone \"Europe/Berln\"",
        ),
        (&["--every", "5"], "schedule: an interval must be between 60 seconds"),
        (
            &["--cron", "0 0 9 * * * *", "--tz", "UTC", "--approval-timeout", "0"],
            "policies.approval_timeout_secs: ",
        ),
    ];
    for (args, want) in cases {
        let (code, _, err) = skald(&fake, &data, &[&base[..], args].concat()).await;
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
