use skald_core::config::{self, ConfigError, EnvOverrides};

fn load_text(text: &str, env: EnvOverrides) -> Result<config::Config, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yml"), text).unwrap();
    config::load(dir.path(), &env)
}

#[test]
fn a_missing_file_gives_the_documented_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let c = config::load(dir.path(), &EnvOverrides::default()).unwrap();
    assert_eq!(c.llm.max_tool_rounds, 20);
    assert_eq!(c.llm.max_history_messages, 30);
    assert_eq!(c.llm.max_parallel_subagents, 4);
    assert_eq!(c.llm.max_tool_result_chars, None);
    assert!(c.llm.clients.is_empty());
}

#[test]
fn the_shipped_default_file_parses() {
    let c = load_text(config::default_config_text(), EnvOverrides::default()).unwrap();
    assert!(c.llm.clients.is_empty());
}

#[test]
fn a_full_file_parses_and_orders_clients_by_fallback() {
    let c = load_text(
        "llm:\n  clients:\n    - name: a\n      base_url: http://127.0.0.1:1/v1\n      model: m1\n\
         \x20   - name: b\n      base_url: https://example.invalid/v1\n      model: m2\n      \
         api_key_env: B_KEY\n      strength: high\n  fallback: [b, a]\n  max_tool_rounds: 7\n  \
         max_tool_result_chars: 500\ntimezone: Europe/Rome\n",
        EnvOverrides::default(),
    )
    .unwrap();
    let order: Vec<_> = c.ordered_clients().iter().map(|c| c.name.clone()).collect();
    assert_eq!(order, ["b", "a"]);
    assert_eq!(c.llm.max_tool_rounds, 7);
    assert_eq!(c.llm.max_tool_result_chars, Some(500));
    assert_eq!(c.timezone.as_deref(), Some("Europe/Rome"));
}

#[test]
fn a_wrong_type_names_file_line_and_field() {
    let err = load_text("llm:\n  max_tool_rounds: lots\n", EnvOverrides::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("config.yml:2:"), "{msg}");
    assert!(msg.contains("llm.max_tool_rounds"), "{msg}");
    assert!(!msg.contains('\n'), "one line: {msg}");
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    let err = load_text("llm:\n  max_tool_round: 3\n", EnvOverrides::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("config.yml:2:"), "{msg}");
    assert!(msg.contains("unknown field `max_tool_round`"), "{msg}");
}

#[test]
fn a_fallback_to_an_unknown_client_names_its_line() {
    let err = load_text(
        "llm:\n  clients:\n    - name: a\n      base_url: http://x/v1\n      model: m\n  \
         fallback: [a, ghost]\n",
        EnvOverrides::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("config.yml:6:"), "{msg}");
    assert!(msg.contains("`ghost`"), "{msg}");
}

#[test]
fn duplicate_client_names_and_bad_urls_are_rejected() {
    let dup = "llm:\n  clients:\n    - {name: a, base_url: 'http://x/v1', model: m}\n    - {name: a, \
               base_url: 'http://y/v1', model: m}\n";
    assert!(
        load_text(dup, EnvOverrides::default()).unwrap_err().to_string().contains("used twice")
    );
    let url = "llm:\n  clients:\n    - {name: a, base_url: 'ftp://x', model: m}\n";
    let msg = load_text(url, EnvOverrides::default()).unwrap_err().to_string();
    assert!(msg.contains("not an http(s) URL") && msg.contains("config.yml:3:"), "{msg}");
}

#[test]
fn env_overrides_put_an_env_client_first() {
    let env = EnvOverrides {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        model: Some("fake".into()),
        api_key: Some("sk-test".into()),
    };
    let c = load_text(
        "llm:\n  clients:\n    - {name: a, base_url: 'http://x/v1', model: m}\n  fallback: [a]\n",
        env,
    )
    .unwrap();
    let first = c.ordered_clients()[0].clone();
    assert_eq!((first.name.as_str(), first.model.as_str()), ("env", "fake"));
    assert_eq!(first.api_key_env.as_deref(), Some("SKALD_LLM_API_KEY"));
    assert_eq!(c.llm.fallback, ["env", "a"]);
}

#[test]
fn a_file_over_a_megabyte_is_refused_without_being_parsed() {
    let comment = "# a line that does not belong in a configuration file at all\n";
    let fill = |bytes: usize| comment.repeat(bytes / comment.len());
    let valid = "llm:\n  max_tool_rounds: 7\n";
    // Just under the limit: loads as usual.
    let under = format!("{}{valid}", fill(config::MAX_CONFIG_BYTES as usize - 100));
    assert_eq!(load_text(&under, EnvOverrides::default()).unwrap().llm.max_tool_rounds, 7);
    // Over it: a clear error, however valid the YAML.
    let over = format!("{}{valid}", fill(3 * 1024 * 1024));
    let msg = load_text(&over, EnvOverrides::default()).unwrap_err().to_string();
    assert!(msg.contains("config.yml") && msg.contains("3.0 MB"), "{msg}");
    assert!(msg.contains("at most 1 MB"), "{msg}");
}

/// The commented `sources:` and `notifications:` examples of the shipped file parse once
/// uncommented; a misspelt key or an engine key in `substitutions` is an error with its line.
#[test]
fn sources_and_notification_retention_parse_and_mistakes_name_their_line() {
    let example: String = config::default_config_text()
        .lines()
        .skip_while(|l| !l.starts_with("# notifications:"))
        .take_while(|l| !l.starts_with("# memory:"))
        .map(|l| format!("{}\n", l.strip_prefix("# ").unwrap_or(l)))
        .collect();
    let c = load_text(&example, EnvOverrides::default()).unwrap();
    assert_eq!(c.notifications.retention_days, 30);
    let cli = c.source_context("cli");
    assert_eq!(cli.system.as_deref(), Some("Plain text for a terminal."));
    assert_eq!(cli.tail_reminder.as_deref(), Some("No Markdown."));
    assert_eq!(cli.substitutions.get("TEAM").map(String::as_str), Some("platform"));
    // `web` keeps its built-in line.
    assert!(c.source_context("web").system.unwrap().contains("Markdown"));

    let typo = load_text("sources:\n  cli:\n    reminder: x\n", EnvOverrides::default());
    assert!(matches!(typo, Err(ConfigError::Invalid { .. })), "{typo:?}");
    let engine_key = load_text(
        "sources:\n  web:\n    substitutions:\n      WD: /tmp\n",
        EnvOverrides::default(),
    )
    .unwrap_err();
    let ConfigError::Invalid { line, message, .. } = engine_key else { panic!("{engine_key:?}") };
    assert_eq!(line, 4, "{message}");
    assert!(message.contains("filled by Skald itself"), "{message}");
}
