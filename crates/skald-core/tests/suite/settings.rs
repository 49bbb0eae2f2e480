//! Settings through the Engine: clients saved to config.yml, keys in the keychain store,
//! connection tests against a real endpoint, and the approval rule editor's constraints.

use std::sync::Arc;

use skald_core::config::{EnvOverrides, MemorySecrets};
use skald_core::{Engine, EngineOptions};
use skald_protocol::{ApprovalRuleInput, ErrorCode, LlmClientInput, RuleAction};
use skald_testkit::FakeLlm;

async fn open(dir: &std::path::Path) -> Engine {
    Engine::open(EngineOptions {
        data_dir: Some(dir.to_path_buf()),
        env: Some(EnvOverrides::default()),
        secrets: Some(Arc::new(MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap()
}

fn client(name: &str, url: &str) -> LlmClientInput {
    LlmClientInput {
        name: name.into(),
        base_url: url.into(),
        model: "fake-model".into(),
        provider: None,
        api_key_env: None,
        context_window: Some(32_000),
    }
}

#[tokio::test]
async fn clients_are_saved_validated_and_tested() {
    let fake = FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path()).await;
    let view = engine
        .save_llm_clients(
            vec![client("local", &fake.base_url()), client("backup", "http://127.0.0.1:9/v1")],
            vec!["local".into(), "backup".into()],
        )
        .await
        .unwrap();
    assert_eq!(view.fallback, ["local", "backup"]);
    assert!(!view.clients[0].has_api_key);
    let text = std::fs::read_to_string(dir.path().join("config.yml")).unwrap();
    assert!(text.contains(&fake.base_url()), "{text}");
    // A fresh engine on the same dir sees the same clients.
    let again = open(dir.path()).await;
    assert_eq!(again.settings().await.unwrap().clients.len(), 2);

    let bad = engine.save_llm_clients(vec![client("x", "ftp://nope")], vec![]).await.unwrap_err();
    assert_eq!(bad.code(), ErrorCode::InvalidInput);
    assert!(bad.to_string().contains("not an http(s) URL"), "{bad}");
    assert_eq!(std::fs::read_to_string(dir.path().join("config.yml")).unwrap(), text, "unchanged");

    engine.set_api_key("local", Some("sk-secret".into())).await.unwrap();
    let view = engine.settings().await.unwrap();
    assert!(view.clients[0].has_api_key);
    assert!(!serde_json::to_string(&view).unwrap().contains("sk-secret"), "the key never leaves");
    assert!(!std::fs::read_to_string(dir.path().join("config.yml")).unwrap().contains("sk-secret"));

    let ok = engine.test_connection("local").await.unwrap();
    assert!(ok.ok && ok.model_listed, "{ok:?}");
    assert!(ok.models.contains(&"fake-model".to_string()));
    let down = engine.test_connection("backup").await.unwrap();
    assert!(!down.ok && down.error.is_some(), "{down:?}");
    assert_eq!(engine.test_connection("ghost").await.unwrap_err().code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn rules_can_be_edited_but_a_second_catch_all_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path()).await;
    let seeded = engine.approval_rules().await.unwrap();
    assert!(seeded.iter().any(|r| r.seed_key.as_deref() == Some("secrets-deny")));
    let rule = |action, pattern: &str| ApprovalRuleInput {
        group_id: None,
        tool_pattern: pattern.into(),
        path_pattern: None,
        agent_id: None,
        source: None,
        action,
        priority: 999_999,
        note: None,
    };
    let all = engine.save_approval_rule(None, rule(RuleAction::Require, "*")).await.unwrap();
    let clash = engine.save_approval_rule(None, rule(RuleAction::Allow, "*")).await.unwrap_err();
    assert_eq!(clash.code(), ErrorCode::Conflict);
    let edited =
        engine.save_approval_rule(Some(all.id), rule(RuleAction::Allow, "*")).await.unwrap();
    assert_eq!(edited.action, RuleAction::Allow);
    engine.delete_approval_rule(all.id).await.unwrap();
    assert_eq!(engine.delete_approval_rule(all.id).await.unwrap_err().code(), ErrorCode::NotFound);
    // A deleted seed is not brought back by the next start.
    let secrets = seeded.iter().find(|r| r.seed_key.as_deref() == Some("secrets-deny")).unwrap();
    engine.delete_approval_rule(secrets.id).await.unwrap();
    let reopened = open(dir.path()).await;
    assert!(
        !reopened
            .approval_rules()
            .await
            .unwrap()
            .iter()
            .any(|r| r.seed_key.as_deref() == Some("secrets-deny"))
    );
}
