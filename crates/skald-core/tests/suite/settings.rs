//! Settings through the Engine: clients saved to config.yml, keys in the keychain store,
//! connection tests against a real endpoint, and the approval rule editor's constraints.

use std::sync::Arc;

use skald_core::config::{self, EnvOverrides, MemorySecrets};
use skald_core::{Engine, EngineOptions};
use skald_protocol::{ApprovalRuleInput, ErrorCode, LlmClientInput, LlmClientView, RuleAction};
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
        previous_name: None,
        name: name.into(),
        base_url: url.into(),
        model: "fake-model".into(),
        provider: None,
        api_key_env: None,
        context_window: Some(32_000),
        stream: None,
    }
}

/// What the settings page sends back for a client it shows (ClientsSection's `toInput`).
fn as_input(c: &LlmClientView) -> LlmClientInput {
    LlmClientInput {
        previous_name: Some(c.name.clone()),
        name: c.name.clone(),
        base_url: c.base_url.clone(),
        model: c.model.clone(),
        provider: c.provider.clone(),
        api_key_env: c.api_key_env.clone(),
        context_window: c.context_window,
        stream: Some(c.stream),
    }
}

const COMMENTED: &str = "\
# Hand-written; the settings page must not lose this.
llm:
  clients:
    # on this machine
    - name: local
      base_url: http://127.0.0.1:9/v1   # llama.cpp
      model: smollm2
      strength: low
      scope: [coding, summaries]
      context_window: 8192
      extra_params:
        temperature: 0.1   # deterministic
      stream: false
    - name: hosted
      base_url: https://example.invalid/v1
      model: big-model
      api_key_env: HOSTED_KEY
  max_tool_rounds: 9   # enough
timezone: UTC
";

async fn page_save(engine: &Engine, clients: Vec<LlmClientInput>) -> String {
    let order = clients.iter().map(|c| c.name.clone()).collect();
    // As the page does: the revision of the view the list came from.
    let revision = engine.settings().await.unwrap().revision;
    engine.save_llm_clients(clients, order, Some(&revision)).await.unwrap();
    std::fs::read_to_string(engine.data_dir().join("config.yml")).unwrap()
}

#[tokio::test]
async fn the_page_edits_one_client_and_leaves_the_rest_of_the_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yml"), COMMENTED).unwrap();
    let engine = open(dir.path()).await;
    let view = engine.settings().await.unwrap();
    assert!(!view.clients[0].stream && view.clients[1].stream, "{view:?}");

    // Edit `local`'s model: only that value changes; strength, scope, extra_params,
    // context_window, stream and every comment stay.
    let mut page: Vec<LlmClientInput> = view.clients.iter().map(as_input).collect();
    page[0].model = "smollm2-360m".into();
    let text = page_save(&engine, page.clone()).await;
    assert_eq!(text, COMMENTED.replacen("model: smollm2\n", "model: smollm2-360m\n", 1));
    let cfg = config::load(dir.path(), &EnvOverrides::default()).unwrap();
    let local = &cfg.llm.clients[0];
    assert_eq!(local.strength, Some(config::Strength::Low));
    assert_eq!(local.scope, ["coding", "summaries"]);
    assert_eq!(local.context_window, Some(8192));
    assert_eq!(local.extra_params, Some(serde_json::json!({"temperature": 0.1})));
    assert!(!local.streams());

    // Add a client: appended after the last one, nothing else touched.
    let before = text;
    page.push(client("third", "http://127.0.0.1:10/v1"));
    let text = page_save(&engine, page.clone()).await;
    let added = "    - name: third\n      base_url: http://127.0.0.1:10/v1\n      model: fake-model\n      context_window: 32000\n";
    assert_eq!(text, before.replacen("  max_tool_rounds", &format!("{added}  max_tool_rounds"), 1));

    // Remove `hosted`: its four lines go, nothing else.
    page.retain(|c| c.name != "hosted");
    let text = page_save(&engine, page).await;
    let hosted = "    - name: hosted\n      base_url: https://example.invalid/v1\n      model: big-model\n      api_key_env: HOSTED_KEY\n";
    assert_eq!(
        text,
        before.replacen(hosted, "", 1).replacen(
            "  max_tool_rounds",
            &format!("{added}  max_tool_rounds"),
            1
        )
    );
    assert_eq!(engine.settings().await.unwrap().fallback, ["local", "third"]);
}

#[tokio::test]
async fn a_broken_file_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path()).await;
    let broken = "llm:\n  max_tool_rounds: lots   # oops\n";
    std::fs::write(dir.path().join("config.yml"), broken).unwrap();
    let err = engine
        .save_llm_clients(vec![client("a", "http://127.0.0.1:9/v1")], vec![], None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config);
    let message = err.to_string();
    assert!(
        message.contains("config.yml:2:") && message.contains("llm.max_tool_rounds"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("config.yml")).unwrap(), broken);
}

#[tokio::test]
async fn a_file_the_page_cannot_edit_in_place_is_a_configuration_error_not_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path()).await;
    let inline = "llm: {max_tool_rounds: 30}\n";
    std::fs::write(dir.path().join("config.yml"), inline).unwrap();
    let err = engine
        .save_llm_clients(vec![client("a", "http://127.0.0.1:9/v1")], vec![], None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config, "{err}");
    assert!(err.to_string().contains("by hand"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.path().join("config.yml")).unwrap(), inline);
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
            None,
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

    let bad =
        engine.save_llm_clients(vec![client("x", "ftp://nope")], vec![], None).await.unwrap_err();
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

#[tokio::test]
async fn the_rule_editor_shows_an_unknown_stored_action_as_the_deny_the_gate_applies() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()).await);
    super::write_unchecked(dir.path(), super::UNKNOWN_ACTION_RULE).await;
    let engine = open(dir.path()).await;
    let rules = engine.approval_rules().await.unwrap();
    let unknown =
        rules.iter().find(|r| r.priority == 1 && r.tool_pattern == "execute_cmd").unwrap();
    assert_eq!(unknown.action, RuleAction::Deny);
    // Saved from the page as shown, it becomes a known Deny.
    let input = ApprovalRuleInput {
        group_id: Some(unknown.group_id.clone()),
        tool_pattern: unknown.tool_pattern.clone(),
        path_pattern: None,
        agent_id: None,
        source: None,
        action: unknown.action,
        priority: unknown.priority,
        note: None,
    };
    let saved = engine.save_approval_rule(Some(unknown.id), input).await.unwrap();
    assert_eq!(saved.action, RuleAction::Deny);
}

#[tokio::test]
async fn a_rule_seeded_for_the_retired_restart_tool_is_removed_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    // A data dir an earlier build seeded, with its rule for the `restart` tool.
    let store = skald_store::Store::open_in_dir(dir.path()).await.unwrap();
    let restart = skald_store::repo::approvals::RuleSeed {
        key: "restart-require",
        tool_pattern: "restart",
        path_pattern: None,
        action: RuleAction::Require,
        priority: 10,
        note: "restarting Skald",
    };
    store.seed_rules(&[restart]).await.unwrap();
    assert_eq!(store.rules("default").await.unwrap().len(), 1);
    drop(store);
    let engine = open(dir.path()).await;
    let rules = engine.approval_rules().await.unwrap();
    assert!(!rules.iter().any(|r| r.tool_pattern == "restart"), "{rules:?}");
    assert!(rules.iter().any(|r| r.seed_key.as_deref() == Some("secrets-deny")), "{rules:?}");
    let fresh = tempfile::tempdir().unwrap();
    let rules = open(fresh.path()).await.approval_rules().await.unwrap();
    assert!(!rules.iter().any(|r| r.tool_pattern == "restart"), "never seeded: {rules:?}");
}

#[tokio::test]
async fn a_renamed_client_keeps_its_api_key() {
    use skald_core::config::SecretStore;
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    let engine = Engine::open(EngineOptions {
        data_dir: Some(dir.path().to_path_buf()),
        env: Some(EnvOverrides::default()),
        secrets: Some(secrets.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    page_save(&engine, vec![client("work", "http://127.0.0.1:9/v1")]).await;
    engine.set_api_key("work", Some("sk-kept".into())).await.unwrap();

    let shown = engine.settings().await.unwrap().clients;
    let mut renamed = as_input(&shown[0]);
    renamed.name = "office".into();
    let text = page_save(&engine, vec![renamed]).await;
    assert!(text.contains("name: office") && !text.contains("name: work"), "{text}");

    let view = engine.settings().await.unwrap();
    assert_eq!((view.clients[0].name.as_str(), view.clients[0].has_api_key), ("office", true));
    assert_eq!(secrets.get("office").unwrap().as_deref(), Some("sk-kept"));
    assert_eq!(secrets.get("work").unwrap(), None, "no key is left under the old name");
}

#[tokio::test]
async fn a_save_from_a_stale_page_is_refused_and_the_hand_added_client_stays() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path()).await;
    page_save(&engine, vec![client("work", "http://127.0.0.1:9/v1")]).await;
    let page = engine.settings().await.unwrap();

    // Someone adds a client by hand while the page is open.
    let path = dir.path().join("config.yml");
    let by_hand = std::fs::read_to_string(&path).unwrap().replace(
        "  clients:\n",
        "  clients:\n    - name: laptop\n      base_url: http://127.0.0.1:8/v1\n      model: m\n",
    );
    assert!(by_hand.contains("laptop"), "{by_hand}");
    std::fs::write(&path, &by_hand).unwrap();

    // The page still shows only `work` and saves its list with the revision it read.
    let mut edited = as_input(&page.clients[0]);
    edited.model = "other".into();
    let err = engine
        .save_llm_clients(vec![edited.clone()], vec!["work".into()], Some(&page.revision))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert!(err.to_string().contains("changed since"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), by_hand, "nothing was written");

    // Reloaded (the app's watcher reloads the file; here a fresh engine reads it), the page
    // sees both and its save goes through.
    let engine = open(dir.path()).await;
    let fresh = engine.settings().await.unwrap();
    assert_ne!(fresh.revision, page.revision);
    let saved = engine
        .save_llm_clients(
            vec![as_input(&fresh.clients[0]), as_input(&fresh.clients[1])],
            fresh.fallback.clone(),
            Some(&fresh.revision),
        )
        .await
        .unwrap();
    assert_eq!(saved.clients.len(), 2, "{saved:?}");
}
