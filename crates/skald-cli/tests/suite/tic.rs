//! `skald tic` as processes: with events stored and no app running, `tic run` runs the tick in
//! its own process to its end (one model request), `tic list` shows it; with nothing new a tick
//! asks no model.

use serde_json::{Value, json};
use skald_store::repo::tic::NewMcpEvent;
use skald_testkit::{FakeLlm, Reply};

use super::chat::{cli, dirs, run};

async fn skald(fake: &FakeLlm, data: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = cli(fake, data);
    cmd.args(args);
    run(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tic_run_runs_a_tick_on_stored_events_and_none_without() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, _work) = dirs();
    // Nothing stored: no tick is needed, no model is asked.
    let (code, out, err) = skald(&fake, &data, &["tic", "run"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nothing new, no model was asked"), "{out}");
    assert!(fake.requests().is_empty());

    let store = skald_store::Store::open_in_dir(&data).await.unwrap();
    let event = NewMcpEvent {
        server: "mail".into(),
        method: "event/new_email".into(),
        params: Some(json!({ "subject": "CLI-TICK quarterly report" }).to_string()),
        received_at: "2026-05-04T10:00:00.000Z".into(),
    };
    store.insert_mcp_events(&[event], 100, 100).await.unwrap();
    drop(store);
    fake.push_for_prompt("CLI-TICK", Reply::text("one email: the quarterly report"));
    let (code, out, err) = skald(&fake, &data, &["tic", "run"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("started in session") && out.contains("done"), "{out}");
    assert_eq!(fake.requests().len(), 1);

    let (code, out, _) = skald(&fake, &data, &["--json", "tic", "list"]).await;
    assert_eq!(code, 0);
    let status: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["pending_events"], 0);
    assert_eq!(status["ticks"].as_array().unwrap().len(), 1);
    assert_eq!(status["ticks"][0]["state"], "done");
    assert_eq!(status["ticks"][0]["servers"], json!(["mail"]));
    fake.assert_script_consumed();
}
