//! Chat commands: send a message (start a turn or steer a running one), stop, a session's run
//! context. The runs they start live in `runner`; the turn itself in `crate::turn`.

use std::path::{Path, PathBuf};

use skald_protocol::{Event, EventEnvelope, SendResult};
use skald_store::repo::sessions::NewSession;

use super::Engine;
use super::run_context::{encode_run_context, stored_run_context, workdir_run_context};
use super::runner::Step;
use crate::error::EngineError;
use crate::session::origin;
use crate::turn::ParkMode;
use skald_protocol::RunContext;

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
        let waiting_for = store.calls_awaiting_human(session_id).await?;
        // Steers are folded into the root frame: that is where they come from.
        let frame = origin::of_root(store, session_id).await?;
        let (echo_source, content, waiting) =
            (source.to_string(), text.to_string(), waiting_for.clone());
        let queued = move |id: Option<i64>| {
            let pending_input_id = id.unwrap_or_default();
            let event = Event::SteerQueued { pending_input_id, content, waiting_for: waiting };
            vec![EventEnvelope::framed(session_id, &echo_source, frame, event)]
        };
        self.commit_events(store.add_steer(session_id, text, None), queued).await?;
        // The turn may have ended between the busy check and the insert, or there was none:
        // then nobody would fold this steer, so it starts the work of its own.
        if let Some((lease, chain, step)) = self.claim_late_steers(session_id).await {
            self.spawn_run(lease, chain, source, step, mode);
            return Ok(SendReceipt { session_id, steered: false, waiting_for: Vec::new() });
        }
        Ok(SendReceipt { session_id, steered: true, waiting_for })
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
}

pub(super) fn validate_source(source: &str) -> Result<(), EngineError> {
    if source.is_empty() || !source.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(EngineError::InvalidInput(format!(
            "invalid source `{source}`: use letters, digits and `-`"
        )));
    }
    Ok(())
}

/// Whether two paths name the same directory (through links when both exist).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
