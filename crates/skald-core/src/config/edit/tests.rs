//! Edits of commented files: exactly the changed bytes differ, and the result parses as intended.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use super::{ClientEdit, MergeError, merge_clients};
use crate::config::{ClientConfig, Config, parse_text};

const FILE: &str = "\
# My Skald settings. Keep this comment.
llm:
  # Clients, cheapest first.
  clients:
    - name: local        # the box under the desk
      base_url: http://127.0.0.1:11434/v1
      model: qwen2.5-coder:14b
      strength: low
      scope: [coding]
      context_window: 32768   # measured
      extra_params:
        # sampling for this model only
        temperature: 0.2
        top_k: 40
    # The hosted one.
    - name: openrouter
      provider: openrouter
      base_url: https://openrouter.ai/api/v1
      model: anthropic/claude-sonnet-4
      api_key_env: OPENROUTER_API_KEY

  fallback: [openrouter, local]   # hosted first
  max_tool_rounds: 12
  request_log:
    enabled: true
timezone: Europe/Rome   # where I live
";

fn path() -> &'static Path {
    Path::new("/data/config.yml")
}

fn parse(text: &str) -> Config {
    parse_text(path(), text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The page's view of every client of `text`, as it sends them back unchanged.
fn as_page(text: &str) -> Vec<ClientEdit> {
    parse(text).ordered_clients().into_iter().map(page_client).collect()
}

fn page_client(c: &ClientConfig) -> ClientEdit {
    ClientEdit {
        previous_name: Some(c.name.clone()),
        name: c.name.clone(),
        base_url: c.base_url.clone(),
        model: c.model.clone(),
        provider: c.provider.clone(),
        api_key_env: c.api_key_env.clone(),
        context_window: c.context_window,
        stream: Some(c.streams()),
    }
}

fn new_client(name: &str) -> ClientEdit {
    ClientEdit {
        previous_name: None,
        name: name.into(),
        base_url: "http://127.0.0.1:8080/v1".into(),
        model: "smollm2".into(),
        provider: None,
        api_key_env: None,
        context_window: None,
        stream: Some(true),
    }
}

fn names(edits: &[ClientEdit]) -> Vec<String> {
    edits.iter().map(|c| c.name.clone()).collect()
}

fn merge(text: &str, edits: &[ClientEdit]) -> Result<String, MergeError> {
    merge_clients(path(), text, &parse(text), edits, &names(edits))
}

/// `after` is `before` with exactly `old` replaced by `new` once.
fn assert_only_change(before: &str, after: &str, old: &str, new: &str) {
    assert_eq!(before.matches(old).count(), 1, "{old:?} is not unique in the fixture");
    assert_eq!(after, before.replacen(old, new, 1), "\n--- got ---\n{after}");
}

#[test]
fn saving_unchanged_clients_leaves_the_file_byte_for_byte() {
    let out = merge(FILE, &as_page(FILE)).unwrap();
    assert_eq!(out, FILE);
}

#[test]
fn editing_a_model_changes_only_that_value_and_keeps_every_other_key() {
    let mut page = as_page(FILE);
    page[1].model = "qwen3:32b".into(); // `local`, second in the tried order
    let out = merge(FILE, &page).unwrap();
    assert_only_change(FILE, &out, "model: qwen2.5-coder:14b", "model: qwen3:32b");
    let local = parse(&out).llm.clients.into_iter().find(|c| c.name == "local").unwrap();
    assert_eq!(local.model, "qwen3:32b");
    assert_eq!(local.strength, Some(crate::config::Strength::Low));
    assert_eq!(local.scope, ["coding"]);
    assert_eq!(local.context_window, Some(32768));
    assert_eq!(local.extra_params, Some(serde_json::json!({"temperature": 0.2, "top_k": 40})));
}

#[test]
fn a_value_with_a_comment_keeps_the_comment() {
    let mut page = as_page(FILE);
    page[1].context_window = Some(65536);
    let out = merge(FILE, &page).unwrap();
    assert_only_change(
        FILE,
        &out,
        "context_window: 32768   # measured",
        "context_window: 65536   # measured",
    );
}

#[test]
fn clearing_and_setting_optional_keys_touches_only_their_lines() {
    let mut page = as_page(FILE);
    page[0].api_key_env = None;
    page[0].context_window = Some(200_000);
    let out = merge(FILE, &page).unwrap();
    assert_only_change(
        FILE,
        &out,
        "      api_key_env: OPENROUTER_API_KEY\n",
        "      context_window: 200000\n",
    );
}

#[test]
fn adding_a_client_appends_it_and_changes_nothing_else() {
    let mut page = as_page(FILE);
    page.push(new_client("tiny"));
    let out = merge(FILE, &page).unwrap();
    assert_only_change(
        FILE,
        &out,
        "      api_key_env: OPENROUTER_API_KEY\n",
        "      api_key_env: OPENROUTER_API_KEY\n    - name: tiny\n      base_url: http://127.0.0.1:8080/v1\n      model: smollm2\n",
    );
}

#[test]
fn removing_a_client_removes_its_lines_only() {
    let page: Vec<ClientEdit> = as_page(FILE).into_iter().filter(|c| c.name != "local").collect();
    let out = merge(FILE, &page).unwrap();
    let local_item = "    - name: local        # the box under the desk
      base_url: http://127.0.0.1:11434/v1
      model: qwen2.5-coder:14b
      strength: low
      scope: [coding]
      context_window: 32768   # measured
      extra_params:
        # sampling for this model only
        temperature: 0.2
        top_k: 40
";
    // The fallback list named it too, so it is rewritten.
    let expected = FILE.replacen(local_item, "", 1).replacen(
        "fallback: [openrouter, local]",
        "fallback: [openrouter]",
        1,
    );
    assert_eq!(out, expected);
}

#[test]
fn reordering_writes_the_fallback_list_and_keeps_its_comment() {
    let mut page = as_page(FILE);
    page.reverse();
    let out = merge(FILE, &page).unwrap();
    assert_only_change(
        FILE,
        &out,
        "fallback: [openrouter, local]",
        "fallback: [local, openrouter]",
    );
}

#[test]
fn a_rename_keeps_the_clients_other_keys_and_fixes_the_fallback() {
    let mut page = as_page(FILE);
    page[1].name = "desk".into();
    let out = merge(FILE, &page).unwrap();
    let expected = FILE.replacen("- name: local        #", "- name: desk        #", 1).replacen(
        "fallback: [openrouter, local]",
        "fallback: [openrouter, desk]",
        1,
    );
    assert_eq!(out, expected);
    let desk = parse(&out).llm.clients.into_iter().find(|c| c.name == "desk").unwrap();
    assert_eq!(desk.scope, ["coding"]);
}

#[test]
fn stream_false_is_written_and_removed_again() {
    let mut page = as_page(FILE);
    page[0].stream = Some(false);
    let off = merge(FILE, &page).unwrap();
    assert_only_change(
        FILE,
        &off,
        "      api_key_env: OPENROUTER_API_KEY\n",
        "      api_key_env: OPENROUTER_API_KEY\n      stream: false\n",
    );
    let mut page = as_page(&off);
    page[0].stream = Some(true);
    assert_eq!(merge(&off, &page).unwrap(), FILE);
    // A page that cannot say (null) keeps the file's value.
    let mut page = as_page(&off);
    page[0].stream = None;
    assert_eq!(merge(&off, &page).unwrap(), off);
}

#[test]
fn the_shipped_commented_file_gets_an_llm_block_below_its_comments() {
    let shipped = crate::config::default_config_text();
    let out = merge(shipped, &[new_client("tiny")]).unwrap();
    assert!(out.starts_with(shipped), "the comments come first, unchanged");
    assert_eq!(
        &out[shipped.len()..],
        "llm:\n  clients:\n    - name: tiny\n      base_url: http://127.0.0.1:8080/v1\n      model: smollm2\n"
    );
    // And an empty or missing file the same way.
    assert_eq!(merge("", &[new_client("tiny")]).unwrap(), &out[shipped.len()..]);
}

#[test]
fn an_llm_block_without_clients_gets_them_after_its_last_setting() {
    let text = "llm:\n  max_tool_rounds: 5 # few\n# trailing\ntimezone: UTC";
    let out = merge(text, &[new_client("a"), new_client("b")]).unwrap();
    assert_eq!(
        out,
        "llm:\n  max_tool_rounds: 5 # few\n  clients:\n    - name: a\n      base_url: http://127.0.0.1:8080/v1\n      model: smollm2\n    - name: b\n      base_url: http://127.0.0.1:8080/v1\n      model: smollm2\n# trailing\ntimezone: UTC"
    );
}

#[test]
fn flow_items_and_indentless_lists_are_edited_too() {
    let text = "llm:\n  clients:\n  - {name: a, base_url: 'http://x/v1', model: m, strength: high}\n  - name: b\n    base_url: http://y/v1\n    model: m\n  fallback: [b, a]\n";
    let mut page = as_page(text);
    page[1].model = "m2".into(); // `a`, a flow item: written out as a block item
    let out = merge(text, &page).unwrap();
    assert_eq!(
        out,
        "llm:\n  clients:\n  - name: a\n    base_url: http://x/v1\n    model: m2\n    strength: high\n  - name: b\n    base_url: http://y/v1\n    model: m\n  fallback: [b, a]\n"
    );
    let mut page = as_page(text);
    page[0].model = "m3".into(); // `b`, a block item of an indentless list
    let out = merge(text, &page).unwrap();
    assert_only_change(text, &out, "    model: m\n  fallback", "    model: m3\n  fallback");
}

#[test]
fn crlf_files_keep_their_line_breaks() {
    let text = FILE.replace('\n', "\r\n");
    let mut page = as_page(&text);
    page.push(new_client("tiny"));
    let out = merge(&text, &page).unwrap();
    assert!(!out.replace("\r\n", "").contains('\n'), "a bare LF slipped in");
    assert_eq!(parse(&out).llm.clients.len(), 3);
}

#[test]
fn a_file_without_a_final_line_break_is_extended_cleanly() {
    let text = "llm:\n  clients:\n    - name: a\n      base_url: http://x/v1\n      model: m";
    let mut page = as_page(text);
    page.push(new_client("b"));
    let out = merge(text, &page).unwrap();
    assert_eq!(parse(&out).llm.clients.len(), 2);
    assert!(out.starts_with(text));
}

#[test]
fn invalid_input_names_file_line_and_field_and_a_layout_it_cannot_edit_is_refused() {
    let mut page = as_page(FILE);
    page[0].base_url = "ftp://nope".into();
    let err = merge(FILE, &page).unwrap_err();
    assert!(matches!(err, MergeError::Input(_)), "{err:?}");
    let msg = err.to_string();
    assert!(msg.starts_with("/data/config.yml:18:"), "{msg}");
    assert!(msg.contains("not an http(s) URL"), "{msg}");

    let inline = "llm: {clients: [{name: a, base_url: 'http://x/v1', model: m}]}\n";
    let err = merge(
        inline,
        &as_page(inline)
            .into_iter()
            .map(|mut c| {
                c.model = "n".into();
                c
            })
            .collect::<Vec<_>>(),
    )
    .unwrap_err();
    assert!(matches!(err, MergeError::Layout(_)), "the file's fault, not the input's: {err:?}");
    assert!(err.to_string().contains("config.yml:1:"), "{err}");
    assert!(err.to_string().contains("by hand"), "{err}");
}
