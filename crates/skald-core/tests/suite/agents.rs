//! Agent definitions: built-ins, user folders over them, broken files isolated, changes on disk
//! picked up, saving and deleting, and what a session with a broken agent does.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use skald_core::agents::{self, AgentError, AgentKind, AgentMeta, Registry};
use skald_core::config::{EnvOverrides, MemorySecrets};
use skald_core::engine::ChatOptions;
use skald_core::turn::TurnOutcome;
use skald_core::{Engine, EngineOptions};
use skald_protocol::ErrorCode;

fn write_agent(data: &Path, id: &str, meta: serde_json::Value, prompt: Option<&str>) {
    let dir = data.join("agents").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    if let Some(prompt) = prompt {
        std::fs::write(dir.join("AGENT.md"), prompt).unwrap();
    }
}

fn meta(kind: &str, description: &str) -> serde_json::Value {
    json!({ "name": "N", "description": description, "type": kind })
}

fn dispatchable_ids(data: &Path) -> Vec<String> {
    agents::dispatchable(data).into_iter().map(|a| a.id).collect()
}

fn error_of(data: &Path, id: &str) -> String {
    let registry = Registry::current(data);
    let entry = registry.get(id).unwrap_or_else(|| panic!("{id} is listed"));
    entry.agent.as_ref().unwrap_err().to_string()
}

#[test]
fn a_fresh_data_dir_has_a_chat_main_and_a_task_generalist_to_delegate_to() {
    let dir = tempfile::tempdir().unwrap();
    let main = agents::load(dir.path(), "main").unwrap();
    assert_eq!(main.meta.kind, AgentKind::Chat);
    assert!(main.prompt.contains("- **generalist** — A general-purpose worker"), "{}", main.prompt);
    assert!(!main.prompt.contains("AGENTS_LIST"), "the directive is resolved");
    let generalist = agents::load(dir.path(), "generalist").unwrap();
    assert_eq!(generalist.meta.kind, AgentKind::Task);
    assert_eq!(dispatchable_ids(dir.path()), ["generalist"]);
    let registry = Registry::current(dir.path());
    assert!(registry.entries().all(|e| e.built_in && !e.overrides_built_in));
    assert!(
        matches!(agents::load(dir.path(), "nobody"), Err(AgentError::NotFound(id)) if id == "nobody")
    );
}

#[test]
fn user_folders_add_agents_and_override_built_ins_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    write_agent(data, "main", meta("chat", "my main"), Some("Mine. Team:\n<!-- AGENTS_LIST -->"));
    write_agent(data, "reviewer", meta("task", "reviews a diff"), Some("Review."));
    write_agent(data, "tic", meta("system", "wired by id"), Some("Watch."));
    write_agent(data, "buddy", meta("chat", "another chat agent"), Some("Hi."));
    let main = agents::load(data, "main").unwrap();
    assert_eq!(main.meta.description, "my main");
    assert_eq!(
        main.prompt,
        "Mine. Team:\n- **generalist** — A general-purpose worker for a self-contained task \
         (research a question, change some files, run and check commands); give it a complete \
         brief, it returns a report of what it did and found.\n- **reviewer** — reviews a diff"
    );
    // Only task agents are dispatchable: chat and system agents never are.
    assert_eq!(dispatchable_ids(data), ["generalist", "reviewer"]);
    let registry = Registry::current(data);
    let main_entry = registry.get("main").unwrap();
    assert!(!main_entry.built_in && main_entry.overrides_built_in);
    let ids: Vec<&str> = registry.entries().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["buddy", "generalist", "main", "reviewer", "tic"]);
}

#[test]
fn a_malformed_agent_is_an_error_naming_its_file_and_the_others_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let agents_dir = data.join("agents");
    write_agent(
        data,
        "good",
        meta("task", "works"),
        Some("Fine. <!-- INCLUDE: common/rules.md -->"),
    );
    std::fs::create_dir_all(agents_dir.join("common")).unwrap();
    std::fs::write(agents_dir.join("common/rules.md"), "Be brief.").unwrap();
    std::fs::create_dir_all(agents_dir.join("bad-json")).unwrap();
    std::fs::write(agents_dir.join("bad-json/meta.json"), "{ \"name\": ").unwrap();
    std::fs::write(agents_dir.join("bad-json/AGENT.md"), "x").unwrap();
    write_agent(data, "bad-type", meta("helper", "unknown type"), Some("x"));
    write_agent(data, "no-prompt", meta("task", "has no AGENT.md"), None);
    write_agent(
        data,
        "bad-include",
        meta("task", "includes a gone file"),
        Some("<!-- INCLUDE: common/gone.md -->"),
    );
    // A folder of fragments (neither file) and `common/` are not agents.
    std::fs::create_dir_all(agents_dir.join("fragments")).unwrap();
    std::fs::write(agents_dir.join("fragments/part.md"), "part").unwrap();

    let meta_of = |id: &str| agents_dir.join(id).join("meta.json").display().to_string();
    let prompt_of = |id: &str| agents_dir.join(id).join("AGENT.md").display().to_string();
    let bad_json = error_of(data, "bad-json");
    assert!(bad_json.contains(&meta_of("bad-json")), "{bad_json}");
    let bad_type = error_of(data, "bad-type");
    assert!(bad_type.contains(&meta_of("bad-type")) && bad_type.contains("helper"), "{bad_type}");
    let no_prompt = error_of(data, "no-prompt");
    assert!(
        no_prompt.contains(&prompt_of("no-prompt")) && no_prompt.contains("missing"),
        "{no_prompt}"
    );
    let bad_include = error_of(data, "bad-include");
    assert!(bad_include.contains(&prompt_of("bad-include")), "{bad_include}");
    assert!(bad_include.contains("common/gone.md"), "{bad_include}");
    assert!(matches!(agents::load(data, "bad-include"), Err(AgentError::Invalid { .. })));

    assert_eq!(agents::load(data, "good").unwrap().prompt, "Fine. Be brief.");
    assert_eq!(
        dispatchable_ids(data),
        ["generalist", "good"],
        "broken task agents are not offered"
    );
    let main = agents::load(data, "main").unwrap();
    assert!(main.prompt.contains("**good**") && !main.prompt.contains("bad-include"));
    let registry = Registry::current(data);
    assert!(registry.get("fragments").is_none() && registry.get("common").is_none());
    // What parsed is still shown for a broken agent.
    assert_eq!(
        registry.get("no-prompt").unwrap().meta.as_ref().unwrap().description,
        "has no AGENT.md"
    );
}

#[test]
fn changes_on_disk_are_picked_up_on_the_next_load() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    write_agent(data, "helper", meta("task", "first"), Some("One."));
    assert_eq!(agents::load(data, "helper").unwrap().meta.description, "first");
    let unchanged = Registry::current(data);
    assert!(
        Arc::ptr_eq(&unchanged, &Registry::current(data)),
        "nothing changed: the same registry"
    );

    write_agent(data, "helper", meta("chat", "second, now a chat agent"), Some("Two."));
    let helper = agents::load(data, "helper").unwrap();
    assert_eq!(
        (helper.meta.description.as_str(), helper.prompt.as_str()),
        ("second, now a chat agent", "Two.")
    );
    assert_eq!(dispatchable_ids(data), ["generalist"]);

    // An included fragment is watched too.
    std::fs::create_dir_all(data.join("agents/common")).unwrap();
    std::fs::write(data.join("agents/common/x.md"), "v1").unwrap();
    std::fs::write(data.join("agents/helper/AGENT.md"), "<!-- INCLUDE: common/x.md -->").unwrap();
    assert_eq!(agents::load(data, "helper").unwrap().prompt, "v1");
    std::fs::write(data.join("agents/common/x.md"), "version 2").unwrap();
    assert_eq!(agents::load(data, "helper").unwrap().prompt, "version 2");

    std::fs::remove_dir_all(data.join("agents/helper")).unwrap();
    assert!(matches!(agents::load(data, "helper"), Err(AgentError::NotFound(_))));
}

fn sample_meta(kind: AgentKind) -> AgentMeta {
    serde_json::from_value(json!({ "name": "Scout", "description": "looks around", "type": kind }))
        .unwrap()
}

#[test]
fn save_writes_both_files_after_checking_everything_and_delete_restores_a_built_in() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    agents::save(data, "scout", &sample_meta(AgentKind::Task), "Look <!-- WD -->.").unwrap();
    let scout = agents::load(data, "scout").unwrap();
    assert_eq!(
        (scout.prompt.as_str(), scout.substitution_keys.as_slice()),
        ("Look __WD__.", &["WD".to_string()][..])
    );
    let written: AgentMeta = serde_json::from_str(
        &std::fs::read_to_string(data.join("agents/scout/meta.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(written, sample_meta(AgentKind::Task));

    for bad in ["Scout", "a_b", "", "../x", "common"] {
        let err = agents::save(data, bad, &sample_meta(AgentKind::Task), "x").unwrap_err();
        assert!(matches!(err, AgentError::InvalidId(_)), "{bad}: {err}");
    }
    let mut empty = sample_meta(AgentKind::Task);
    empty.description = " ".into();
    let err = agents::save(data, "blank", &empty, "x").unwrap_err();
    assert!(err.to_string().contains("description"), "{err}");
    let err =
        agents::save(data, "blank", &sample_meta(AgentKind::Task), "<!-- INCLUDE: gone.md -->")
            .unwrap_err();
    assert!(err.to_string().contains("gone.md"), "{err}");
    assert!(!data.join("agents/blank").exists(), "nothing is written for a refused save");

    agents::save(data, "main", &sample_meta(AgentKind::Chat), "My own main.").unwrap();
    assert_eq!(agents::load(data, "main").unwrap().prompt, "My own main.");
    agents::delete(data, "main").unwrap();
    assert!(agents::load(data, "main").unwrap().prompt.contains("You are Skald"));
    assert!(matches!(agents::delete(data, "main"), Err(AgentError::BuiltIn(_))));
    assert!(matches!(agents::delete(data, "nobody"), Err(AgentError::NotFound(_))));
    agents::delete(data, "scout").unwrap();
    assert!(matches!(agents::load(data, "scout"), Err(AgentError::NotFound(_))));
}

async fn engine(data: &Path, fake: &skald_testkit::FakeLlm) -> Engine {
    Engine::open(EngineOptions {
        data_dir: Some(data.to_path_buf()),
        env: Some(EnvOverrides {
            base_url: Some(fake.base_url()),
            model: Some("fake-model".into()),
            api_key: None,
        }),
        secrets: Some(Arc::new(MemorySecrets::default())),
        ..Default::default()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_new_session_runs_the_chosen_agent_and_a_broken_agent_fails_its_turn_with_the_file() {
    let fake = skald_testkit::FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let engine = engine(data, &fake).await;
    write_agent(data, "buddy", meta("chat", "a friend"), Some("Be kind."));
    write_agent(data, "tic", meta("system", "wired by id"), Some("Watch."));

    let id = engine.new_session_with_agent("web", Some("buddy")).await.unwrap();
    assert_eq!(engine.session_detail(id).await.unwrap().session.agent_id, "buddy");
    let task = engine.new_session_with_agent("web", Some("generalist")).await.unwrap();
    assert_eq!(engine.session_detail(task).await.unwrap().session.agent_id, "generalist");
    let system = engine.new_session_with_agent("web", Some("tic")).await.unwrap_err();
    assert_eq!(system.code(), ErrorCode::InvalidInput);
    let unknown = engine.new_session_with_agent("web", Some("nobody")).await.unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::NotFound);

    let id = engine.new_session_with_agent("web", Some("buddy")).await.unwrap();
    std::fs::write(data.join("agents/buddy/AGENT.md"), "<!-- INCLUDE: common/gone.md -->").unwrap();
    let refused = engine.new_session_with_agent("web", Some("buddy")).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Config);
    let receipt = engine.send_message("web", "hello", ChatOptions::default()).await.unwrap();
    assert_eq!(receipt.session_id, id);
    let outcome = engine.wait_turn(receipt.session_id).await.unwrap();
    let TurnOutcome::Failed { message } = outcome else { panic!("{outcome:?}") };
    assert!(
        message.contains(&data.join("agents/buddy/AGENT.md").display().to_string()),
        "{message}"
    );
    assert!(message.contains("common/gone.md"), "{message}");
    assert_eq!(fake.requests().len(), 0, "the model is never asked with a broken agent");
}

#[tokio::test]
async fn saving_a_definition_with_a_mistake_is_invalid_input_and_writes_nothing() {
    let fake = skald_testkit::FakeLlm::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let engine = engine(data, &fake).await;
    let good = engine.get_agent("generalist").await.unwrap().meta.unwrap();

    let mut nameless = good.clone();
    nameless.name = "  ".into();
    let err = engine.save_agent("scout", nameless, "Look.").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput, "{err}");
    let err =
        engine.save_agent("scout", good.clone(), "<!-- INCLUDE: gone.md -->").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput, "{err}");
    assert!(err.to_string().contains("gone.md"), "{err}");
    let err = engine.save_agent("Bad Id", good.clone(), "Look.").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput, "{err}");
    assert!(!data.join("agents/scout").exists(), "nothing is written for a refused save");

    let saved = engine.save_agent("scout", good, "Look.").await.unwrap();
    assert_eq!((saved.id.as_str(), saved.error), ("scout", None));
}
