//! Settings: LLM clients (config.yml), API keys (OS keychain), connection tests, approval rules.

use std::time::{Duration, Instant};

use skald_protocol::{
    ApprovalRuleInput, ApprovalRuleView, ConnectionTest, LlmClientInput, LlmClientView,
    SettingsView,
};
use skald_store::repo::approvals::RuleRow;

use super::Engine;
use crate::config::{self, ClientConfig, ClientEdit, MergeError};
use crate::error::EngineError;

const ENV_CLIENT: &str = "env";

impl Engine {
    /// The Settings page: clients in fallback order, whether each has a key, where files live.
    pub async fn settings(&self) -> Result<SettingsView, EngineError> {
        let cfg = self.config();
        let clients = cfg
            .ordered_clients()
            .into_iter()
            .map(|c| LlmClientView {
                name: c.name.clone(),
                base_url: c.base_url.clone(),
                model: c.model.clone(),
                provider: c.provider.clone(),
                api_key_env: c.api_key_env.clone(),
                has_api_key: self.has_key(c),
                from_env: c.name == ENV_CLIENT,
                context_window: c.context_window,
                stream: c.streams(),
            })
            .collect::<Vec<_>>();
        let path = self.data_dir().join(config::CONFIG_FILE_NAME);
        // An unreadable file has a revision too: a save then reports the file's own error.
        let text = config::read_text(&path).ok().flatten().unwrap_or_default();
        Ok(SettingsView {
            fallback: clients.iter().map(|c| c.name.clone()).collect(),
            clients,
            data_dir: self.data_dir().display().to_string(),
            config_path: path.display().to_string(),
            revision: revision_of(&text),
        })
    }

    fn has_key(&self, c: &ClientConfig) -> bool {
        match &c.api_key_env {
            Some(var) => std::env::var(var).is_ok_and(|v| !v.is_empty()),
            None => self.inner.secrets.get(&c.name).ok().flatten().is_some(),
        }
    }

    /// Saves the page's clients and their order into `config.yml`, merged by name into the file as
    /// it is: keys the page does not edit, comments, and all other settings stay byte for byte.
    /// Validated exactly like a hand edit before anything is written.
    pub async fn save_llm_clients(
        &self,
        clients: Vec<LlmClientInput>,
        fallback: Vec<String>,
        revision: Option<&str>,
    ) -> Result<SettingsView, EngineError> {
        let path = self.data_dir().join(config::CONFIG_FILE_NAME);
        let text = config::read_text(&path).map_err(EngineError::from)?.unwrap_or_default();
        // The page sends its whole list: writing it over a file changed since the page read it
        // would drop what changed (a client added by hand, another window's edit).
        if revision.is_some_and(|r| r != revision_of(&text)) {
            return Err(EngineError::Conflict(format!(
                "{} changed since these settings were loaded; nothing was saved. Reload them \
                 and make the change again.",
                path.display()
            )));
        }
        // The file as it is must be valid: an edit never builds on a broken file.
        let current = config::parse_text(&path, &text)?;
        let edits: Vec<ClientEdit> =
            clients.into_iter().filter(|c| c.name != ENV_CLIENT).map(client_edit).collect();
        let renames: Vec<(String, String)> = edits
            .iter()
            .filter_map(|e| Some((e.previous_name.clone()?, e.name.clone())))
            .filter(|(old, new)| old != new)
            .collect();
        let order: Vec<String> = fallback.into_iter().filter(|n| n != ENV_CLIENT).collect();
        let edited =
            config::merge_clients(&path, &text, &current, &edits, &order).map_err(|e| match e {
                MergeError::Input(e) => EngineError::InvalidInput(e.to_string()),
                MergeError::Layout(e) => EngineError::Config(e),
                editor @ MergeError::Editor { .. } => EngineError::Internal(editor.to_string()),
            })?;
        // A renamed client keeps its API key: it is copied to the new name before the file
        // names the client so, and removed from the old name only once the file is written.
        for (old, new) in &renames {
            self.copy_key(old, new)?;
        }
        if edited != text {
            write_atomically(&path, &edited).map_err(io_err)?;
        }
        for (old, _) in &renames {
            self.inner.secrets.delete(old)?;
        }
        self.reload_config()?;
        self.settings().await
    }

    /// Gives client `to` the key stored for `from`, unless `to` already has one of its own.
    fn copy_key(&self, from: &str, to: &str) -> Result<(), EngineError> {
        let secrets = &self.inner.secrets;
        if let Some(key) = secrets.get(from)?
            && secrets.get(to)?.is_none()
        {
            secrets.set(to, &key)?;
        }
        Ok(())
    }

    /// Stores (or with `None` removes) a client's API key in the OS keychain.
    pub async fn set_api_key(&self, client: &str, key: Option<String>) -> Result<(), EngineError> {
        match key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
            Some(k) => self.inner.secrets.set(client, k)?,
            None => self.inner.secrets.delete(client)?,
        }
        Ok(())
    }

    /// Asks the client's endpoint for its model list.
    pub async fn test_connection(&self, client: &str) -> Result<ConnectionTest, EngineError> {
        let chain = self.model_chain()?;
        let endpoint = chain
            .iter()
            .find(|e| e.name == client)
            .ok_or_else(|| EngineError::NotFound(format!("no LLM client named `{client}`")))?;
        let started = Instant::now();
        let result = skald_llm::list_models(endpoint, Duration::from_secs(10)).await;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(match result {
            Ok(models) => ConnectionTest {
                ok: true,
                model_listed: models.iter().any(|m| m == &endpoint.model),
                models,
                error: None,
                latency_ms,
            },
            Err(e) => ConnectionTest {
                ok: false,
                models: Vec::new(),
                model_listed: false,
                error: Some(e.to_string()),
                latency_ms,
            },
        })
    }

    /// Every approval rule, in evaluation order per group.
    pub async fn approval_rules(&self) -> Result<Vec<ApprovalRuleView>, EngineError> {
        let rows = self.store().all_rules().await?;
        Ok(rows.into_iter().map(rule_view).collect())
    }

    /// Creates (`id = None`) or updates a rule. Takes effect from the next gated call.
    pub async fn save_approval_rule(
        &self,
        id: Option<i64>,
        input: ApprovalRuleInput,
    ) -> Result<ApprovalRuleView, EngineError> {
        if input.tool_pattern.trim().is_empty() {
            return Err(EngineError::InvalidInput("the tool pattern is empty".into()));
        }
        let row = RuleRow {
            id: id.unwrap_or(0),
            group_id: input.group_id.unwrap_or_else(|| "default".into()),
            agent_id: input.agent_id.filter(|s| !s.trim().is_empty()),
            source: input.source.filter(|s| !s.trim().is_empty()),
            tool_pattern: input.tool_pattern.trim().to_string(),
            path_pattern: input.path_pattern.filter(|s| !s.trim().is_empty()),
            action: input.action,
            note: input.note,
            priority: input.priority,
            seed_key: None,
        };
        let saved = self.store().save_rule(id, &row).await?;
        Ok(rule_view(saved))
    }

    pub async fn delete_approval_rule(&self, id: i64) -> Result<(), EngineError> {
        Ok(self.store().delete_rule(id).await?)
    }
}

/// A short fingerprint of config.yml's text (FNV-1a and the length): equal texts, equal
/// revisions, in every process and build.
fn revision_of(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}-{}", text.len())
}

fn rule_view(r: RuleRow) -> ApprovalRuleView {
    ApprovalRuleView {
        id: r.id,
        group_id: r.group_id,
        tool_pattern: r.tool_pattern,
        path_pattern: r.path_pattern,
        agent_id: r.agent_id,
        source: r.source,
        action: r.action,
        priority: r.priority,
        note: r.note,
        seed_key: r.seed_key,
    }
}

pub(super) fn io_err(source: std::io::Error) -> EngineError {
    EngineError::Write { file: "config.yml", source }
}

/// What the page sent, trimmed; blank optional fields mean "not set".
fn client_edit(c: LlmClientInput) -> ClientEdit {
    let set = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    ClientEdit {
        previous_name: set(c.previous_name),
        name: c.name.trim().to_string(),
        base_url: c.base_url.trim().to_string(),
        model: c.model.trim().to_string(),
        provider: set(c.provider),
        api_key_env: set(c.api_key_env),
        context_window: c.context_window,
        stream: c.stream,
    }
}

/// Replaces the file in one step (a reader never sees half a file), keeping its permissions.
pub(super) fn write_atomically(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_file_name(".config.yml.tmp");
    std::fs::write(&tmp, text)?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(&tmp, meta.permissions())?;
    }
    std::fs::rename(&tmp, path)
}
