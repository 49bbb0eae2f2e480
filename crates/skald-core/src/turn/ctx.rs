//! What a turn runs with, in three layers: shared dependencies, the session's policy, and the
//! frame being run (root or sub-agent), which `child()` derives for a sub-agent.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use skald_llm::{LlmClient, ModelEndpoint};
use skald_protocol::{JobInfo, JobInput, RunContext, SchedulePreview};
use skald_store::Store;
use tokio_util::sync::CancellationToken;

use super::TurnEmitter;
use crate::agents::{Agent, AgentKind};
use crate::approval::gate::LoadedRules;
use crate::context::{BuildSettings, ContextCache, ContextInputs, MemoryFile, MessageBuilder};
use crate::error::EngineError;
use crate::tools::ToolRegistry;

/// Engine-wide services a turn uses; the same for every frame of the tree.
pub struct TurnDeps {
    pub store: Store,
    pub llm: LlmClient,
    pub tools: Arc<ToolRegistry>,
    /// The engine's cache of built histories: each round extends the frame's with what changed.
    pub context_cache: ContextCache,
    pub data_dir: PathBuf,
    /// The user's home: the gate protects its dot-entries.
    pub home_dir: Option<PathBuf>,
    /// Hands an async task (by id) to the engine's background runner.
    pub start_task: TaskStarter,
    /// The engine's MCP servers.
    pub mcp: Arc<skald_mcp::McpManager>,
    /// Changes `mcp.servers` (the `config` tools), through the engine that owns the configuration.
    pub edit_mcp: McpEditor,
    /// Checks and adds scheduled jobs (`execute_task` mode `cron`), through the engine.
    pub jobs: Arc<dyn JobDesk>,
    /// Windows learned from overflow answers (a turn that hits one teaches it here).
    pub windows: crate::context::LearnedWindows,
    /// MCP servers' questions this process's calls wait on (answered through the engine).
    pub elicitations: crate::engine::elicitations::Waiting,
}

/// How a turn checks a job an agent asks to schedule (before the gate: what the person is
/// shown) and adds it (after the person approved it). `EngineError::InvalidInput` says why a
/// job is refused, in words for the model.
pub trait JobDesk: Send + Sync {
    /// The job's schedule in words with its next fire times, or why it is refused.
    fn check(&self, input: &JobInput) -> Result<SchedulePreview, EngineError>;
    /// Stores the job (enabled), checked again.
    fn add(&self, input: JobInput) -> JobFuture;
}

/// A job being added.
pub type JobFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<JobInfo, EngineError>> + Send>>;

/// How a turn changes `mcp.servers`: the engine writes config.yml and reloads it.
pub type McpEditor =
    Arc<dyn Fn(crate::config::McpEdit) -> Result<(), crate::error::EngineError> + Send + Sync>;

/// How a turn hands an async task to the engine's runner, which outlives the turn.
pub type TaskStarter = Arc<dyn Fn(i64) + Send + Sync>;

/// The session's rules for this turn, resolved at its start and shared by every frame.
pub struct TurnPolicy {
    pub session_id: i64,
    pub source: String,
    pub scratchpad_session_id: i64,
    /// The engine's models before any agent's preference: each sub-agent orders its own.
    pub models: Vec<ModelEndpoint>,
    pub rules: LoadedRules,
    pub run_context: RunContext,
    pub workdir: PathBuf,
    /// Per-turn text of every frame's dynamic tail (the RunContext's prompt fragments).
    pub dynamic_fragments: Vec<String>,
    /// Per-turn text of the root frame's dynamic tail only, before `dynamic_fragments`: what the
    /// source gives this turn (a job's run) and the memory store's context for the message.
    pub root_fragments: Vec<String>,
    /// What the session's source adds: static text and a tail reminder (root frame of a
    /// session a person or a job reads; an async task's child has none) and substitutions.
    pub surface: crate::config::SourceContext,
    /// Unattended sessions (TIC) reject what needs a human instead of waiting.
    pub auto_deny: bool,
    /// The session is an async task's child (run by the background runner, not a chat): its
    /// root delegates with `execute_subtask` only, so no task starts another lifecycle.
    pub background: bool,
    /// A person's chat (not a job's run, a task, a channel or another unattended source): only
    /// there may an agent ask to schedule a job.
    pub interactive: bool,
    pub build: BuildSettings,
    pub max_rounds: u32,
    /// Deepest sub-agent level (`llm.max_subagent_depth`); the root is depth 0.
    pub max_subagent_depth: u32,
    /// Sub-agents of one batch running at once (`llm.max_parallel_subagents`, 1 = sequential).
    pub max_parallel_subagents: usize,
    /// Async tasks one reply may start (`llm.max_async_tasks_per_reply`).
    pub max_async_tasks_per_reply: usize,
    /// Async tasks one turn may start, until the user's next message
    /// (`llm.max_async_tasks_per_turn`).
    pub max_async_tasks_per_turn: usize,
    /// Keep each round's request in `llm_requests` for the debug view.
    pub request_log: bool,
}

/// One frame of the agent tree: who runs, where its rows go, where its events are labelled.
#[derive(Clone)]
pub struct FrameCtx {
    pub stack_id: i64,
    /// 0 for the root, one more per sub-agent level.
    pub depth: u32,
    pub agent: Agent,
    /// This agent's model order (its client, scope and strength applied).
    pub chain: Vec<ModelEndpoint>,
    /// Tool groups activated for this frame: the session's at the root, the frame's own below.
    pub grants: super::mcp::Grants,
    pub emitter: TurnEmitter,
    /// A clone of the turn's token: one stop reaches every frame.
    pub cancel: CancellationToken,
    /// The agent's `inject_memory` files, read for the frame's first request and kept for the
    /// rest of the turn: the static system message stays byte-identical between rounds (a
    /// `memory_write` shows in the next turn).
    pub memory: MemorySnapshot,
}

/// A frame's memory files, read once.
pub type MemorySnapshot = Arc<std::sync::OnceLock<Vec<MemoryFile>>>;

/// Everything one frame of a turn needs. Cheap to clone.
#[derive(Clone)]
pub struct TurnCtx {
    pub deps: Arc<TurnDeps>,
    pub policy: Arc<TurnPolicy>,
    pub frame: FrameCtx,
}

impl TurnCtx {
    pub fn new(deps: TurnDeps, policy: TurnPolicy, frame: FrameCtx) -> Self {
        Self { deps: Arc::new(deps), policy: Arc::new(policy), frame }
    }

    /// The same frame under `cancel` (the token of the turn that runs it).
    pub fn with_cancel(&self, cancel: CancellationToken) -> Self {
        Self { frame: FrameCtx { cancel, ..self.frame.clone() }, ..self.clone() }
    }

    /// The context of sub-agent frame `stack_id` running `agent`, opened by call
    /// `parent_tool_call_id` of this frame: same dependencies, policy and token, one level deeper,
    /// its own models (the `client` the delegation named first, never the parent's), grants and
    /// origin label.
    pub fn child(
        &self,
        stack_id: i64,
        agent: Agent,
        client: Option<&str>,
        grants: super::mcp::Grants,
        parent_tool_call_id: i64,
    ) -> Self {
        let chain = self.chain_for(&agent, client);
        let emitter = self.frame.emitter.child(stack_id, &agent.id, parent_tool_call_id);
        Self {
            frame: FrameCtx {
                stack_id,
                depth: self.frame.depth + 1,
                agent,
                chain,
                grants,
                emitter,
                cancel: self.frame.cancel.clone(),
                memory: MemorySnapshot::default(),
            },
            ..self.clone()
        }
    }

    /// `agent`'s order of the engine's models: `client` (a delegation's choice) or the agent's
    /// own client first, then its scope and strength, then health.
    pub fn chain_for(&self, agent: &Agent, client: Option<&str>) -> Vec<ModelEndpoint> {
        skald_llm::resolve_chain(
            &self.policy.models,
            client.or(agent.meta.client.as_deref()),
            agent.meta.scope.as_deref(),
            agent.meta.strength,
            self.deps.llm.health(),
        )
    }

    pub fn is_root(&self) -> bool {
        self.frame.depth == 0
    }

    /// Unattended sessions that auto-deny (TIC) and system agents are never offered questions.
    pub fn questions_available(&self) -> bool {
        !self.policy.auto_deny && self.frame.agent.meta.kind != AgentKind::System
    }

    pub(super) fn builder(&self) -> MessageBuilder {
        MessageBuilder::new(self.deps.store.clone(), self.policy.build.clone())
            .with_cache(self.deps.context_cache.clone())
    }

    /// The frame's `inject_memory` files as its first request read them.
    fn memory_files(&self) -> Vec<MemoryFile> {
        self.frame
            .memory
            .get_or_init(|| {
                crate::memory::inject(
                    &self.frame.agent.meta.inject_memory,
                    &self.deps.data_dir,
                    &self.policy.workdir,
                )
            })
            .clone()
    }

    /// The value of each `__KEY__` the frame's agent prompt holds: Skald's own keys (see
    /// [`crate::context::ENGINE_KEYS`]), then the source's `substitutions`. A key neither
    /// knows is filled with nothing (the agent's listing warns about it), never left as a
    /// sentinel for the model to read.
    pub(super) fn substitutions(&self) -> BTreeMap<String, String> {
        let mut values = BTreeMap::new();
        for key in &self.frame.agent.substitution_keys {
            let value = match key.as_str() {
                super::mcp::MCP_LIST_KEY => super::mcp::prompt_block(self),
                "WD" => self.policy.workdir.display().to_string(),
                "SOURCE" => self.policy.source.clone(),
                "HOME" => self
                    .deps
                    .home_dir
                    .as_deref()
                    .map(|h| h.display().to_string())
                    .unwrap_or_default(),
                "DATA_DIR" => self.deps.data_dir.display().to_string(),
                "MEMORY_DIR" => {
                    self.deps.data_dir.join(crate::memory::MEMORY_DIR).display().to_string()
                }
                "AGENT_ID" => self.frame.agent.id.clone(),
                "OS" => crate::context::os_description(),
                other => match self.policy.surface.substitutions.get(other) {
                    Some(value) => value.clone(),
                    None => {
                        tracing::debug!(key = other, agent = %self.frame.agent.id, "unfilled placeholder");
                        String::new()
                    }
                },
            };
            values.insert(key.clone(), value);
        }
        values
    }

    /// Whether the source's static text and tail reminder go into this frame's requests: the
    /// root of a session whose answers someone reads as the source shows them (not a
    /// sub-agent, whose answer its parent reads, nor an async task's child).
    fn shows_surface(&self) -> bool {
        self.is_root() && self.policy.scratchpad_session_id == self.policy.session_id
    }

    pub(super) fn context_inputs(&self) -> ContextInputs {
        let surface = self.shows_surface().then_some(&self.policy.surface);
        let mut dynamic_fragments = Vec::new();
        if self.is_root() {
            dynamic_fragments.extend(self.policy.root_fragments.iter().cloned());
        }
        dynamic_fragments.extend(self.policy.dynamic_fragments.iter().cloned());
        ContextInputs {
            stack_id: self.frame.stack_id,
            scratchpad_session_id: self.policy.scratchpad_session_id,
            agent_prompt: self.frame.agent.prompt.clone(),
            memory: self.memory_files(),
            extra_static: surface.and_then(|s| s.system.clone()),
            substitutions: self.substitutions(),
            cache_hints: false,
            dynamic_fragments,
            tail_reminder: surface.and_then(|s| s.tail_reminder.clone()),
            workdir: self.policy.workdir.clone(),
            now: self.deps.store.clock().now(),
        }
    }
}
