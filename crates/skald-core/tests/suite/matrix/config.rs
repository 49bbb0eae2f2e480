//! `config.yml` broken while the engine runs (the app and `serve` watch it): the last good
//! configuration stays in force, the person is told what is wrong and where, and the file is
//! left as they wrote it. (Broken files at start-up are measured on the real binary, in the CLI
//! crate's matrix.)

use std::sync::Arc;
use std::time::Duration;

use skald_core::config::MemorySecrets;
use skald_core::{Engine, EngineOptions};
use skald_protocol::Event;
use skald_testkit::matrix::{Row, excerpt};
use skald_testkit::{FakeLlm, Reply};

use super::{retry_view, user_view};
use crate::suite::turn::{fake_env, finish};

#[tokio::test]
async fn the_file_broken_while_the_app_runs() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::canonicalize(dir.path()).unwrap();
    let file = data.join("config.yml");
    std::fs::write(&file, "llm:\n  max_tool_rounds: 5\n").unwrap();
    let engine = Engine::open(EngineOptions {
        data_dir: Some(data.clone()),
        env: Some(fake_env(&fake)),
        secrets: Some(Arc::new(MemorySecrets::default())),
        watch_config: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let mut rx = engine.subscribe();
    let broken = "llm:\n  max_tool_rounds: 5\n  fallback: [primary\n";
    std::fs::write(&file, broken).unwrap();
    let reloaded = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Event::ConfigReloaded { ok, error } = rx.recv().await.unwrap().event {
                return (ok, error.unwrap_or_default());
            }
        }
    })
    .await
    .expect("no config_reloaded event after the file changed");
    // The engine goes on with what it had: a turn still reaches the configured model.
    fake.push(Reply::text("still here"));
    let receipt = engine.send_message("test", "are you there?", Default::default()).await.unwrap();
    let (_, outcome) = finish(&engine, receipt).await;
    let after = std::fs::read_to_string(&file).unwrap();
    let mut row = Row::new("config.broken-while-running");
    row.redact(data.display().to_string(), "<data>")
        .user_sees(format!(
            "config_reloaded ok={} error {}; the next turn: {}",
            reloaded.0,
            excerpt(&reloaded.1, 120),
            user_view(&[Event::Done {
                message_id: 0,
                stack_id: 0,
                content: match &outcome {
                    skald_core::turn::TurnOutcome::Final { content, .. } => content.clone(),
                    other => format!("{other:?}"),
                },
                input_tokens: None,
                output_tokens: None,
                cost_usd: None,
            }])
        ))
        .model_sees(format!(
            "the next turn uses the last good configuration: {}",
            retry_view(&fake.requests())
        ))
        .stored(format!("config.yml left as written: {}", after == broken))
        .lost_if(after != broken, "the person's (broken) config.yml")
        .lost_if(engine.config().llm.max_tool_rounds != 5, "the last good configuration");
    if reloaded.0 {
        row.recovered_if(false, "a broken file was reported as loaded");
    } else {
        // The unclosed `[` of line 3 is found where the file ends, at line 4.
        row.clear_error(&reloaded.1, &["config.yml:4", "']'"]);
    }
    row.finish();
}
