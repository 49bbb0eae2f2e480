//! `MessageBuilder`: reads a frame's rows (all of them, or with a cache only what changed) and
//! assembles the request messages in the fixed order.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde_json::Value;
use skald_llm::Messages;
use skald_store::repo::replay::{FrameReplay, ReplayWindow};
use skald_store::repo::summaries::SummaryRow;
use skald_store::{Store, StoreError};

use super::cache::{ContextCache, Entry};
use super::dynamic::{DynamicTail, effective_timezone, format_now, os_description};
use super::history::{HistoryOptions, history_messages};
use super::incremental::IncrementalHistory;
use super::system::{render_static_system, scratchpad_message, summary_message, system_message};
use super::tokens::{estimate_messages, message_chars, tokens_of_chars};
use crate::config::{CompactionConfig, Config, DatetimeConfig};

/// A file injected into the static system message (`inject_memory` of the agent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// Path as shown to the model (relative to the working dir when inside it).
    pub shown_path: String,
    /// `None` when the file does not exist yet.
    pub content: Option<String>,
}

/// Limits and switches that come from the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildSettings {
    pub max_history_messages: usize,
    pub max_tool_result_chars: Option<usize>,
    /// With compaction on, the summariser owns the budget and no count cap applies.
    pub compaction_enabled: bool,
    /// `llm.compaction` as configured (`None` = not configured).
    pub compaction: Option<CompactionConfig>,
    pub datetime: DatetimeConfig,
    pub timezone: Option<String>,
}

impl BuildSettings {
    pub fn from_config(c: &Config) -> Self {
        Self {
            max_history_messages: c.llm.max_history_messages as usize,
            max_tool_result_chars: c.llm.max_tool_result_chars.map(|n| n as usize),
            compaction_enabled: c.llm.compaction.is_some_and(|k| k.enabled),
            compaction: c.llm.compaction,
            datetime: c.llm.datetime,
            timezone: c.timezone.clone(),
        }
    }

    /// The settings of a turn served by `chain`. Without an `llm.compaction` block compaction is
    /// on when the first model's context window is known (configured, or a well-known hosted
    /// family) — a long session is then summarised instead of silently losing its older turns to
    /// the count cap; with an unknown window the count cap stays.
    pub fn for_chain(c: &Config, chain: &[skald_llm::ModelEndpoint]) -> Self {
        let mut settings = Self::from_config(c);
        if c.llm.compaction.is_none() && chain.first().is_some_and(|e| e.context_window.is_some()) {
            settings.compaction_enabled = true;
            settings.compaction = Some(CompactionConfig::default());
        }
        settings
    }
}

/// Everything about one request that is not a stored row.
#[derive(Debug, Clone)]
pub struct ContextInputs {
    pub stack_id: i64,
    /// Session whose scratchpad is shown (an async task shares its parent's).
    pub scratchpad_session_id: i64,
    /// The agent's prompt with includes resolved (`__KEY__` sentinels still in place).
    pub agent_prompt: String,
    pub memory: Vec<MemoryFile>,
    pub extra_static: Option<String>,
    pub substitutions: BTreeMap<String, String>,
    pub cache_hints: bool,
    pub dynamic_fragments: Vec<String>,
    pub tail_reminder: Option<String>,
    pub workdir: PathBuf,
    pub now: DateTime<Utc>,
}

/// The built request messages and what went into them.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltContext {
    pub messages: Vec<Value>,
    /// The compaction boundary replay started after (0 = none).
    pub boundary_message_id: i64,
    /// Estimated tokens of the whole message array.
    pub estimated_tokens: i64,
}

/// A built request whose history may be shared with the context cache (not copied).
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltRequest {
    pub messages: Messages,
    /// The compaction boundary replay started after (0 = none).
    pub boundary_message_id: i64,
    /// Estimated tokens of the whole message array.
    pub estimated_tokens: i64,
}

/// Builds requests from a pool and a configuration only, so it is testable in isolation.
#[derive(Debug, Clone)]
pub struct MessageBuilder {
    store: Store,
    settings: BuildSettings,
    cache: Option<ContextCache>,
}

impl MessageBuilder {
    pub fn new(store: Store, settings: BuildSettings) -> Self {
        Self { store, settings, cache: None }
    }

    /// `build_request` keeps each frame's history in `cache` and extends it next time.
    pub fn with_cache(mut self, cache: ContextCache) -> Self {
        self.cache = Some(cache);
        self
    }

    pub fn settings(&self) -> &BuildSettings {
        &self.settings
    }

    /// The request built from every stored row: the reference the cached build must equal.
    pub async fn build(&self, inputs: &ContextInputs) -> Result<BuiltContext, StoreError> {
        // One statement for everything (see `frame_replay`).
        let replay = self
            .store
            .frame_replay(inputs.stack_id, inputs.scratchpad_session_id, self.replay_window())
            .await?;
        let FrameReplay { summary, messages: rows, tools, notes, .. } = replay;
        let boundary = summary.as_ref().map_or(0, |s| s.covers_up_to_message_id);
        let mut messages = self.head(inputs, &notes, summary.as_ref());
        messages.extend(history_messages(rows, tools, self.history_options()));
        messages.extend(self.tail(inputs));
        let estimated_tokens = estimate_messages(&messages);
        Ok(BuiltContext { messages, boundary_message_id: boundary, estimated_tokens })
    }

    /// The request for the frame's next round. With a cache, only what changed since the last
    /// build is read (the cost follows the change, not the session's length); the result equals
    /// `build`'s message for message.
    pub async fn build_request(&self, inputs: &ContextInputs) -> Result<BuiltRequest, StoreError> {
        let opts = self.history_options();
        let cached = self
            .cache
            .as_ref()
            .and_then(|c| c.take(inputs.stack_id))
            .filter(|e| e.history.options() == opts);
        let (mut entry, notes, extended) = match cached {
            Some(entry) => self.extend(entry, inputs).await?,
            None => self.rebuild(inputs).await?,
        };
        let view = entry.history.view();
        let head = self.head(inputs, &notes, entry.summary.as_ref());
        let tail = self.tail(inputs);
        let chars = head.iter().chain(&tail).map(message_chars).sum::<usize>() + view.chars;
        let mut messages = Messages::from(head);
        messages.extend(view.first);
        messages.push_shared(view.shared, view.range);
        messages.extend(view.last);
        messages.extend(tail);
        let boundary = entry.summary.as_ref().map_or(0, |s| s.covers_up_to_message_id);
        if let Some(cache) = &self.cache {
            cache.count(extended);
            if entry.history.extendable() {
                cache.put(inputs.stack_id, entry);
            }
        }
        Ok(BuiltRequest {
            messages,
            boundary_message_id: boundary,
            estimated_tokens: tokens_of_chars(chars),
        })
    }

    /// Extends a cached entry with what changed, or rebuilds when that cannot be followed.
    async fn extend(
        &self,
        mut entry: Entry,
        inputs: &ContextInputs,
    ) -> Result<(Entry, Vec<(String, String)>, bool), StoreError> {
        let cursor = entry.history.cursor();
        let mut delta =
            self.store.frame_delta(inputs.stack_id, inputs.scratchpad_session_id, &cursor).await?;
        if delta.summary_id != entry.summary.as_ref().map(|s| s.id) {
            tracing::debug!(stack_id = inputs.stack_id, "compacted since the last build");
            return self.rebuild(inputs).await;
        }
        let notes = std::mem::take(&mut delta.notes);
        match entry.history.apply(delta) {
            Ok(()) => Ok((entry, notes, true)),
            Err(stale) => {
                tracing::debug!(stack_id = inputs.stack_id, ?stale, "cached history rebuilt");
                self.rebuild(inputs).await
            }
        }
    }

    async fn rebuild(
        &self,
        inputs: &ContextInputs,
    ) -> Result<(Entry, Vec<(String, String)>, bool), StoreError> {
        let replay = self
            .store
            .frame_replay(inputs.stack_id, inputs.scratchpad_session_id, self.replay_window())
            .await?;
        let history = IncrementalHistory::from_rows(
            self.history_options(),
            replay.from,
            replay.max_tool_id,
            replay.messages,
            replay.tools,
        );
        Ok((Entry { history, summary: replay.summary }, replay.notes, false))
    }

    /// With a count cap only the tail can reach the request, so only the tail is read.
    fn replay_window(&self) -> ReplayWindow {
        match (self.settings.compaction_enabled, self.settings.max_history_messages) {
            (false, keep) if keep > 0 => ReplayWindow::Tail(keep),
            _ => ReplayWindow::SinceSummary,
        }
    }

    fn history_options(&self) -> HistoryOptions {
        HistoryOptions {
            max_messages: (!self.settings.compaction_enabled)
                .then_some(self.settings.max_history_messages),
            max_tool_result_chars: self.settings.max_tool_result_chars,
        }
    }

    /// The static system message, the scratchpad and the compaction summary.
    fn head(
        &self,
        inputs: &ContextInputs,
        notes: &[(String, String)],
        summary: Option<&SummaryRow>,
    ) -> Vec<Value> {
        let static_text = render_static_system(
            &inputs.agent_prompt,
            &inputs.memory,
            inputs.extra_static.as_deref(),
            &inputs.substitutions,
        );
        let mut messages = vec![system_message(&static_text, inputs.cache_hints)];
        messages.extend(scratchpad_message(notes));
        messages.extend(summary.map(|s| summary_message(&s.content)));
        messages
    }

    /// The dynamic tail and the tail reminder.
    fn tail(&self, inputs: &ContextInputs) -> Vec<Value> {
        let tz = effective_timezone(self.settings.timezone.as_deref());
        let tail = DynamicTail {
            fragments: inputs.dynamic_fragments.clone(),
            now: self
                .settings
                .datetime
                .enabled
                .then(|| format_now(inputs.now, &tz, self.settings.datetime.round_minutes)),
            os: os_description(),
            workdir: inputs.workdir.display().to_string(),
        };
        let mut messages = vec![tail.message()];
        if let Some(reminder) = inputs.tail_reminder.as_deref().filter(|r| !r.trim().is_empty()) {
            messages.push(serde_json::json!({ "role": "system", "content": reminder }));
        }
        messages
    }
}
