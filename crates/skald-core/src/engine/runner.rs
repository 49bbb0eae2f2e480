//! The one runner: a `Lease` holds a session for one unit of work (a turn, a resume, a
//! compaction) in this process and across processes; runs are tasks the engine tracks, and the
//! steps they take (a turn, a resume, the late input after either, how each ends) live here.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;

use skald_llm::{LlmSettings, ModelEndpoint};
use skald_protocol::{Event, EventEnvelope, FrameOrigin, TurnEnd};
use skald_store::StoreError;
use skald_store::repo::history::{NewMessage, Role};
use skald_store::repo::sessions::SessionRuns;
use skald_store::repo::work::WorkKind;
use tokio_util::sync::CancellationToken;

use super::Engine;
use super::run_context::stored_run_context;
use crate::approval::gate::load_rules;
use crate::context::BuildSettings;
use crate::error::{EngineError, Holder};
use crate::session::origin;
use crate::session::registry::SessionHandle;
use crate::turn::{
    FrameCtx, ParkMode, TurnCtx, TurnDeps, TurnEmitter, TurnOutcome, TurnPolicy, run_rounds,
};
use crate::{agents, config};

/// One step of a run on a leased session.
pub(super) enum Step {
    /// A turn: with the user's message, or on the steers waiting for one.
    Turn(Option<String>),
    /// Settle the calls an earlier run left open (decisions, crash leftovers), then continue;
    /// waiting steers are folded at its first round boundary.
    Resume,
}

/// A session held for one unit of work: the in-process processing lock, the cross-process
/// `session_runners` row naming this engine's instance (alive while the instance's heartbeat
/// is; stops other processes request reach it through the instance's watch) and the work's
/// cancel token (a child of the engine's shutdown).
///
/// `release` gives it back; a lease dropped without it (a task aborted at shutdown) frees the
/// lock and cancels at once and deletes the row in the background.
pub struct Lease {
    engine: Engine,
    session_id: i64,
    handle: Arc<SessionHandle>,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    cancel: CancellationToken,
    released: bool,
    /// The queued work item this lease runs (claimed before it), finished with the run.
    work_item: Option<i64>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("session_id", &self.session_id).finish_non_exhaustive()
    }
}

impl Lease {
    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// The same lease, running the claimed work item `id`.
    pub(super) fn for_work_item(mut self, id: i64) -> Self {
        self.work_item = Some(id);
        self
    }

    /// The session's live state in this process.
    pub(super) fn handle(&self) -> Arc<SessionHandle> {
        self.handle.clone()
    }

    /// Cancelled by `stop` (from any process) and by the engine's shutdown.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Gives the session back: deletes the runner row, frees the lock.
    pub async fn release(mut self) {
        self.released = true;
        let store = self.engine.store();
        if let Err(e) = store.release_runner(self.session_id, self.engine.instance_id()).await {
            tracing::warn!(session_id = self.session_id, "cannot release the runner row: {e}");
        }
        self.engine.inner.instance.lease_given_back();
        self.handle.end();
        self.guard.take();
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        self.engine.inner.instance.lease_given_back();
        self.handle.end();
        self.guard.take();
        let store = self.engine.store().clone();
        let runner = self.engine.instance_id().to_string();
        let session_id = self.session_id;
        let processing = self.handle.processing.clone();
        // Under the lock, so a lease taken meanwhile keeps its row (it holds the lock). Best
        // effort: `shutdown` deletes whatever is left of this engine's rows as well.
        self.engine.inner.lifecycle.runtime().spawn(async move {
            if let Ok(_held) = processing.try_lock_owned() {
                let _ = store.release_runner(session_id, &runner).await;
            }
        });
    }
}

impl Engine {
    /// Holds `session_id` for one unit of work. Refused with `SessionBusy` while a turn or a
    /// compaction runs it here or in another live process, and with `ShuttingDown` once
    /// `shutdown` began.
    pub async fn acquire(&self, session_id: i64) -> Result<Lease, EngineError> {
        let lifecycle = &self.inner.lifecycle;
        if lifecycle.stopping() {
            return Err(EngineError::ShuttingDown);
        }
        let handle = self.inner.sessions.handle(session_id);
        let Ok(guard) = handle.processing.clone().try_lock_owned() else {
            return Err(EngineError::SessionBusy { session_id, holder: Holder::Here });
        };
        let alive = self.liveness();
        let claimed = self.store().claim_runner(session_id, &self.inner.instance.me, &alive).await;
        match claimed {
            Ok(()) => {}
            Err(StoreError::Conflict(_)) => {
                return Err(EngineError::SessionBusy { session_id, holder: Holder::OtherProcess });
            }
            Err(e) => return Err(e.into()),
        }
        self.inner.instance.lease_taken();
        let cancel = handle.begin(lifecycle.stop_token());
        Ok(Lease {
            engine: self.clone(),
            session_id,
            handle,
            guard: Some(guard),
            cancel,
            released: false,
            work_item: None,
        })
    }

    /// Runs `first` on the leased session in a task the engine tracks, then the steers sent too
    /// late for it; `wait_turn` tells how it ended. A turn that parks lets go of the session;
    /// in `Wait` mode this process adopts it and continues it when the decision comes.
    pub(super) fn spawn_run(
        &self,
        lease: Lease,
        chain: Vec<ModelEndpoint>,
        source: &str,
        first: Step,
        mode: ParkMode,
    ) {
        // Marked before the task starts, so a `wait_turn` right after this returns waits for it
        // (a turn this process already follows keeps its mark).
        let session_id = lease.session_id();
        let adopted = self.take_adopted(session_id).unwrap_or_default();
        let mark = adopted.mark.unwrap_or_else(|| RunMark::start(lease.handle.clone()));
        let counted = adopted.counted;
        let engine = self.clone();
        let source = source.to_string();
        let item = lease.work_item;
        self.inner.lifecycle.spawn(async move {
            let outcome = engine.run_steps(lease, chain, &source, first).await;
            if let Some(id) = item {
                engine.item_ended(session_id, id, &outcome).await;
            }
            engine.after_run(session_id, mark, counted, mode, outcome).await;
        });
    }

    /// Waits for the session's turn in this process to end and tells how it ended (the last
    /// one's end when none runs). `None` when this engine never ran a turn of the session.
    pub async fn wait_turn(&self, session_id: i64) -> Option<TurnOutcome> {
        let mut runs = self.inner.sessions.handle(session_id).runs();
        let state = runs.wait_for(|s| !s.running()).await.ok()?;
        state.last.clone()
    }

    /// Starts continuing the session's turn (settling recorded decisions and calls a crash left
    /// open, folding waiting steers) in a tracked task; `wait_turn` follows it.
    pub async fn start_resume(&self, session_id: i64, mode: ParkMode) -> Result<(), EngineError> {
        let session = self.store().session(session_id).await?;
        // The continuation a decision queued is this run's: claimed here, nobody runs it twice.
        let item = self.claim_queued(session_id).await?;
        let lease = match self.acquire(session_id).await {
            Ok(lease) => lease,
            Err(e) => {
                if let Some(id) = item {
                    self.store().unclaim_work(id).await?;
                }
                return Err(e);
            }
        };
        let lease = match item {
            Some(id) => lease.for_work_item(id),
            None => lease,
        };
        let chain = match self.model_chain() {
            Ok(chain) => chain,
            Err(e) => {
                lease.release().await;
                return Err(e);
            }
        };
        self.spawn_run(lease, chain, &session.source, Step::Resume, mode);
        Ok(())
    }

    /// Claims the session's queued work (a continuation, or an async task's run) for this
    /// engine, if any waits.
    async fn claim_queued(&self, session_id: i64) -> Result<Option<i64>, EngineError> {
        let store = self.store();
        for kind in [WorkKind::Continue, WorkKind::Task] {
            if let Some(item) =
                store.claim_work(self.instance_id(), kind, Some(&[session_id])).await?
            {
                return Ok(Some(item.id));
            }
        }
        Ok(None)
    }

    /// Settles recorded decisions and continues the session's turn in this process (folding
    /// steers queued meanwhile), waiting for further decisions when `mode` is `Wait`.
    pub async fn resume(
        &self,
        session_id: i64,
        mode: ParkMode,
    ) -> Result<TurnOutcome, EngineError> {
        self.start_resume(session_id, mode).await?;
        self.wait_turn(session_id).await.ok_or_else(|| {
            EngineError::Internal(format!("the resume of session {session_id} left no outcome"))
        })
    }

    /// Queues the session's continuation for whichever engine runs the background (this one
    /// too, when its background runs). Returns whether this engine will pick it up.
    pub(super) async fn continue_in_background(&self, session_id: i64) -> bool {
        if let Err(e) = self.store().enqueue_continue(session_id).await {
            tracing::warn!(session_id, "cannot queue the session's continuation: {e}");
            return false;
        }
        let here = self.inner.lifecycle.background() || self.adopted(session_id);
        if here {
            self.wake_worker();
        }
        here
    }
}

/// Marks a turn started on the session's handle, and ended when its last run ends (a run parked
/// in `Wait` mode keeps it) — as `Cancelled` when it never got to say (aborted at shutdown), so
/// no waiter hangs.
#[derive(Debug)]
pub(super) struct RunMark {
    handle: Arc<SessionHandle>,
    ended: bool,
}

impl RunMark {
    pub(super) fn start(handle: Arc<SessionHandle>) -> Self {
        handle.run_started();
        Self { handle, ended: false }
    }

    pub(super) fn end(mut self, outcome: TurnOutcome) {
        self.ended = true;
        self.handle.run_ended(outcome);
    }

    /// Ends the turn keeping the last outcome recorded (its work was done by another run).
    pub(super) fn end_as_it_was(mut self) {
        self.ended = true;
        self.handle.run_ended_as_it_was();
    }
}

impl Drop for RunMark {
    fn drop(&mut self) {
        if !self.ended {
            self.handle.run_ended(TurnOutcome::Cancelled);
        }
    }
}

/// The steps a run takes on its leased session, and what every step needs.
impl Engine {
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
                let mut endpoint = ModelEndpoint {
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
                };
                self.inner.windows.apply(&mut endpoint);
                endpoint
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
        let steps = async {
            match step {
                Step::Turn(text) => {
                    let text = text.as_deref();
                    self.prepare_and_run(session_id, text, chain, &emitter, cancel).await
                }
                Step::Resume => self.settle_and_run(session_id, chain, &emitter, cancel).await,
            }
        };
        // A bug that panics inside one turn ends that turn as failed, recorded and said, and the
        // session is released: its source keeps being served (the next message runs a turn).
        let ran = AssertUnwindSafe(steps).catch_unwind().await.unwrap_or_else(|panic| {
            let what = panic_text(panic.as_ref());
            tracing::error!(session_id, "a turn panicked: {what}");
            Err(EngineError::Internal(format!(
                "the turn stopped on an internal error ({what}); the session goes on"
            )))
        });
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
        // The emitter speaks for the root frame, read when the step began.
        let root = emitter.frame().stack_id;
        // A trailing prompt without an answer is a turn that died before the model replied (a
        // synthetic note, e.g. a reconciled call's, is no prompt: it stays for this turn).
        let last = store.last_live_message(root).await?;
        let first_prompt = last.is_none();
        if let Some(last) = last
            && matches!(last.role(), Ok(Role::User | Role::Agent))
            && !last.is_synthetic
        {
            store.mark_message_failed(last.id).await?;
        }
        // Steers left unconsumed by a crash seed this turn, before the new message.
        // Without a new message the turn runs on those steers (already echoed when sent).
        crate::turn::fold_root_inputs(store, emitter, session_id, root).await?;
        if let Some(text) = text {
            panic_if_injected(text);
            let new = NewMessage {
                stack_id: root,
                role: Some(Role::User),
                content: text.to_string(),
                ..Default::default()
            };
            let content = text.to_string();
            emitter
                .commit_created(store.append_message(&new), move |message_id| {
                    vec![Event::UserMessage { message_id, content }]
                })
                .await?;
            // The first prompt names a session nobody named, so lists can tell sessions apart.
            if first_prompt && let Some(title) = crate::session::title::from_prompt(text) {
                let source = emitter.source().to_string();
                let changed = move |_| {
                    vec![EventEnvelope::session(session_id, &source, Event::SessionsChanged {})]
                };
                self.commit_events(store.title_untitled_session(session_id, &title), changed)
                    .await?;
            }
        }
        // The echo goes out before anything else the turn emits.
        emitter.emit(Event::TurnRunning { running: true });
        let recall = Recall(text.map(str::to_string));
        let ctx = self.turn_ctx(session_id, emitter.source(), chain, emitter, Some(recall)).await?;
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
        let recall = Some(Recall(None));
        let ctx = self.turn_ctx(session_id, emitter.source(), chain, emitter, recall).await?;
        crate::turn::resume(&ctx, cancel).await
    }

    /// Resolves everything a turn (or a resume) of the session's root frame needs. With
    /// `recall`, the memory store is asked for the turn's context (a run; not a size estimate).
    pub(super) async fn turn_ctx(
        &self,
        session_id: i64,
        source: &str,
        chain: Vec<ModelEndpoint>,
        emitter: &TurnEmitter,
        recall: Option<Recall>,
    ) -> Result<TurnCtx, EngineError> {
        let store = self.store();
        let session = store.session(session_id).await?;
        // Every caller passes the root frame's emitter.
        let root = emitter.frame().stack_id;
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
        let mut root_fragments = Vec::new();
        root_fragments.extend(self.source_turn_context(session_id, &session.source).await);
        if let Some(Recall(message)) = recall.filter(|_| self.inner.memory.recalls_context()) {
            let message = match message {
                Some(text) => text,
                None => self.latest_prompt(root).await,
            };
            root_fragments.extend(self.inner.memory.query_context(session_id, &message).await);
        }
        let deps = TurnDeps {
            store: store.clone(),
            llm,
            tools: self.inner.tools.clone(),
            context_cache: self.inner.context_cache.clone(),
            data_dir: self.data_dir().to_path_buf(),
            home_dir: self.home_dir().map(Path::to_path_buf),
            start_task: self.task_starter(),
            mcp: self.mcp(),
            edit_mcp: self.mcp_editor(),
            jobs: self.job_desk(),
            windows: self.inner.windows.clone(),
            elicitations: self.inner.elicitations.clone(),
        };
        let policy = TurnPolicy {
            session_id,
            source: source.to_string(),
            scratchpad_session_id: session.scratchpad_session_id.unwrap_or(session_id),
            models,
            rules,
            dynamic_fragments: run_context.system_prompt.clone(),
            root_fragments,
            surface: cfg.source_context(&session.source),
            run_context,
            workdir,
            auto_deny: session.auto_deny_approvals,
            background: session.is_ephemeral,
            interactive: session.is_interactive,
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
            stack_id: root,
            depth: 0,
            agent,
            chain,
            grants,
            emitter: emitter.clone(),
            cancel: CancellationToken::new(),
            memory: Default::default(),
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
        // `turn_ended` rides the row that records the end.
        let stack_id = emitter.frame().stack_id;
        let ended = vec![Event::TurnEnded { outcome: end.clone() }];
        let stored =
            emitter.commit(ended, self.store().record_turn_end(session_id, stack_id, &end)).await;
        // Sent even when it could not be stored: a client must not wait for a turn that ended.
        if let Err(e) = stored {
            tracing::warn!(session_id, "cannot store how the turn ended: {e}");
            emitter.emit(Event::TurnEnded { outcome: end });
        }
        // Only the runs the session is (one read; most sessions are none) record their end.
        let runs = self.store().runs_of_session(session_id).await.unwrap_or_else(|e| {
            tracing::warn!(session_id, "cannot tell which runs the session is: {e}");
            SessionRuns { task: true, job_run: true, tick: true }
        });
        // An async task's child that ended reports to its parent.
        if runs.task {
            self.task_ended(session_id, outcome).await;
        }
        // A scheduled job's run records how it ended.
        if runs.job_run {
            self.job_run_ended(session_id, outcome).await;
        }
        // A TIC tick records how it ended.
        if runs.tick {
            self.tic_tick_ended(session_id, outcome).await;
        }
        emitter.emit(Event::TurnRunning { running: false });
    }
}

/// Whether a turn asks the memory store for context, and for which message (`None`: the
/// latest prompt of the frame, for a turn on steers or a resume).
pub(super) struct Recall(pub Option<String>);

/// Crash tests only: a prompt containing the text of `SKALD_PANIC_ON_PROMPT` panics its turn (as
/// a bug would), so the tests can see the session survive it. Unset: nothing happens.
pub const PANIC_ON_PROMPT_ENV: &str = "SKALD_PANIC_ON_PROMPT";

fn panic_if_injected(prompt: &str) {
    if let Some(marker) = std::env::var_os(PANIC_ON_PROMPT_ENV)
        && let Some(marker) = marker.to_str().filter(|m| !m.is_empty())
        && prompt.contains(marker)
    {
        panic!("injected by {PANIC_ON_PROMPT_ENV}");
    }
}

/// What a panic said, when it said it with text.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}
