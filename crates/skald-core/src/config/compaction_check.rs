//! `llm.compaction` must be able to trigger: switched on, it lifts the history's count cap, so a
//! model whose window is unknown and no `threshold_tokens` would mean a history that only grows.

use std::path::Path;

use super::ConfigError;
use super::env::ENV_CLIENT_NAME;
use super::file::Config;

/// Fails when compaction is on without `threshold_tokens` and some client's context window is
/// unknown (any client can serve a turn: agents pick theirs and fallback reorders the chain).
/// The message names the file, the clients and what to add.
pub(super) fn check(path: &Path, c: &Config) -> Result<(), ConfigError> {
    let Some(compaction) = c.llm.compaction.filter(|k| k.enabled) else {
        return Ok(());
    };
    if compaction.threshold_tokens.is_some() {
        return Ok(());
    }
    let unknown: Vec<String> = c
        .ordered_clients()
        .into_iter()
        .filter(|client| client.effective_context_window().is_none())
        .map(|client| format!("`{}` (model `{}`)", client.name, client.model))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let from_env = c
        .llm
        .clients
        .iter()
        .any(|k| k.name == ENV_CLIENT_NAME && k.effective_context_window().is_none());
    let fix = if from_env {
        "add `threshold_tokens: <tokens>` under `llm.compaction` (the client from \
         SKALD_LLM_BASE_URL has no `context_window` setting)"
    } else {
        "add `context_window: <tokens>` to each of these clients, or `threshold_tokens: \
         <tokens>` under `llm.compaction`"
    };
    Err(ConfigError::Semantic {
        path: path.to_path_buf(),
        message: format!(
            "llm.compaction is on, but the context window of {} is unknown, so it could never \
             trigger and the history would grow without bound: {fix}, or set `enabled: false`",
            unknown.join(", ")
        ),
    })
}
