//! Chat commands: send a message (start a turn or steer a running one), stop, resolve the model
//! chain. The turn itself lives in `crate::turn`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use skald_llm::{LlmSettings, ModelEndpoint};
use skald_protocol::{Event, EventEnvelope, FrameOrigin, SendResult, TurnEnd};
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::NewSession;
use tokio_util::sync::CancellationToken;

use super::Engine;
use super::runner::Lease;
use crate::approval::gate::load_rules;
use crate::context::BuildSettings;
use crate::error::EngineError;
use crate::session::origin;
use crate::turn::{
    FrameCtx, ParkMode, TurnCtx, TurnDeps, TurnEmitter, TurnOutcome, TurnPolicy, run_rounds,
};
use crate::{agents, config};
use skald_protocol::RunContext;

/// One step of a run on a leased session.
pub(super) enum Step {
    /// A turn: with the user's message, or on the steers waiting for one.
    Turn(Option<String>),
    /// Settle the calls an earlier run left open (decisions, crash leftovers), then continue;
    /// waiting steers are folded at its first round boundary.
    Resume,
}

/// Options of `send_message`.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    /// Agent of a session created by this message (default `main`). The caller named it: an
    /// active session running another agent is an error naming both, never a message sent to
    /// an agent the caller did not ask for.
    pub agent_id: Option<String>,
    /// Working directory stored on a session created by this message.
    pub workdir: Option<PathBuf>,
    /// `workdir` was named by the caller (`skald chat --workdir`), not a default for a new
    /// session (the directory `skald` runs in): an active session that works in another
    /// directory is then an error naming both, never a turn run in the other one.
    pub workdir_explicit: bool,
    /// `skald chat --approve-all`: the human pre-approves every call that would need approval in
    /// this session, stored as a "this session" bypass of all tools granted by `granted_by`
    /// (deny rules still apply; `/new` or a revoke ends it). The model never can set this.
    pub approve_all: bool,
    /// The surface a person asked from (`cli`, `web`, `app`): recorded with `approve_all`'s
    /// bypass. Empty reads as `cli`.
    pub granted_by: &'static str,
    /// Whether a call that needs a human keeps the turn waiting (app, serve) or ends it parked
    /// for a later `resume` (one-shot CLI).
    pub park_mode: ParkMode,
}

/// What `send_message` did.
#[derive(Debug)]
pub struct SendReceipt {
    pub session_id: i64,
    /// True when the message was stored as a steer for a turn that runs (here or elsewhere) or
    /// that continues once `waiting_for` is settled; no turn was started for it.
    pub steered: bool,
    /// Calls waiting for a human (an approval or an answer) that the message is queued behind:
    /// it reaches the model after them (decision 44). Empty when nothing waits.
    pub waiting_for: Vec<i64>,
}

impl SendReceipt {
    /// What the shells answer the sender.
    pub fn result(&self) -> SendResult {
        SendResult {
            session_id: self.session_id,
            steered: self.steered,
            waiting_for: self.waiting_for.clone(),
        }
    }
}

impl Engine {
    /// The source's active session, created on first use. An agent or an explicit working
    /// directory that the active session does not have is refused (`invalid_input`, naming
    /// both and how to start a session that has them).
    pub async fn active_session(
        &self,
        source: &str,
        opts: &ChatOptions,
    ) -> Result<i64, EngineError> {
        validate_source(source)?;
        let store = self.store();
        if let Some(id) = store.active_session(source).await? {
            self.check_session_fits(id, source, opts).await?;
            return Ok(id);
        }
        let mut new = NewSession::interactive(source);
        if let Some(agent) = &opts.agent_id {
            new.agent_id = self.session_agent(agent)?;
        }
        new.run_context = workdir_run_context(opts.workdir.as_deref())?;
        let created = store.create_session(&new).await?;
        store.set_active_session(source, created.session_id).await?;
        self.emit(EventEnvelope::session(created.session_id, source, Event::SessionsChanged {}));
        Ok(created.session_id)
    }

    /// Whether the active session `session_id` runs the agent and works in the directory that
    /// `opts` names explicitly.
    async fn check_session_fits(
        &self,
        session_id: i64,
        source: &str,
        opts: &ChatOptions,
    ) -> Result<(), EngineError> {
        let wanted_dir = opts.workdir.as_deref().filter(|_| opts.workdir_explicit);
        if opts.agent_id.is_none() && wanted_dir.is_none() {
            return Ok(());
        }
        let session = self.store().session(session_id).await?;
        if let Some(agent) = opts.agent_id.as_deref().filter(|a| *a != session.agent_id) {
            return Err(EngineError::InvalidInput(format!(
                "session {session_id} of source `{source}` runs agent `{}`, not `{agent}`, and a \
                 session keeps its agent: start a new session with `skald new --agent {agent}` \
                 (or `skald chat --new --agent {agent} …`), or leave out --agent to go on with \
                 `{}`",
                session.agent_id, session.agent_id
            )));
        }
        if let Some(wanted) = wanted_dir {
            let works_in = self.session_workdir(session_id, session.run_context.as_deref())?;
            if !same_dir(&works_in, wanted) {
                let (works_in, wanted) = (works_in.display(), wanted.display());
                return Err(EngineError::InvalidInput(format!(
                    "session {session_id} of source `{source}` works in {works_in}, not in \
                     {wanted}, and a session keeps its working directory: start a new session \
                     there with `skald new --workdir {wanted}` (or `skald chat --new --workdir \
                     {wanted} …`), or leave out --workdir to go on in {works_in}"
                )));
            }
        }
        Ok(())
    }

    /// Where the session's tools work: its stored working directory, else where Skald was
    /// launched.
    fn session_workdir(
        &self,
        session_id: i64,
        run_context: Option<&str>,
    ) -> Result<PathBuf, EngineError> {
        let run_context = stored_run_context(session_id, run_context)?;
        let cwd = crate::launch_env::launch_dir().unwrap_or_else(|| self.data_dir().to_path_buf());
        Ok(run_context.effective_workdir(&cwd))
    }

    /// The directory the session's tools work in (what `skald chat` compares with where it
    /// runs).
    pub async fn working_directory(&self, session_id: i64) -> Result<PathBuf, EngineError> {
        let session = self.store().session(session_id).await?;
        self.session_workdir(session_id, session.run_context.as_deref())
    }

    /// How a turn this engine starts treats a call that needs a person when the caller does not
    /// say: with the background running, the queue continues it wherever it is decided
    /// (`Wait`); otherwise it ends parked for a later resume (`Exit`, a one-shot command).
    pub fn default_park_mode(&self) -> ParkMode {
        if self.inner.lifecycle.background() { ParkMode::Wait } else { ParkMode::Exit }
    }

    /// Sends a user message to the source's session: starts a turn, or — while one runs here or
    /// in another process, or while calls wait for a human — stores it as a steer folded in at
    /// the next round boundary (after those calls are settled).
    pub async fn send_message(
        &self,
        source: &str,
        text: &str,
        opts: ChatOptions,
    ) -> Result<SendReceipt, EngineError> {
        if text.trim().is_empty() {
            return Err(EngineError::InvalidInput("the message is empty".into()));
        }
        let session_id = self.active_session(source, &opts).await?;
        if opts.approve_all {
            let by = if opts.granted_by.is_empty() { "cli" } else { opts.granted_by };
            self.approve_all(session_id, by).await?;
        }
        // Held here or elsewhere: the message is a steer for the work that runs.
        let lease = match self.acquire(session_id).await {
            Ok(lease) => lease,
            Err(EngineError::SessionBusy { .. }) => {
                return self.steer(session_id, source, text, opts.park_mode).await;
            }
            Err(e) => return Err(e),
        };
        // Calls an earlier run left open come first: a fresh turn on top of them would tell the
        // model they were interrupted while a decision could still run them. The message waits
        // as a steer; the late-steer claim settles them now unless a human must decide first.
        let open = match self.store().open_tool_calls(session_id).await {
            Ok(open) => open,
            Err(e) => {
                lease.release().await;
                return Err(e.into());
            }
        };
        if !open.is_empty() {
            lease.release().await;
            return self.steer(session_id, source, text, opts.park_mode).await;
        }
        let chain = match self.model_chain() {
            Ok(chain) => chain,
            Err(e) => {
                lease.release().await;
                return Err(e);
            }
        };
        // The lease's token exists before the task starts, so a stop sent right after this
        // returns is never lost.
        let step = Step::Turn(Some(text.to_string()));
        self.spawn_run(lease, chain, source, step, opts.park_mode);
        Ok(SendReceipt { session_id, steered: false, waiting_for: Vec::new() })
    }

    /// Stores `text` as a steer and echoes it as queued; starts the work that folds it when
    /// nobody else will.
    async fn steer(
        &self,
        session_id: i64,
        source: &str,
        text: &str,
        mode: ParkMode,
    ) -> Result<SendReceipt, EngineError> {
        let store = self.store();
        let pending_input_id = store.add_steer(session_id, text, None).await?;
        let waiting_for = store.calls_awaiting_human(session_id).await?;
        // Steers are folded into the root frame: that is where they come from.
        let frame = origin::of_root(store, session_id).await?;
        self.emit(EventEnvelope::framed(
            session_id,
            source,
            frame,
            Event::SteerQueued {
                pending_input_id,
                content: text.to_string(),
                waiting_for: waiting_for.clone(),
            },
        ));
        // The turn may have ended between the busy check and the insert, or there was none:
        // then nobody would fold this steer, so it starts the work of its own.
        if let Some((lease, chain, step)) = self.claim_late_steers(session_id).await {
            self.spawn_run(lease, chain, source, step, mode);
            return Ok(SendReceipt { session_id, steered: false, waiting_for: Vec::new() });
        }
        Ok(SendReceipt { session_id, steered: true, waiting_for })
    }

    /// Runs `first` on the leased session, then keeps going while steers sent too late for it
    /// are waiting. Returns the last step's outcome. A call that needs a person ends the run
    /// parked: nothing waits inside a run (the decision queues its continuation).
    pub(super) async fn run_steps(
        &self,
        first_lease: Lease,
        first_chain: Vec<ModelEndpoint>,
        source: &str,
        first: Step,
    ) -> TurnOutcome {
        let session_id = first_lease.session_id();
        let (mut lease, mut chain, mut step) = (first_lease, first_chain, first);
        loop {
            let cancel = lease.cancel_token();
            let outcome = self.run_step(session_id, source, step, chain, cancel).await;
            lease.release().await;
            // A step that failed would fail the same way again on the same rows.
            if matches!(outcome, TurnOutcome::Failed { .. }) {
                return outcome;
            }
            // A message that arrived after the last round boundary but before the lease was
            // released is a steer nobody folds: pick it up now (the sender's own check
            // covers the other order).
            match self.claim_late_steers(session_id).await {
                Some(next) => (lease, chain, step) = next,
                None => return outcome,
            }
        }
    }

    /// Leases the session for open steers (or async tasks' reports) that no turn will fold: none runs here or
    /// elsewhere, and no call waits for a human (the continuation after the decision folds
    /// them). With calls left open otherwise (decided, or cut off by a crash) the step settles
    /// them first. `None` when there is nothing to do or someone else holds the session.
    pub(super) async fn claim_late_steers(
        &self,
        session_id: i64,
    ) -> Option<(Lease, Vec<ModelEndpoint>, Step)> {
        let store = self.store();
        if !store.root_input_waits(session_id).await.ok()? {
            return None;
        }
        let lease = self.acquire(session_id).await.ok()?;
        // Under the lease: another caller may have folded them first, or a turn parked a call.
        let next = async {
            let still = store.root_input_waits(session_id).await.ok()?;
            if !still || !store.calls_awaiting_human(session_id).await.ok()?.is_empty() {
                return None;
            }
            let step = if store.open_tool_calls(session_id).await.ok()?.is_empty() {
                Step::Turn(None)
            } else {
                Step::Resume
            };
            Some((self.model_chain().ok()?, step))
        };
        match next.await {
            Some((chain, step)) => Some((lease, chain, step)),
            None => {
                lease.release().await;
                None
            }
        }
    }

    /// Stops the session's running turn, here or in another process. Unconsumed steers are kept
    /// but marked discarded. Returns whether a turn was running.
    pub async fn stop(&self, session_id: i64) -> Result<bool, EngineError> {
        let session = self.store().session(session_id).await?;
        let local = self.inner.sessions.existing(session_id).is_some_and(|h| h.cancel());
        let alive = self.liveness();
        let remote = self.store().request_runner_cancel(session_id, &alive).await?;
        let parked = !local && !remote && self.stop_parked(session_id, &session.source).await?;
        let dropped = self.store().discard_steers(session_id).await?;
        if !dropped.is_empty() {
            let emitter = self.root_emitter(session_id, &session.source).await?;
            emitter.emit(Event::SteersDiscarded { pending_input_ids: dropped });
        }
        Ok(local || remote || parked)
    }

    /// Stops a turn parked on a person (nothing runs it): its waiting calls are cancelled and
    /// the turn ends `cancelled`, as a stop of a running one would. Returns whether one was.
    async fn stop_parked(&self, session_id: i64, source: &str) -> Result<bool, EngineError> {
        if self.store().calls_awaiting_human(session_id).await?.is_empty() {
            return Ok(false);
        }
        let lease = match self.acquire(session_id).await {
            Ok(lease) => lease,
            // Someone took it up meanwhile: a stop of a running turn is theirs to honour.
            Err(EngineError::SessionBusy { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        let chain = match self.model_chain() {
            Ok(chain) => chain,
            Err(e) => {
                lease.release().await;
                return Err(e);
            }
        };
        // Settled with a stopped token: each waiting call is cancelled, nothing is asked.
        lease.cancel_token().cancel();
        self.spawn_run(lease, chain, source, Step::Resume, ParkMode::Exit);
        Ok(true)
    }

    /// The emitter of a frame of the session.
    fn emitter(&self, session_id: i64, source: &str, frame: FrameOrigin) -> TurnEmitter {
        TurnEmitter::new(self.inner.events.clone(), session_id, source.to_string(), frame)
    }

    /// The emitter of the session's root frame.
    pub(super) async fn root_emitter(
        &self,
        session_id: i64,
        source: &str,
    ) -> Result<TurnEmitter, EngineError> {
        let frame = origin::of_root(self.store(), session_id).await?;
        Ok(self.emitter(session_id, source, frame))
    }

    /// Replaces the session's RunContext (working dir, prompt fragments, pre-authorised paths,
    /// permission group); it applies from the next turn or resume.
    pub async fn set_run_context(
        &self,
        session_id: i64,
        run_context: Option<RunContext>,
    ) -> Result<(), EngineError> {
        let json = run_context.as_ref().map(encode_run_context).transpose()?;
        self.store().set_session_run_context(session_id, json.as_deref()).await?;
        Ok(())
    }

    /// The session's RunContext (defaults when none is stored).
    pub async fn run_context(&self, session_id: i64) -> Result<RunContext, EngineError> {
        let session = self.store().session(session_id).await?;
        stored_run_context(session_id, session.run_context.as_deref())
    }

    /// Whether a turn is running for the session (in any process).
    pub async fn is_running(&self, session_id: i64) -> Result<bool, EngineError> {
        let local = self.inner.sessions.existing(session_id).is_some_and(|h| h.is_processing());
        Ok(local || self.runner_elsewhere(session_id).await?)
    }

    /// The models to try, in fallback order, with API keys resolved.
    pub(super) fn model_chain(&self) -> Result<Vec<ModelEndpoint>, EngineError> {
        let chain = self.configured_models(true);
        if chain.is_empty() {
            return Err(EngineError::NotConfigured(format!(
                "no LLM is configured: add a client under llm.clients in {} or set \
                 SKALD_LLM_BASE_URL and SKALD_LLM_MODEL",
                self.data_dir().join(config::CONFIG_FILE_NAME).display()
            )));
        }
        Ok(chain)
    }

    /// The configured models in fallback order; their API keys only `with_keys` (reading them
    /// may ask the OS keychain, which counting tokens has no need for).
    pub(super) fn configured_models(&self, with_keys: bool) -> Vec<ModelEndpoint> {
        let cfg = self.config();
        cfg.ordered_clients()
            .into_iter()
            .map(|c| {
                let api_key = match &c.api_key_env {
                    _ if !with_keys => None,
                    // The captured overrides win, so an engine opened with explicit overrides
                    // never reads a different key from the process environment.
                    Some(var) if var == crate::config::ENV_API_KEY => {
                        self.inner.env.api_key.clone()
                    }
                    Some(var) => std::env::var(var).ok().filter(|k| !k.is_empty()),
                    None => self.inner.secrets.get(&c.name).ok().flatten(),
                };
                ModelEndpoint {
                    name: c.name.clone(),
                    base_url: c.base_url.clone(),
                    model: c.model.clone(),
                    api_key,
                    prompt_cache: c.wants_cache_hints(),
                    extra_params: c.extra_params.clone(),
                    strength: c.strength,
                    scope: c.scope.clone(),
                    context_window: c.effective_context_window(),
                    stream: c.streams(),
                }
            })
            .collect()
    }

    /// One step (a user turn: echo, rounds; or a resume), then its outcome events. Runs under
    /// the session's lease.
    async fn run_step(
        &self,
        session_id: i64,
        source: &str,
        step: Step,
        chain: Vec<ModelEndpoint>,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        let frame = match origin::of_root(self.store(), session_id).await {
            Ok(frame) => frame,
            Err(e) => {
                // No frame to run in (the session is gone), so none to store the end in either.
                let reason = e.to_string();
                let failed = TurnEnd::Failed { reason: reason.clone() };
                for event in
                    [Event::TurnEnded { outcome: failed }, Event::TurnRunning { running: false }]
                {
                    self.emit(EventEnvelope::session(session_id, source, event));
                }
                return TurnOutcome::Failed { message: reason };
            }
        };
        let emitter = self.emitter(session_id, source, frame);
        let ran = match step {
            Step::Turn(text) => {
                let text = text.as_deref();
                self.prepare_and_run(session_id, text, chain, &emitter, cancel).await
            }
            Step::Resume => self.settle_and_run(session_id, chain, &emitter, cancel).await,
        };
        let outcome = match ran {
            Ok(o) => o,
            Err(e) => {
                TurnOutcome::Failed { message: e.turn_failure(self.store().path(), session_id) }
            }
        };
        self.finish(session_id, &emitter, &outcome).await;
        outcome
    }

    /// Whether a live process (maybe this one) holds the session's runner row.
    pub(super) async fn runner_elsewhere(
        &self,
        session_id: i64,
    ) -> Result<bool, skald_store::StoreError> {
        let alive = self.liveness();
        self.store().session_held(session_id, &alive).await
    }

    async fn prepare_and_run(
        &self,
        session_id: i64,
        text: Option<&str>,
        chain: Vec<ModelEndpoint>,
        emitter: &TurnEmitter,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, EngineError> {
        let store = self.store();
        let root = store.root_frame(session_id).await?;
        // A trailing prompt without an answer is a turn that died before the model replied (a
        // synthetic note, e.g. a reconciled call's, is no prompt: it stays for this turn).
        if let Some(last) = store.last_live_message(root.id).await?
            && matches!(last.role(), Ok(Role::User | Role::Agent))
            && !last.is_synthetic
        {
            store.mark_message_failed(last.id).await?;
        }
        // Steers left unconsumed by a crash seed this turn, before the new message.
        // Without a new message the turn runs on those steers (already echoed when sent).
        crate::turn::fold_root_inputs(store, emitter, session_id, root.id).await?;
        if let Some(text) = text {
            let message_id = store
                .append_message(&NewMessage {
                    stack_id: root.id,
                    role: Some(Role::User),
                    content: text.to_string(),
                    ..Default::default()
                })
                .await?;
            emitter.emit(Event::UserMessage { message_id, content: text.to_string() });
        }
        // The echo goes out before anything else the turn emits.
        emitter.emit(Event::TurnRunning { running: true });
        let ctx = self.turn_ctx(session_id, emitter.source(), chain, emitter).await?;
        run_rounds(&ctx, cancel).await
    }

    /// Settles the calls earlier runs left open, then continues the turn (the resume step).
    async fn settle_and_run(
        &self,
        session_id: i64,
        chain: Vec<ModelEndpoint>,
        emitter: &TurnEmitter,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, EngineError> {
        emitter.emit(Event::TurnRunning { running: true });
        let ctx = self.turn_ctx(session_id, emitter.source(), chain, emitter).await?;
        crate::turn::resume(&ctx, cancel).await
    }

    /// Resolves everything a turn (or a resume) of the session's root frame needs.
    pub(super) async fn turn_ctx(
        &self,
        session_id: i64,
        source: &str,
        chain: Vec<ModelEndpoint>,
        emitter: &TurnEmitter,
    ) -> Result<TurnCtx, EngineError> {
        let store = self.store();
        let session = store.session(session_id).await?;
        let root = store.root_frame(session_id).await?;
        let cfg = self.config();
        let run_context = stored_run_context(session_id, session.run_context.as_deref())?;
        let cwd = crate::launch_env::launch_dir().unwrap_or_else(|| self.data_dir().to_path_buf());
        let workdir = run_context.effective_workdir(&cwd);
        let agent = agents::load(self.data_dir(), &session.agent_id)?;
        // The session's pinned client (a task started with `client`) or the agent's, then its
        // scope and strength pick the order; models that kept failing in earlier turns (health
        // is engine-wide) go last.
        let models = chain;
        let chain = skald_llm::resolve_chain(
            &models,
            session.client.as_deref().or(agent.meta.client.as_deref()),
            agent.meta.scope.as_deref(),
            agent.meta.strength,
            self.inner.llm.health(),
        );
        let llm = self.inner.llm.with_settings(LlmSettings {
            request_timeout: Duration::from_secs(cfg.llm.request_timeout_secs),
            idle_timeout: Duration::from_secs(cfg.llm.idle_timeout_secs),
            ..LlmSettings::default()
        });
        let rules = load_rules(store, run_context.security_group.as_deref()).await;
        let build = BuildSettings::for_chain(&cfg, &chain);
        let deps = TurnDeps {
            store: store.clone(),
            llm,
            tools: self.inner.tools.clone(),
            decisions: self.inner.decisions.clone(),
            context_cache: self.inner.context_cache.clone(),
            data_dir: self.data_dir().to_path_buf(),
            home_dir: self.home_dir().map(Path::to_path_buf),
            start_task: self.task_starter(),
            mcp: self.mcp(),
            edit_mcp: self.mcp_editor(),
        };
        let policy = TurnPolicy {
            session_id,
            source: source.to_string(),
            scratchpad_session_id: session.scratchpad_session_id.unwrap_or(session_id),
            models,
            rules,
            dynamic_fragments: run_context.system_prompt.clone(),
            run_context,
            workdir,
            auto_deny: session.auto_deny_approvals,
            background: session.is_ephemeral,
            build,
            max_rounds: cfg.llm.max_tool_rounds,
            max_subagent_depth: cfg.llm.max_subagent_depth,
            max_parallel_subagents: cfg.llm.max_parallel_subagents.max(1) as usize,
            max_async_tasks_per_reply: cfg.llm.max_async_tasks_per_reply.max(1) as usize,
            max_async_tasks_per_turn: cfg.llm.max_async_tasks_per_turn.max(1) as usize,
            request_log: cfg.llm.request_log.enabled,
        };
        let grants = crate::turn::Grants::new(store.session_tool_groups(session_id).await?);
        let frame = FrameCtx {
            stack_id: root.id,
            depth: 0,
            agent,
            chain,
            grants,
            emitter: emitter.clone(),
            cancel: CancellationToken::new(),
        };
        Ok(TurnCtx::new(deps, policy, frame))
    }

    pub(super) async fn finish(
        &self,
        session_id: i64,
        emitter: &TurnEmitter,
        outcome: &TurnOutcome,
    ) {
        // A stop drops the steers nobody will fold now.
        if *outcome == TurnOutcome::Cancelled
            && let Ok(dropped) = self.store().discard_steers(session_id).await
            && !dropped.is_empty()
        {
            emitter.emit(Event::SteersDiscarded { pending_input_ids: dropped });
        }
        let end = outcome.end();
        let stored = self.store().record_turn_end(session_id, emitter.frame().stack_id, &end).await;
        // Sent even when it could not be stored: a client must not wait for a turn that ended.
        if let Err(e) = stored {
            tracing::warn!(session_id, "cannot store how the turn ended: {e}");
        }
        // An async task's child that ended reports to its parent — before `turn_ended`, so a
        // client that sees the end finds the lease released as soon as it was.
        self.task_ended(session_id, outcome).await;
        emitter.emit(Event::TurnEnded { outcome: end });
        emitter.emit(Event::TurnRunning { running: false });
    }
}

pub(super) fn validate_source(source: &str) -> Result<(), EngineError> {
    if source.is_empty() || !source.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(EngineError::InvalidInput(format!(
            "invalid source `{source}`: use letters, digits and `-`"
        )));
    }
    Ok(())
}

/// The stored run context of a new session working in `workdir` (none: where Skald runs).
pub(super) fn workdir_run_context(workdir: Option<&Path>) -> Result<Option<String>, EngineError> {
    let run_context = workdir.map(|w| RunContext {
        working_directory: Some(w.display().to_string()),
        ..Default::default()
    });
    run_context.as_ref().map(encode_run_context).transpose()
}

/// Whether two paths name the same directory (through links when both exist).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn encode_run_context(rc: &RunContext) -> Result<String, EngineError> {
    serde_json::to_string(rc)
        .map_err(|e| EngineError::Internal(format!("cannot encode a run context: {e}")))
}

/// A stored run context that does not parse is the engine's fault (or a hand edit of the
/// database), never the caller's.
fn stored_run_context(session_id: i64, json: Option<&str>) -> Result<RunContext, EngineError> {
    RunContext::parse(json).map_err(|e| {
        EngineError::Internal(format!(
            "the stored run context of session {session_id} is invalid: {e}"
        ))
    })
}
