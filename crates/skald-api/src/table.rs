//! The table itself: one entry per operation (see `declare.rs` for the form of an entry).
//!
//! `errors` lists what the engine method can return (a malformed call's `invalid_input` and an
//! unknown op's `not_found` apply to all); in debug builds returning an unlisted code panics.
//! `events` lists what the operation emits, including the events of a turn it starts.

use skald_core::engine::ChatOptions;
use skald_protocol::{
    AgentDefinition, AgentDetail, AgentSummary, Answer, ApprovalRuleInput, ApprovalRuleView,
    BypassView, CompactResult, ConnectionTest, DebugMessage, Decision, DecisionInput,
    ElicitationAction, ElicitationAnswered, HomeNotice, HomeSource, Inbox, InterruptedCall,
    ItemRef, JobDeleted, JobInfo, JobInput, JobRunInfo, JobSchedule, LlmClientInput,
    McpAuthorization, McpServerInfo, McpServerInput, MediaFile, MemoryEdit, MemoryFileContent,
    MemoryFileInfo, NotificationInfo, Page, ReconcileChoice, RunContext, SchedulePreview,
    SearchQuery, SearchResults, SendResult, SessionDetail, SessionListQuery, SessionMatches,
    SessionMeta, SessionRef, SessionSummary, SessionUsage, SessionWindow, SettingsView, StopResult,
    TaskInfo, TicStatus, TicTickDetail, TicTickInfo, ToolGroupsReset, TurnStatus, WindowQuery,
};

use crate::Caller;
use crate::declare::operations;

operations! {
    /// One page of the session list, newest first, filtered as the query says.
    list_sessions {
        params: ListSessionsParams {
            /// Left out, or in part: the first page of all sessions, `DEFAULT_PER_PAGE` long.
            #[serde(default)]
            query: SessionListQuery,
        },
        result: Page<SessionSummary>,
        errors: [Storage],
        events: [],
        run: |engine, _, p| engine.list_sessions(p.query).await,
    }

    /// The session debug tree: every frame, message and tool call, children under their call.
    session_detail {
        params: SessionDetailParams { #[ts(type = "number")] session_id: i64 },
        result: SessionDetail,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.session_detail(p.session_id).await,
    }

    /// A window of the session tree, keyset-paged: the newest rows, the page before or after a
    /// row, or the rows around one (a link to a message, a jump to a pending approval). Long
    /// texts and results come as previews with their full length; `session_item` has them whole.
    session_window {
        params: SessionWindowParams {
            #[ts(type = "number")]
            session_id: i64,
            query: WindowQuery,
        },
        result: SessionWindow,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.session_window(p.session_id, p.query).await,
    }

    /// One row of the session tree whole (what a window cut to a preview, read on expand).
    session_item {
        params: SessionItemParams {
            #[ts(type = "number")]
            session_id: i64,
            item: ItemRef,
        },
        result: DebugMessage,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.session_item(p.session_id, p.item).await,
    }

    /// One media file an MCP tool call saved (its `media[index]`, 0-based): kind, declared MIME
    /// type and the bytes as base64, read from the data dir by the call's record, never by a
    /// path. A file over 10 MB is refused with its size and where it is.
    tool_media {
        params: ToolMediaParams {
            #[ts(type = "number")]
            tool_call_id: i64,
            index: u32,
        },
        result: MediaFile,
        errors: [InvalidInput, NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.tool_media(p.tool_call_id, p.index).await,
    }

    /// The best hits across every session, best first: words of messages (the last one, while
    /// it is typed, as a prefix) and substrings of tool names, paths and command lines, each
    /// with a snippet whose matched stretches are marked. Any text is valid; FTS syntax in it
    /// is plain text.
    search {
        params: SearchParams { query: SearchQuery },
        result: SearchResults,
        errors: [Storage],
        events: [],
        run: |engine, _, p| engine.search(p.query).await,
    }

    /// Every message and tool call of one session (sub-agents included) that matches the text
    /// as `search` does, in the order the session shows them: find-in-session's next/previous.
    find_in_session {
        params: FindInSessionParams {
            #[ts(type = "number")]
            session_id: i64,
            text: String,
        },
        result: SessionMatches,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.find_in_session(p.session_id, &p.text).await,
    }

    /// Names a session (`title: null` or blank clears the name); lists, search and the debug
    /// view show it.
    rename_session {
        params: RenameSessionParams {
            #[ts(type = "number")]
            session_id: i64,
            title: Option<String>,
        },
        result: SessionMeta,
        errors: [InvalidInput, NotFound, Storage],
        events: [SessionsChanged],
        run: |engine, _, p| engine.rename_session(p.session_id, p.title).await,
    }

    /// The session a source's chat writes to, created on first use.
    active_session {
        params: ActiveSessionParams { source: String },
        result: SessionRef,
        errors: [InvalidInput, Storage],
        events: [SessionsChanged],
        run: |engine, _, p| engine
            .active_session(&p.source, &ChatOptions::default())
            .await
            .map(|session_id| SessionRef { session_id }),
    }

    /// Sends a user message to the source's active session: starts a turn, or steers the one
    /// running (folded in at its next round). The turn runs on by itself; its progress arrives
    /// as events, and a call that needs a human waits in the inbox.
    send_message {
        params: SendMessageParams {
            source: String,
            text: String,
            /// The agent of a session this message creates; an active session running another
            /// agent is an error naming both.
            #[serde(default)]
            #[ts(optional)]
            agent_id: Option<String>,
            /// The directory the session must work in: an active session working elsewhere is
            /// an error naming both (start a new one with `new_session`).
            #[serde(default)]
            #[ts(optional)]
            workdir: Option<String>,
            /// Where a session this message creates works, when `workdir` is not given (the
            /// command line passes the directory it runs in).
            #[serde(default)]
            #[ts(optional)]
            new_session_workdir: Option<String>,
            /// Pre-approve every call of the session that would need approval ("this session",
            /// all tools; deny rules and protected paths still ask), granted by the caller.
            #[serde(default)]
            #[ts(optional)]
            approve_all: Option<bool>,
        },
        result: SendResult,
        // `cancelled`: the engine is shutting down and starts no turn.
        errors: [InvalidInput, Config, Storage, Cancelled],
        events: [
            SessionsChanged, UserMessage, SteerQueued, SteerFolded, TurnRunning, TokenDelta,
            Thinking, ToolStart, ToolProgress, ToolDone, ToolError, ToolCancelled, ToolRejected,
            ApprovalRequested, AgentQuestion, FileChanged, ModelFallback, ModelRetry, LlmFailed,
            Truncated, InterimAnswer, Done, TurnEnded, Compacting, CompactionDone, TaskUpdate,
            ElicitationRequested, ElicitationResolved,
        ],
        run: |engine, caller, p| {
            let explicit = p.workdir.map(std::path::PathBuf::from);
            let opts = ChatOptions {
                agent_id: p.agent_id,
                workdir_explicit: explicit.is_some(),
                workdir: explicit.or_else(|| p.new_session_workdir.map(std::path::PathBuf::from)),
                approve_all: p.approve_all.unwrap_or(false),
                granted_by: caller.surface(),
                // The app and `serve` keep the turn going when a person decides; a one-shot
                // command ends parked unless its engine runs the background.
                park_mode: match caller {
                    Caller::Cli => engine.default_park_mode(),
                    _ => skald_core::turn::ParkMode::Wait,
                },
            };
            let receipt = engine.send_message(&p.source, &p.text, opts).await?;
            // The turn is the engine's task: it outlives the call, the window and the connection.
            Ok(receipt.result())
        },
    }

    /// Stops the session's running turn, here or in another process; unconsumed steers are
    /// kept but discarded.
    stop_turn {
        params: StopTurnParams { #[ts(type = "number")] session_id: i64 },
        result: StopResult,
        errors: [NotFound, Storage],
        events: [SteersDiscarded, ToolCancelled, TurnEnded, TurnRunning],
        run: |engine, _, p| engine.stop(p.session_id).await.map(|stopped| StopResult { stopped }),
    }

    /// The async tasks (`execute_task` mode `async`) the session started, oldest first: each
    /// one's child session, state and report.
    list_tasks {
        params: ListTasksParams { #[ts(type = "number")] session_id: i64 },
        result: Vec<TaskInfo>,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.list_tasks(p.session_id).await,
    }

    /// Continues a failed or cancelled async task (named by its child session) from its last
    /// step in the background; its new report reaches the parent session like the first.
    /// `conflict` when the task is not failed or cancelled.
    continue_task {
        params: ContinueTaskParams { #[ts(type = "number")] session_id: i64 },
        result: TaskInfo,
        errors: [NotFound, Conflict, Storage, Cancelled],
        events: [
            TaskUpdate, UserMessage, SteerFolded, TurnRunning, TokenDelta, Thinking, ToolStart,
            ToolProgress, ToolDone, ToolError, ToolCancelled, ToolRejected, ApprovalRequested, AgentQuestion,
            FileChanged, ModelFallback, ModelRetry, LlmFailed, Truncated, InterimAnswer, Done,
            TurnEnded, ElicitationRequested, ElicitationResolved,
        ],
        run: |engine, _, p| engine.continue_task(p.session_id).await,
    }

    /// Whether a turn runs for the session now (in any process).
    turn_running {
        params: TurnRunningParams { #[ts(type = "number")] session_id: i64 },
        result: TurnStatus,
        errors: [Storage],
        events: [],
        run: |engine, _, p| {
            engine.is_running(p.session_id).await.map(|running| TurnStatus { running })
        },
    }

    /// Starts a fresh session for the source and makes it the active one; every client showing
    /// the source follows it.
    /// With `agent_id`, the new session runs that agent (a chat or task agent; `main` when
    /// absent); the agent of an existing session never changes. With `workdir` (an absolute
    /// path to a directory), its tools work there; without, where Skald runs. The old session's
    /// bypasses end.
    new_session {
        params: NewSessionParams {
            source: String,
            #[serde(default)]
            #[ts(optional)]
            agent_id: Option<String>,
            #[serde(default)]
            #[ts(optional)]
            workdir: Option<String>,
        },
        result: SessionRef,
        errors: [InvalidInput, NotFound, Config, Storage],
        events: [NewSession, SessionsChanged, BypassesChanged],
        run: |engine, _, p| {
            let workdir = p.workdir.as_deref().map(std::path::Path::new);
            engine
                .new_session_in(&p.source, p.agent_id.as_deref(), workdir)
                .await
                .map(|session_id| SessionRef { session_id })
        },
    }

    /// The context the next request carries (as compaction counts it) against the model's
    /// window, the last reported request, and what the session spent.
    session_usage {
        params: SessionUsageParams { #[ts(type = "number")] session_id: i64 },
        result: SessionUsage,
        errors: [NotFound, Config, Storage, Internal],
        events: [],
        run: |engine, _, p| engine.session_usage(p.session_id).await,
    }

    /// Summarises the session's older history now (`/compact [focus]`); refused while a turn
    /// runs, cancelled by `stop_turn`.
    compact_session {
        params: CompactSessionParams {
            #[ts(type = "number")]
            session_id: i64,
            /// What the summary should keep in particular.
            focus: Option<String>,
        },
        result: CompactResult,
        errors: [NotFound, Conflict, Config, Storage, Llm, Cancelled, Internal],
        events: [Compacting, CompactionDone],
        run: |engine, _, p| engine.compact_session(p.session_id, p.focus).await,
    }

    /// Revokes the tool groups the session's agents activated (`/resettools`).
    reset_tool_groups {
        params: ResetToolGroupsParams { #[ts(type = "number")] session_id: i64 },
        result: ToolGroupsReset,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| {
            engine.reset_tool_groups(p.session_id).await.map(|revoked| ToolGroupsReset { revoked })
        },
    }

    /// Every approval and question waiting for a human, across sessions, oldest first.
    inbox {
        params: InboxParams {},
        result: Inbox,
        errors: [Storage],
        events: [],
        run: |engine, _, _| engine.inbox().await,
    }

    /// Records a human decision about a waiting call, as made by the calling surface (the first
    /// decision wins), with the bypass it asks for; a bypass scope that does not fit the call is
    /// refused and nothing is recorded. A waiting turn continues; the app and `serve` continue a
    /// parked one.
    decide {
        params: DecideParams {
            #[ts(type = "number")]
            tool_call_id: i64,
            input: DecisionInput,
        },
        result: Decision,
        errors: [InvalidInput, NotFound, Conflict, Storage],
        events: [ApprovalResolved, BypassesChanged, TurnRunning],
        run: |engine, caller, p| engine.decide(p.tool_call_id, p.input, caller.surface()).await,
    }

    /// Every active bypass across sessions, oldest first (the inbox lists them).
    active_bypasses {
        params: ActiveBypassesParams {},
        result: Vec<BypassView>,
        errors: [Storage],
        events: [],
        run: |engine, _, _| engine.active_bypasses().await,
    }

    /// The session's active bypasses, oldest first (the chat shows them).
    session_bypasses {
        params: SessionBypassesParams { #[ts(type = "number")] session_id: i64 },
        result: Vec<BypassView>,
        errors: [Storage],
        events: [],
        run: |engine, _, p| engine.session_bypasses(p.session_id).await,
    }

    /// Ends a bypass now, as revoked by the calling surface; the calls it covered ask again.
    /// Revoking one that already ended changes nothing.
    revoke_bypass {
        params: RevokeBypassParams { #[ts(type = "number")] id: i64 },
        result: BypassView,
        errors: [NotFound, Storage],
        events: [BypassesChanged],
        run: |engine, caller, p| engine.revoke_bypass(p.id, caller.surface()).await,
    }

    /// Answers an agent's clarification question, as the calling surface.
    answer_question {
        params: AnswerQuestionParams {
            #[ts(type = "number")]
            tool_call_id: i64,
            answer: String,
        },
        result: Answer,
        errors: [InvalidInput, NotFound, Conflict, Storage],
        events: [ClarificationResolved, TurnRunning],
        run: |engine, caller, p| engine.answer(p.tool_call_id, &p.answer, caller.surface()).await,
    }

    /// Answers a question an MCP server asks during a call (accept with the form's values,
    /// decline or cancel), as the calling surface. `delivered`: the waiting call got it now.
    answer_elicitation {
        params: AnswerElicitationParams {
            #[ts(type = "number")]
            elicitation_id: i64,
            action: ElicitationAction,
            #[ts(type = "Record<string, unknown> | null")]
            content: Option<serde_json::Map<String, serde_json::Value>>,
        },
        result: ElicitationAnswered,
        errors: [InvalidInput, NotFound, Conflict, Storage, Internal],
        events: [ElicitationResolved],
        run: |engine, caller, p| engine
            .answer_elicitation(p.elicitation_id, p.action, p.content, caller.surface())
            .await
            .map(|delivered| ElicitationAnswered { delivered }),
    }

    /// The session's calls that a crash cut off while they ran and that were not safe to run
    /// again by themselves (decision 3), with what the user said about each, oldest first.
    interrupted_calls {
        params: InterruptedCallsParams { #[ts(type = "number")] session_id: i64 },
        result: Vec<InterruptedCall>,
        errors: [NotFound, Storage, Internal],
        events: [],
        run: |engine, _, p| engine.interrupted_calls(p.session_id).await,
    }

    /// Interrupted calls of every session that still wait for the user's word (no choice made
    /// yet), oldest first: the Agent Inbox lists them beside approvals and questions.
    open_interrupted_calls {
        params: OpenInterruptedCallsParams {},
        result: Vec<InterruptedCall>,
        errors: [Storage, Internal],
        events: [],
        run: |engine, _, _| engine.open_interrupted_calls().await,
    }

    /// The user's word on an interrupted call, as the calling surface: `ran`, `did_not_run`, or
    /// `run_again` (runs it now; a rule that denies it refuses with nothing recorded). Set once:
    /// the same choice again is a no-op, another is refused. The model is told at its next round.
    reconcile_call {
        params: ReconcileCallParams {
            #[ts(type = "number")]
            tool_call_id: i64,
            choice: ReconcileChoice,
        },
        result: InterruptedCall,
        errors: [InvalidInput, NotFound, Conflict, Storage, Internal],
        events: [InterruptedCall],
        run: |engine, caller, p| {
            engine.reconcile_call(p.tool_call_id, p.choice, caller.surface()).await
        },
    }

    /// The MCP servers of `mcp.servers` (or only `server`) and where each stands; with
    /// `start`, the enabled ones are started first so their tools are listed (a failure is the
    /// server's `error`).
    list_mcp_servers {
        params: ListMcpServersParams {
            #[serde(default)] start: bool,
            #[serde(default)] server: Option<String>,
        },
        result: Vec<McpServerInfo>,
        errors: [NotFound],
        events: [],
        run: |engine, _, p| engine.list_mcp_servers(p.start, p.server.as_deref()).await,
    }

    /// Adds a server to `mcp.servers` in config.yml (in place, validated like a hand edit: a
    /// taken or malformed name, both or neither of `command` and `url` are `invalid_input`);
    /// returns the servers. It starts when an agent first activates it.
    add_mcp_server {
        params: AddMcpServerParams { server: McpServerInput },
        result: Vec<McpServerInfo>,
        errors: [InvalidInput, Config, Storage, Internal],
        events: [ConfigReloaded],
        run: |engine, _, p| engine.add_mcp_server(p.server).await,
    }

    /// Removes a server from `mcp.servers`; returns the servers.
    remove_mcp_server {
        params: RemoveMcpServerParams { name: String },
        result: Vec<McpServerInfo>,
        errors: [InvalidInput, Config, Storage, Internal],
        events: [ConfigReloaded],
        run: |engine, _, p| engine.remove_mcp_server(&p.name).await,
    }

    /// Enables or disables a server (a disabled one is never started nor offered to agents);
    /// returns the servers.
    set_mcp_server_enabled {
        params: SetMcpServerEnabledParams { name: String, enabled: bool },
        result: Vec<McpServerInfo>,
        errors: [InvalidInput, Config, Storage, Internal],
        events: [ConfigReloaded],
        run: |engine, _, p| engine.set_mcp_server_enabled(&p.name, p.enabled).await,
    }

    /// Starts the OAuth authorization of an HTTP server (one without an API key) and returns the
    /// page the user opens to consent: the desktop opens it in the browser, the CLI prints it.
    /// The browser comes back to Skald on 127.0.0.1 (one answer, within five minutes); the
    /// tokens go to the OS keychain and the server connects at its next use (its state is
    /// `authorizing` meanwhile). Starting again replaces an authorization in progress.
    authorize_mcp_server {
        params: AuthorizeMcpServerParams { name: String },
        result: McpAuthorization,
        errors: [NotFound, InvalidInput, Conflict],
        events: [],
        run: |engine, _, p| engine.authorize_mcp_server(&p.name).await,
    }

    /// Forgets an HTTP server's OAuth tokens (removed from the keychain); it asks for
    /// authorization again at its next start. Returns the server.
    forget_mcp_authorization {
        params: ForgetMcpAuthorizationParams { name: String },
        result: Vec<McpServerInfo>,
        errors: [NotFound, InvalidInput, Conflict],
        events: [],
        run: |engine, _, p| engine.forget_mcp_authorization(&p.name).await,
    }

    /// The LLM clients in fallback order (never a key), the data dir and the config path.
    settings {
        params: SettingsParams {},
        result: SettingsView,
        errors: [],
        events: [],
        run: |engine, _, _| engine.settings().await,
    }

    /// Replaces the config-file clients and the fallback order in config.yml (validated like a
    /// hand edit first); the environment's client is not part of it. With the `revision` of the
    /// view the list came from, a file changed since (by hand, another window) is `conflict`. Where config.yml is
    /// watched (the app, `skald serve`), the rewrite is announced as `config_reloaded`.
    save_llm_clients {
        params: SaveLlmClientsParams {
            clients: Vec<LlmClientInput>,
            fallback: Vec<String>,
            #[serde(default)]
            revision: Option<String>,
        },
        result: SettingsView,
        errors: [InvalidInput, Conflict, Config, Storage, Internal],
        events: [ConfigReloaded],
        run: |engine, _, p| engine.save_llm_clients(p.clients, p.fallback, p.revision.as_deref()).await,
    }

    /// Stores a client's API key in the OS keychain, or removes it (`key: null`).
    set_api_key {
        params: SetApiKeyParams { client: String, key: Option<String> },
        result: (),
        errors: [Storage],
        events: [],
        run: |engine, _, p| engine.set_api_key(&p.client, p.key).await,
    }

    /// Asks the client's endpoint for its model list.
    test_connection {
        params: TestConnectionParams { client: String },
        result: ConnectionTest,
        errors: [NotFound, Config],
        events: [],
        run: |engine, _, p| engine.test_connection(&p.client).await,
    }

    /// Every agent (the data dir's `agents/<id>/` folders over the built-ins), by id; a broken
    /// one is listed with its error naming the file.
    list_agents {
        params: ListAgentsParams {},
        result: Vec<AgentSummary>,
        errors: [Storage],
        events: [],
        run: |engine, _, _| engine.list_agents().await,
    }

    /// One agent's meta and `AGENT.md` as written (directives unresolved), for editing.
    get_agent {
        params: GetAgentParams { id: String },
        result: AgentDetail,
        errors: [NotFound],
        events: [],
        run: |engine, _, p| engine.get_agent(&p.id).await,
    }

    /// Creates or replaces a user agent (`[a-z0-9-]` id; the same id as a built-in overrides
    /// it). The meta and every `INCLUDE` are checked before either file is written; sessions
    /// pick the change up on their next turn. Where `agents/` is watched (the app, `skald
    /// serve`), the change is announced as `agents_changed` to every window.
    save_agent {
        params: SaveAgentParams { id: String, meta: AgentDefinition, prompt: String },
        result: AgentSummary,
        errors: [InvalidInput, NotFound, Internal],
        events: [AgentsChanged],
        run: |engine, _, p| engine.save_agent(&p.id, p.meta, &p.prompt).await,
    }

    /// Deletes a user agent; deleting one that overrides a built-in restores the built-in. A
    /// built-in itself cannot be deleted (`conflict`); announced like `save_agent`.
    delete_agent {
        params: DeleteAgentParams { id: String },
        result: (),
        errors: [InvalidInput, NotFound, Conflict, Internal],
        events: [AgentsChanged],
        run: |engine, _, p| engine.delete_agent(&p.id).await,
    }

    /// Every approval rule, in evaluation order per group.
    approval_rules {
        params: ApprovalRulesParams {},
        result: Vec<ApprovalRuleView>,
        errors: [Storage],
        events: [],
        run: |engine, _, _| engine.approval_rules().await,
    }

    /// Creates a rule (`id: null`) or replaces rule `id`; it applies from the next gated call.
    save_approval_rule {
        params: SaveApprovalRuleParams {
            #[ts(type = "number | null")]
            id: Option<i64>,
            input: ApprovalRuleInput,
        },
        result: ApprovalRuleView,
        errors: [InvalidInput, NotFound, Conflict, Storage],
        events: [],
        run: |engine, _, p| engine.save_approval_rule(p.id, p.input).await,
    }

    /// Deletes an approval rule.
    delete_approval_rule {
        params: DeleteApprovalRuleParams { #[ts(type = "number")] id: i64 },
        result: (),
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.delete_approval_rule(p.id).await,
    }

    /// The exact request the model received for the round that produced an assistant row
    /// (when `llm.request_log` is enabled).
    llm_request {
        params: LlmRequestParams { #[ts(type = "number")] message_id: i64 },
        result: serde_json::Value,
        errors: [NotFound, Storage, Internal],
        events: [],
        run: |engine, _, p| engine.llm_request(p.message_id).await,
    }

    /// The session's run context: working directory, prompt fragments, pre-authorised paths
    /// and permission group (defaults when none is stored).
    run_context {
        params: RunContextParams { #[ts(type = "number")] session_id: i64 },
        result: RunContext,
        errors: [NotFound, Storage, Internal],
        events: [],
        run: |engine, _, p| engine.run_context(p.session_id).await,
    }

    /// Replaces the session's run context (`null` clears it); it applies from the next turn.
    set_run_context {
        params: SetRunContextParams {
            #[ts(type = "number")]
            session_id: i64,
            run_context: Option<RunContext>,
        },
        result: (),
        errors: [NotFound, Storage, Internal],
        events: [],
        run: |engine, _, p| engine.set_run_context(p.session_id, p.run_context).await,
    }

    /// Every scheduled job, oldest first: its schedule in words, next run (RFC 3339 UTC) and
    /// last run.
    list_jobs {
        params: ListJobsParams {},
        result: Vec<JobInfo>,
        errors: [Storage],
        events: [],
        run: |engine, _, _| engine.list_jobs().await,
    }

    /// One job, with its next and last run.
    get_job {
        params: GetJobParams { #[ts(type = "number")] job_id: i64 },
        result: JobInfo,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.job(p.job_id).await,
    }

    /// Checks a schedule without saving anything: in words, with its zone (the machine's when
    /// left out) and its next five fire times; `invalid_input` says what is wrong.
    preview_schedule {
        params: PreviewScheduleParams {
            schedule: JobSchedule,
            #[serde(default)]
            #[ts(optional)]
            timezone: Option<String>,
        },
        result: SchedulePreview,
        errors: [InvalidInput],
        events: [],
        run: |engine, _, p| engine.preview_schedule(&p.schedule, p.timezone.as_deref()),
    }

    /// Adds a job: a task agent runs the prompt on the schedule, each run a session of source
    /// `cron`. The schedule, zone, agent and client are checked first.
    add_job {
        params: AddJobParams { job: JobInput },
        result: JobInfo,
        errors: [InvalidInput, Storage, Internal],
        events: [JobChanged],
        run: |engine, _, p| engine.add_job(p.job).await,
    }

    /// Replaces a job's definition; its runs stay. An interval counts again from now when the
    /// schedule or zone changed; otherwise the next run stays where it was.
    edit_job {
        params: EditJobParams {
            #[ts(type = "number")]
            job_id: i64,
            job: JobInput,
        },
        result: JobInfo,
        errors: [NotFound, InvalidInput, Storage, Internal],
        events: [JobChanged],
        run: |engine, _, p| engine.edit_job(p.job_id, p.job).await,
    }

    /// Deletes a job; with `remove_history` its runs go too, without they stay readable by run
    /// id and session. `conflict` while a run has not ended (kill it first).
    delete_job {
        params: DeleteJobParams {
            #[ts(type = "number")]
            job_id: i64,
            remove_history: bool,
        },
        result: JobDeleted,
        errors: [NotFound, Conflict, Storage],
        events: [JobChanged],
        run: |engine, _, p| engine.delete_job(p.job_id, p.remove_history).await,
    }

    /// Enables a job (its next run counted from now: nothing passed while disabled is
    /// missed; `invalid_input` when its schedule has no time left) or disables it (a run going
    /// on is not stopped).
    set_job_enabled {
        params: SetJobEnabledParams {
            #[ts(type = "number")]
            job_id: i64,
            enabled: bool,
        },
        result: JobInfo,
        errors: [NotFound, InvalidInput, Storage, Internal],
        events: [JobChanged],
        run: |engine, _, p| engine.set_job_enabled(p.job_id, p.enabled).await,
    }

    /// Starts a run of the job now, outside its schedule; the overlap policy applies (the run
    /// may come back `skipped` or queued behind the one going on).
    run_job_now {
        params: RunJobNowParams { #[ts(type = "number")] job_id: i64 },
        result: JobRunInfo,
        errors: [NotFound, Conflict, Storage, Cancelled, Internal],
        events: [JobRunUpdate, HomeNotice],
        run: |engine, _, p| engine.run_job_now(p.job_id).await,
    }

    /// A job's runs and recorded occurrences, newest first (`limit`, default 50, at most 1000),
    /// each with its state, session, times, tokens, cost and the reason it did not finish. A
    /// job deleted with its history kept still lists its runs.
    list_job_runs {
        params: ListJobRunsParams {
            #[ts(type = "number")]
            job_id: i64,
            #[serde(default)]
            #[ts(optional)]
            limit: Option<u32>,
        },
        result: Vec<JobRunInfo>,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.list_job_runs(p.job_id, p.limit).await,
    }

    /// Kills a run that has not ended, here or in another process: it ends `killed`, its
    /// waiting approvals and questions are cancelled, its model call and commands abort.
    /// `conflict` when it has ended.
    kill_job_run {
        params: KillJobRunParams { #[ts(type = "number")] run_id: i64 },
        result: JobRunInfo,
        errors: [NotFound, Conflict, Config, Storage, Internal],
        events: [
            JobRunUpdate, HomeNotice, SteersDiscarded, ToolCancelled, TurnEnded, TurnRunning,
        ],
        run: |engine, _, p| engine.kill_job_run(p.run_id).await,
    }

    /// What the home conversation shows about background work: each scheduled job's run that
    /// ended (done, failed, expired, killed) with the first lines of its answer or the reason,
    /// and its session; newest first, not dismissed (`limit`, default 20, at most 200).
    home_notices {
        params: HomeNoticesParams {
            #[serde(default)]
            #[ts(optional)]
            limit: Option<u32>,
        },
        result: Vec<HomeNotice>,
        errors: [Storage],
        events: [],
        run: |engine, _, p| engine.home_notices(p.limit).await,
    }

    /// Dismisses a notice of the home conversation (again is fine); every window drops it.
    dismiss_home_notice {
        params: DismissHomeNoticeParams { #[ts(type = "number")] notice_id: i64 },
        result: (),
        errors: [NotFound, Storage],
        events: [HomeNoticeDismissed],
        run: |engine, _, p| engine.dismiss_home_notice(p.notice_id).await,
    }

    /// What background work reported to the person (a job's run ended, a TIC tick's
    /// `notify`), delivered home as briefings; newest first (`limit`, default 50, at most 500).
    list_notifications {
        params: ListNotificationsParams {
            #[serde(default)]
            #[ts(optional)]
            limit: Option<u32>,
        },
        result: Vec<NotificationInfo>,
        errors: [Storage],
        events: [],
        run: |engine, _, p| engine.notifications(p.limit).await,
    }

    /// The source whose session receives briefings (`web` until one is chosen).
    home_source {
        params: HomeSourceParams {},
        result: HomeSource,
        errors: [Storage],
        events: [],
        run: |engine, _, _p| engine.home_source().await,
    }

    /// Delivers what background work reported now (the background does it within a few
    /// seconds anyway): one briefing input to the home session, whose agent then writes it.
    /// The number of reports it carried (0: nothing waited, or briefings are off).
    deliver_briefing {
        params: DeliverBriefingParams {},
        result: usize,
        errors: [InvalidInput, Storage],
        events: [BriefingDelivered],
        run: |engine, _, _p| engine.deliver_briefing().await,
    }

    /// `/sethome`: briefings go to `source`'s session from now on.
    set_home_source {
        params: SetHomeSourceParams { source: String },
        result: HomeSource,
        errors: [InvalidInput, Storage],
        events: [],
        run: |engine, _, p| engine.set_home_source(&p.source).await,
    }

    /// Every agent memory file (Markdown under the data dir's `memory/`), by path; links are
    /// not listed.
    list_memory_files {
        params: ListMemoryFilesParams {},
        result: Vec<MemoryFileInfo>,
        errors: [Internal],
        events: [],
        run: |engine, _, _| engine.list_memory().await,
    }

    /// One memory file's content, with the size limit a save must stay within. `path` is
    /// relative to `memory/` and ends in `.md`; `..`, absolute paths and links leading out of
    /// `memory/` are `invalid_input`.
    read_memory_file {
        params: ReadMemoryFileParams { path: String },
        result: MemoryFileContent,
        errors: [NotFound, InvalidInput, Internal],
        events: [],
        run: |engine, _, p| engine.read_memory(&p.path).await,
    }

    /// The recorded writes of memory files, newest first, each with its diff, author (an
    /// agent's call and session, or the person) and whether it was undone; of one file when
    /// `path` is given (`limit`, default 100, at most 1000).
    memory_history {
        params: MemoryHistoryParams {
            #[serde(default)]
            #[ts(optional)]
            path: Option<String>,
            #[serde(default)]
            #[ts(optional)]
            limit: Option<u32>,
        },
        result: Vec<MemoryEdit>,
        errors: [InvalidInput, Storage],
        events: [],
        run: |engine, _, p| engine.memory_history(p.path.as_deref(), p.limit).await,
    }

    /// Saves the person's content of a memory file (created when new), recorded like an
    /// agent's write; `invalid_input` past `memory.max_file_bytes` or for a bad path.
    save_memory_file {
        params: SaveMemoryFileParams { path: String, content: String },
        result: MemoryFileContent,
        errors: [InvalidInput, Conflict, Internal],
        events: [],
        run: |engine, _, p| engine.save_memory(&p.path, &p.content).await,
    }

    /// Undoes a recorded write: the file gets its content from before it back (a file the
    /// write created is deleted). `conflict` when the file changed since or it was undone.
    undo_memory_edit {
        params: UndoMemoryEditParams { #[ts(type = "number")] edit_id: i64 },
        result: MemoryEdit,
        errors: [NotFound, Conflict, InvalidInput, Storage, Internal],
        events: [],
        run: |engine, _, p| engine.undo_memory_edit(p.edit_id).await,
    }

    /// The TIC page: the settings in force (interval, batch, active hours), how many events of
    /// servers kept connected wait, those servers, and the ticks that read events, newest first
    /// (`limit`, default 50, at most 500), each with its event count, servers, session and end.
    tic_status {
        params: TicStatusParams {
            #[serde(default)]
            #[ts(optional)]
            limit: Option<u32>,
        },
        result: TicStatus,
        errors: [Storage],
        events: [],
        run: |engine, _, p| engine.tic_status(p.limit).await,
    }

    /// One tick with the events it read (server, method, params as stored, time).
    tic_tick {
        params: TicTickParams { #[ts(type = "number")] tick_id: i64 },
        result: TicTickDetail,
        errors: [NotFound, Storage],
        events: [],
        run: |engine, _, p| engine.tic_tick(p.tick_id).await,
    }

    /// Runs one TIC tick now (`skald tic run`): with events waiting, the `tic` agent reads a
    /// batch in a new session; with none, the tick is recorded `empty` and no model is asked.
    /// `conflict` while a tick runs (ticks never overlap).
    run_tic {
        params: RunTicParams {},
        result: TicTickInfo,
        errors: [Conflict, Config, Storage, Cancelled, Internal],
        events: [],
        run: |engine, _, _p| engine.run_tic_now().await,
    }
}
