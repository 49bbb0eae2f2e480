// Generated from the operation table in crates/skald-api/src/table.rs. Do not edit by hand:
// run `UPDATE_BINDINGS=1 cargo test -p skald-api --test all typescript` instead.

import type { JsonValue, ErrorCode, Page, SearchQuery, SearchResults, SessionMatches, SessionListQuery, SessionSummary, SessionMeta, ReconcileChoice, InterruptedCall, MediaFile, DebugMessage, SessionDetail, ItemRef, WindowQuery, SessionWindow, SendResult, SessionUsage, CompactResult, SessionRef, StopResult, TaskInfo, TurnStatus, ToolGroupsReset, RunContext, JobSchedule, JobInput, JobRunInfo, TicTickInfo, TicTickDetail, TicStatus, JobInfo, SchedulePreview, JobDeleted, HomeNotice, NotificationInfo, HomeSource, MemoryFileInfo, MemoryFileContent, MemoryEdit, ElicitationAction, ElicitationAnswered, Answer, Inbox, DecisionInput, Decision, BypassView, LlmClientInput, SettingsView, ConnectionTest, ApprovalRuleView, ApprovalRuleInput, AgentSummary, McpServerInfo, McpServerInput, McpAuthorization, AgentDefinition, AgentDetail, EventKind } from "./bindings";

export type ListSessionsParams = { 
/**
 * Left out, or in part: the first page of all sessions, `DEFAULT_PER_PAGE` long.
 */
query: SessionListQuery, };

export type SessionDetailParams = { session_id: number, };

export type SessionWindowParams = { session_id: number, query: WindowQuery, };

export type SessionItemParams = { session_id: number, item: ItemRef, };

export type ToolMediaParams = { tool_call_id: number, index: number, };

export type SearchParams = { query: SearchQuery, };

export type FindInSessionParams = { session_id: number, text: string, };

export type RenameSessionParams = { session_id: number, title: string | null, };

export type ActiveSessionParams = { source: string, };

export type SendMessageParams = { source: string, text: string, 
/**
 * The agent of a session this message creates; an active session running another
 * agent is an error naming both.
 */
agent_id?: string, 
/**
 * The directory the session must work in: an active session working elsewhere is
 * an error naming both (start a new one with `new_session`).
 */
workdir?: string, 
/**
 * Where a session this message creates works, when `workdir` is not given (the
 * command line passes the directory it runs in).
 */
new_session_workdir?: string, 
/**
 * Pre-approve every call of the session that would need approval ("this session",
 * all tools; deny rules and protected paths still ask), granted by the caller.
 */
approve_all?: boolean, };

export type StopTurnParams = { session_id: number, };

export type ListTasksParams = { session_id: number, };

export type ContinueTaskParams = { session_id: number, };

export type TurnRunningParams = { session_id: number, };

export type NewSessionParams = { source: string, agent_id?: string, workdir?: string, };

export type SessionUsageParams = { session_id: number, };

export type CompactSessionParams = { session_id: number, 
/**
 * What the summary should keep in particular.
 */
focus: string | null, };

export type ResetToolGroupsParams = { session_id: number, };

export type InboxParams = Record<string, never>;

export type DecideParams = { tool_call_id: number, input: DecisionInput, };

export type ActiveBypassesParams = Record<string, never>;

export type SessionBypassesParams = { session_id: number, };

export type RevokeBypassParams = { id: number, };

export type AnswerQuestionParams = { tool_call_id: number, answer: string, };

export type AnswerElicitationParams = { elicitation_id: number, action: ElicitationAction, content: Record<string, unknown> | null, };

export type InterruptedCallsParams = { session_id: number, };

export type OpenInterruptedCallsParams = Record<string, never>;

export type ReconcileCallParams = { tool_call_id: number, choice: ReconcileChoice, };

export type ListMcpServersParams = { start: boolean, server: string | null, };

export type AddMcpServerParams = { server: McpServerInput, };

export type RemoveMcpServerParams = { name: string, };

export type SetMcpServerEnabledParams = { name: string, enabled: boolean, };

export type AuthorizeMcpServerParams = { name: string, };

export type ForgetMcpAuthorizationParams = { name: string, };

export type SettingsParams = Record<string, never>;

export type SaveLlmClientsParams = { clients: Array<LlmClientInput>, fallback: Array<string>, revision: string | null, };

export type SetApiKeyParams = { client: string, key: string | null, };

export type TestConnectionParams = { client: string, };

export type ListAgentsParams = Record<string, never>;

export type GetAgentParams = { id: string, };

export type SaveAgentParams = { id: string, meta: AgentDefinition, prompt: string, };

export type DeleteAgentParams = { id: string, };

export type ApprovalRulesParams = Record<string, never>;

export type SaveApprovalRuleParams = { id: number | null, input: ApprovalRuleInput, };

export type DeleteApprovalRuleParams = { id: number, };

export type LlmRequestParams = { message_id: number, };

export type RunContextParams = { session_id: number, };

export type SetRunContextParams = { session_id: number, run_context: RunContext | null, };

export type ListJobsParams = Record<string, never>;

export type GetJobParams = { job_id: number, };

export type PreviewScheduleParams = { schedule: JobSchedule, timezone?: string, };

export type AddJobParams = { job: JobInput, };

export type EditJobParams = { job_id: number, job: JobInput, };

export type DeleteJobParams = { job_id: number, remove_history: boolean, };

export type SetJobEnabledParams = { job_id: number, enabled: boolean, };

export type RunJobNowParams = { job_id: number, };

export type ListJobRunsParams = { job_id: number, limit?: number, };

export type KillJobRunParams = { run_id: number, };

export type HomeNoticesParams = { limit?: number, };

export type DismissHomeNoticeParams = { notice_id: number, };

export type ListNotificationsParams = { limit?: number, };

export type HomeSourceParams = Record<string, never>;

export type DeliverBriefingParams = Record<string, never>;

export type SetHomeSourceParams = { source: string, };

export type ListMemoryFilesParams = Record<string, never>;

export type ReadMemoryFileParams = { path: string, };

export type MemoryHistoryParams = { path?: string, limit?: number, };

export type SaveMemoryFileParams = { path: string, content: string, };

export type UndoMemoryEditParams = { edit_id: number, };

export type TicStatusParams = { limit?: number, };

export type TicTickParams = { tick_id: number, };

export type RunTicParams = Record<string, never>;

/** Every operation the engine answers: its params and its result. */
export type Operations = {
  list_sessions: { params: ListSessionsParams; result: Page<SessionSummary> };
  session_detail: { params: SessionDetailParams; result: SessionDetail };
  session_window: { params: SessionWindowParams; result: SessionWindow };
  session_item: { params: SessionItemParams; result: DebugMessage };
  tool_media: { params: ToolMediaParams; result: MediaFile };
  search: { params: SearchParams; result: SearchResults };
  find_in_session: { params: FindInSessionParams; result: SessionMatches };
  rename_session: { params: RenameSessionParams; result: SessionMeta };
  active_session: { params: ActiveSessionParams; result: SessionRef };
  send_message: { params: SendMessageParams; result: SendResult };
  stop_turn: { params: StopTurnParams; result: StopResult };
  list_tasks: { params: ListTasksParams; result: Array<TaskInfo> };
  continue_task: { params: ContinueTaskParams; result: TaskInfo };
  turn_running: { params: TurnRunningParams; result: TurnStatus };
  new_session: { params: NewSessionParams; result: SessionRef };
  session_usage: { params: SessionUsageParams; result: SessionUsage };
  compact_session: { params: CompactSessionParams; result: CompactResult };
  reset_tool_groups: { params: ResetToolGroupsParams; result: ToolGroupsReset };
  inbox: { params: InboxParams; result: Inbox };
  decide: { params: DecideParams; result: Decision };
  active_bypasses: { params: ActiveBypassesParams; result: Array<BypassView> };
  session_bypasses: { params: SessionBypassesParams; result: Array<BypassView> };
  revoke_bypass: { params: RevokeBypassParams; result: BypassView };
  answer_question: { params: AnswerQuestionParams; result: Answer };
  answer_elicitation: { params: AnswerElicitationParams; result: ElicitationAnswered };
  interrupted_calls: { params: InterruptedCallsParams; result: Array<InterruptedCall> };
  open_interrupted_calls: { params: OpenInterruptedCallsParams; result: Array<InterruptedCall> };
  reconcile_call: { params: ReconcileCallParams; result: InterruptedCall };
  list_mcp_servers: { params: ListMcpServersParams; result: Array<McpServerInfo> };
  add_mcp_server: { params: AddMcpServerParams; result: Array<McpServerInfo> };
  remove_mcp_server: { params: RemoveMcpServerParams; result: Array<McpServerInfo> };
  set_mcp_server_enabled: { params: SetMcpServerEnabledParams; result: Array<McpServerInfo> };
  authorize_mcp_server: { params: AuthorizeMcpServerParams; result: McpAuthorization };
  forget_mcp_authorization: { params: ForgetMcpAuthorizationParams; result: Array<McpServerInfo> };
  settings: { params: SettingsParams; result: SettingsView };
  save_llm_clients: { params: SaveLlmClientsParams; result: SettingsView };
  set_api_key: { params: SetApiKeyParams; result: null };
  test_connection: { params: TestConnectionParams; result: ConnectionTest };
  list_agents: { params: ListAgentsParams; result: Array<AgentSummary> };
  get_agent: { params: GetAgentParams; result: AgentDetail };
  save_agent: { params: SaveAgentParams; result: AgentSummary };
  delete_agent: { params: DeleteAgentParams; result: null };
  approval_rules: { params: ApprovalRulesParams; result: Array<ApprovalRuleView> };
  save_approval_rule: { params: SaveApprovalRuleParams; result: ApprovalRuleView };
  delete_approval_rule: { params: DeleteApprovalRuleParams; result: null };
  llm_request: { params: LlmRequestParams; result: JsonValue };
  run_context: { params: RunContextParams; result: RunContext };
  set_run_context: { params: SetRunContextParams; result: null };
  list_jobs: { params: ListJobsParams; result: Array<JobInfo> };
  get_job: { params: GetJobParams; result: JobInfo };
  preview_schedule: { params: PreviewScheduleParams; result: SchedulePreview };
  add_job: { params: AddJobParams; result: JobInfo };
  edit_job: { params: EditJobParams; result: JobInfo };
  delete_job: { params: DeleteJobParams; result: JobDeleted };
  set_job_enabled: { params: SetJobEnabledParams; result: JobInfo };
  run_job_now: { params: RunJobNowParams; result: JobRunInfo };
  list_job_runs: { params: ListJobRunsParams; result: Array<JobRunInfo> };
  kill_job_run: { params: KillJobRunParams; result: JobRunInfo };
  home_notices: { params: HomeNoticesParams; result: Array<HomeNotice> };
  dismiss_home_notice: { params: DismissHomeNoticeParams; result: null };
  list_notifications: { params: ListNotificationsParams; result: Array<NotificationInfo> };
  home_source: { params: HomeSourceParams; result: HomeSource };
  deliver_briefing: { params: DeliverBriefingParams; result: number };
  set_home_source: { params: SetHomeSourceParams; result: HomeSource };
  list_memory_files: { params: ListMemoryFilesParams; result: Array<MemoryFileInfo> };
  read_memory_file: { params: ReadMemoryFileParams; result: MemoryFileContent };
  memory_history: { params: MemoryHistoryParams; result: Array<MemoryEdit> };
  save_memory_file: { params: SaveMemoryFileParams; result: MemoryFileContent };
  undo_memory_edit: { params: UndoMemoryEditParams; result: MemoryEdit };
  tic_status: { params: TicStatusParams; result: TicStatus };
  tic_tick: { params: TicTickParams; result: TicTickDetail };
  run_tic: { params: RunTicParams; result: TicTickInfo };
};

export type OpName = keyof Operations;

/** Every operation name, in table order. */
export const OPERATION_NAMES: readonly OpName[] = [
  "list_sessions",
  "session_detail",
  "session_window",
  "session_item",
  "tool_media",
  "search",
  "find_in_session",
  "rename_session",
  "active_session",
  "send_message",
  "stop_turn",
  "list_tasks",
  "continue_task",
  "turn_running",
  "new_session",
  "session_usage",
  "compact_session",
  "reset_tool_groups",
  "inbox",
  "decide",
  "active_bypasses",
  "session_bypasses",
  "revoke_bypass",
  "answer_question",
  "answer_elicitation",
  "interrupted_calls",
  "open_interrupted_calls",
  "reconcile_call",
  "list_mcp_servers",
  "add_mcp_server",
  "remove_mcp_server",
  "set_mcp_server_enabled",
  "authorize_mcp_server",
  "forget_mcp_authorization",
  "settings",
  "save_llm_clients",
  "set_api_key",
  "test_connection",
  "list_agents",
  "get_agent",
  "save_agent",
  "delete_agent",
  "approval_rules",
  "save_approval_rule",
  "delete_approval_rule",
  "llm_request",
  "run_context",
  "set_run_context",
  "list_jobs",
  "get_job",
  "preview_schedule",
  "add_job",
  "edit_job",
  "delete_job",
  "set_job_enabled",
  "run_job_now",
  "list_job_runs",
  "kill_job_run",
  "home_notices",
  "dismiss_home_notice",
  "list_notifications",
  "home_source",
  "deliver_briefing",
  "set_home_source",
  "list_memory_files",
  "read_memory_file",
  "memory_history",
  "save_memory_file",
  "undo_memory_edit",
  "tic_status",
  "tic_tick",
  "run_tic",
];

/** Sends one operation; resolves with its result or rejects with an `ApiError`. */
export type Transport = (op: OpName, params: unknown) => Promise<unknown>;

/** One method per operation, the same for every transport. */
export interface Api {
  /**
   * One page of the session list, newest first, filtered as the query says.
   *
   * Errors: storage. Events: none.
   */
  list_sessions(params: ListSessionsParams): Promise<Page<SessionSummary>>;
  /**
   * The session debug tree: every frame, message and tool call, children under their call.
   *
   * Errors: not_found, storage. Events: none.
   */
  session_detail(params: SessionDetailParams): Promise<SessionDetail>;
  /**
   * A window of the session tree, keyset-paged: the newest rows, the page before or after a
   * row, or the rows around one (a link to a message, a jump to a pending approval). Long
   * texts and results come as previews with their full length; `session_item` has them whole.
   *
   * Errors: not_found, storage. Events: none.
   */
  session_window(params: SessionWindowParams): Promise<SessionWindow>;
  /**
   * One row of the session tree whole (what a window cut to a preview, read on expand).
   *
   * Errors: not_found, storage. Events: none.
   */
  session_item(params: SessionItemParams): Promise<DebugMessage>;
  /**
   * One media file an MCP tool call saved (its `media[index]`, 0-based): kind, declared MIME
   * type and the bytes as base64, read from the data dir by the call's record, never by a
   * path. A file over 10 MB is refused with its size and where it is.
   *
   * Errors: invalid_input, not_found, storage. Events: none.
   */
  tool_media(params: ToolMediaParams): Promise<MediaFile>;
  /**
   * The best hits across every session, best first: words of messages (the last one, while
   * it is typed, as a prefix) and substrings of tool names, paths and command lines, each
   * with a snippet whose matched stretches are marked. Any text is valid; FTS syntax in it
   * is plain text.
   *
   * Errors: storage. Events: none.
   */
  search(params: SearchParams): Promise<SearchResults>;
  /**
   * Every message and tool call of one session (sub-agents included) that matches the text
   * as `search` does, in the order the session shows them: find-in-session's next/previous.
   *
   * Errors: not_found, storage. Events: none.
   */
  find_in_session(params: FindInSessionParams): Promise<SessionMatches>;
  /**
   * Names a session (`title: null` or blank clears the name); lists, search and the debug
   * view show it.
   *
   * Errors: invalid_input, not_found, storage. Events: sessions_changed.
   */
  rename_session(params: RenameSessionParams): Promise<SessionMeta>;
  /**
   * The session a source's chat writes to, created on first use.
   *
   * Errors: invalid_input, storage. Events: sessions_changed.
   */
  active_session(params: ActiveSessionParams): Promise<SessionRef>;
  /**
   * Sends a user message to the source's active session: starts a turn, or steers the one
   * running (folded in at its next round). The turn runs on by itself; its progress arrives
   * as events, and a call that needs a human waits in the inbox.
   *
   * Errors: invalid_input, config, storage, cancelled. Events: sessions_changed, user_message, steer_queued, steer_folded, turn_running, token_delta, thinking, tool_start, tool_progress, tool_done, tool_error, tool_cancelled, tool_rejected, approval_requested, agent_question, file_changed, model_fallback, model_retry, llm_failed, truncated, interim_answer, done, turn_ended, compacting, compaction_done, task_update, elicitation_requested, elicitation_resolved.
   */
  send_message(params: SendMessageParams): Promise<SendResult>;
  /**
   * Stops the session's running turn, here or in another process; unconsumed steers are
   * kept but discarded.
   *
   * Errors: not_found, storage. Events: steers_discarded, tool_cancelled, turn_ended, turn_running.
   */
  stop_turn(params: StopTurnParams): Promise<StopResult>;
  /**
   * The async tasks (`execute_task` mode `async`) the session started, oldest first: each
   * one's child session, state and report.
   *
   * Errors: not_found, storage. Events: none.
   */
  list_tasks(params: ListTasksParams): Promise<Array<TaskInfo>>;
  /**
   * Continues a failed or cancelled async task (named by its child session) from its last
   * step in the background; its new report reaches the parent session like the first.
   * `conflict` when the task is not failed or cancelled.
   *
   * Errors: not_found, conflict, storage, cancelled. Events: task_update, user_message, steer_folded, turn_running, token_delta, thinking, tool_start, tool_progress, tool_done, tool_error, tool_cancelled, tool_rejected, approval_requested, agent_question, file_changed, model_fallback, model_retry, llm_failed, truncated, interim_answer, done, turn_ended, elicitation_requested, elicitation_resolved.
   */
  continue_task(params: ContinueTaskParams): Promise<TaskInfo>;
  /**
   * Whether a turn runs for the session now (in any process).
   *
   * Errors: storage. Events: none.
   */
  turn_running(params: TurnRunningParams): Promise<TurnStatus>;
  /**
   * Starts a fresh session for the source and makes it the active one; every client showing
   * the source follows it.
   * With `agent_id`, the new session runs that agent (a chat or task agent; `main` when
   * absent); the agent of an existing session never changes. With `workdir` (an absolute
   * path to a directory), its tools work there; without, where Skald runs. The old session's
   * bypasses end.
   *
   * Errors: invalid_input, not_found, config, storage. Events: new_session, sessions_changed, bypasses_changed.
   */
  new_session(params: NewSessionParams): Promise<SessionRef>;
  /**
   * The context the next request carries (as compaction counts it) against the model's
   * window, the last reported request, and what the session spent.
   *
   * Errors: not_found, config, storage, internal. Events: none.
   */
  session_usage(params: SessionUsageParams): Promise<SessionUsage>;
  /**
   * Summarises the session's older history now (`/compact [focus]`); refused while a turn
   * runs, cancelled by `stop_turn`.
   *
   * Errors: not_found, conflict, config, storage, llm, cancelled, internal. Events: compacting, compaction_done.
   */
  compact_session(params: CompactSessionParams): Promise<CompactResult>;
  /**
   * Revokes the tool groups the session's agents activated (`/resettools`).
   *
   * Errors: not_found, storage. Events: none.
   */
  reset_tool_groups(params: ResetToolGroupsParams): Promise<ToolGroupsReset>;
  /**
   * Every approval and question waiting for a human, across sessions, oldest first.
   *
   * Errors: storage. Events: none.
   */
  inbox(params: InboxParams): Promise<Inbox>;
  /**
   * Records a human decision about a waiting call, as made by the calling surface (the first
   * decision wins), with the bypass it asks for; a bypass scope that does not fit the call is
   * refused and nothing is recorded. A waiting turn continues; the app and `serve` continue a
   * parked one.
   *
   * Errors: invalid_input, not_found, conflict, storage. Events: approval_resolved, bypasses_changed, turn_running.
   */
  decide(params: DecideParams): Promise<Decision>;
  /**
   * Every active bypass across sessions, oldest first (the inbox lists them).
   *
   * Errors: storage. Events: none.
   */
  active_bypasses(params: ActiveBypassesParams): Promise<Array<BypassView>>;
  /**
   * The session's active bypasses, oldest first (the chat shows them).
   *
   * Errors: storage. Events: none.
   */
  session_bypasses(params: SessionBypassesParams): Promise<Array<BypassView>>;
  /**
   * Ends a bypass now, as revoked by the calling surface; the calls it covered ask again.
   * Revoking one that already ended changes nothing.
   *
   * Errors: not_found, storage. Events: bypasses_changed.
   */
  revoke_bypass(params: RevokeBypassParams): Promise<BypassView>;
  /**
   * Answers an agent's clarification question, as the calling surface.
   *
   * Errors: invalid_input, not_found, conflict, storage. Events: clarification_resolved, turn_running.
   */
  answer_question(params: AnswerQuestionParams): Promise<Answer>;
  /**
   * Answers a question an MCP server asks during a call (accept with the form's values,
   * decline or cancel), as the calling surface. `delivered`: the waiting call got it now.
   *
   * Errors: invalid_input, not_found, conflict, storage, internal. Events: elicitation_resolved.
   */
  answer_elicitation(params: AnswerElicitationParams): Promise<ElicitationAnswered>;
  /**
   * The session's calls that a crash cut off while they ran and that were not safe to run
   * again by themselves (decision 3), with what the user said about each, oldest first.
   *
   * Errors: not_found, storage, internal. Events: none.
   */
  interrupted_calls(params: InterruptedCallsParams): Promise<Array<InterruptedCall>>;
  /**
   * Interrupted calls of every session that still wait for the user's word (no choice made
   * yet), oldest first: the Agent Inbox lists them beside approvals and questions.
   *
   * Errors: storage, internal. Events: none.
   */
  open_interrupted_calls(params: OpenInterruptedCallsParams): Promise<Array<InterruptedCall>>;
  /**
   * The user's word on an interrupted call, as the calling surface: `ran`, `did_not_run`, or
   * `run_again` (runs it now; a rule that denies it refuses with nothing recorded). Set once:
   * the same choice again is a no-op, another is refused. The model is told at its next round.
   *
   * Errors: invalid_input, not_found, conflict, storage, internal. Events: interrupted_call.
   */
  reconcile_call(params: ReconcileCallParams): Promise<InterruptedCall>;
  /**
   * The MCP servers of `mcp.servers` (or only `server`) and where each stands; with
   * `start`, the enabled ones are started first so their tools are listed (a failure is the
   * server's `error`).
   *
   * Errors: not_found. Events: none.
   */
  list_mcp_servers(params: ListMcpServersParams): Promise<Array<McpServerInfo>>;
  /**
   * Adds a server to `mcp.servers` in config.yml (in place, validated like a hand edit: a
   * taken or malformed name, both or neither of `command` and `url` are `invalid_input`);
   * returns the servers. It starts when an agent first activates it.
   *
   * Errors: invalid_input, config, storage, internal. Events: config_reloaded.
   */
  add_mcp_server(params: AddMcpServerParams): Promise<Array<McpServerInfo>>;
  /**
   * Removes a server from `mcp.servers`; returns the servers.
   *
   * Errors: invalid_input, config, storage, internal. Events: config_reloaded.
   */
  remove_mcp_server(params: RemoveMcpServerParams): Promise<Array<McpServerInfo>>;
  /**
   * Enables or disables a server (a disabled one is never started nor offered to agents);
   * returns the servers.
   *
   * Errors: invalid_input, config, storage, internal. Events: config_reloaded.
   */
  set_mcp_server_enabled(params: SetMcpServerEnabledParams): Promise<Array<McpServerInfo>>;
  /**
   * Starts the OAuth authorization of an HTTP server (one without an API key) and returns the
   * page the user opens to consent: the desktop opens it in the browser, the CLI prints it.
   * The browser comes back to Skald on 127.0.0.1 (one answer, within five minutes); the
   * tokens go to the OS keychain and the server connects at its next use (its state is
   * `authorizing` meanwhile). Starting again replaces an authorization in progress.
   *
   * Errors: not_found, invalid_input, conflict. Events: none.
   */
  authorize_mcp_server(params: AuthorizeMcpServerParams): Promise<McpAuthorization>;
  /**
   * Forgets an HTTP server's OAuth tokens (removed from the keychain); it asks for
   * authorization again at its next start. Returns the server.
   *
   * Errors: not_found, invalid_input, conflict. Events: none.
   */
  forget_mcp_authorization(params: ForgetMcpAuthorizationParams): Promise<Array<McpServerInfo>>;
  /**
   * The LLM clients in fallback order (never a key), the data dir and the config path.
   *
   * Errors: none. Events: none.
   */
  settings(params: SettingsParams): Promise<SettingsView>;
  /**
   * Replaces the config-file clients and the fallback order in config.yml (validated like a
   * hand edit first); the environment's client is not part of it. With the `revision` of the
   * view the list came from, a file changed since (by hand, another window) is `conflict`. Where config.yml is
   * watched (the app, `skald serve`), the rewrite is announced as `config_reloaded`.
   *
   * Errors: invalid_input, conflict, config, storage, internal. Events: config_reloaded.
   */
  save_llm_clients(params: SaveLlmClientsParams): Promise<SettingsView>;
  /**
   * Stores a client's API key in the OS keychain, or removes it (`key: null`).
   *
   * Errors: storage. Events: none.
   */
  set_api_key(params: SetApiKeyParams): Promise<null>;
  /**
   * Asks the client's endpoint for its model list.
   *
   * Errors: not_found, config. Events: none.
   */
  test_connection(params: TestConnectionParams): Promise<ConnectionTest>;
  /**
   * Every agent (the data dir's `agents/<id>/` folders over the built-ins), by id; a broken
   * one is listed with its error naming the file.
   *
   * Errors: storage. Events: none.
   */
  list_agents(params: ListAgentsParams): Promise<Array<AgentSummary>>;
  /**
   * One agent's meta and `AGENT.md` as written (directives unresolved), for editing.
   *
   * Errors: not_found. Events: none.
   */
  get_agent(params: GetAgentParams): Promise<AgentDetail>;
  /**
   * Creates or replaces a user agent (`[a-z0-9-]` id; the same id as a built-in overrides
   * it). The meta and every `INCLUDE` are checked before either file is written; sessions
   * pick the change up on their next turn. Where `agents/` is watched (the app, `skald
   * serve`), the change is announced as `agents_changed` to every window.
   *
   * Errors: invalid_input, not_found, internal. Events: agents_changed.
   */
  save_agent(params: SaveAgentParams): Promise<AgentSummary>;
  /**
   * Deletes a user agent; deleting one that overrides a built-in restores the built-in. A
   * built-in itself cannot be deleted (`conflict`); announced like `save_agent`.
   *
   * Errors: invalid_input, not_found, conflict, internal. Events: agents_changed.
   */
  delete_agent(params: DeleteAgentParams): Promise<null>;
  /**
   * Every approval rule, in evaluation order per group.
   *
   * Errors: storage. Events: none.
   */
  approval_rules(params: ApprovalRulesParams): Promise<Array<ApprovalRuleView>>;
  /**
   * Creates a rule (`id: null`) or replaces rule `id`; it applies from the next gated call.
   *
   * Errors: invalid_input, not_found, conflict, storage. Events: none.
   */
  save_approval_rule(params: SaveApprovalRuleParams): Promise<ApprovalRuleView>;
  /**
   * Deletes an approval rule.
   *
   * Errors: not_found, storage. Events: none.
   */
  delete_approval_rule(params: DeleteApprovalRuleParams): Promise<null>;
  /**
   * The exact request the model received for the round that produced an assistant row
   * (when `llm.request_log` is enabled).
   *
   * Errors: not_found, storage, internal. Events: none.
   */
  llm_request(params: LlmRequestParams): Promise<JsonValue>;
  /**
   * The session's run context: working directory, prompt fragments, pre-authorised paths
   * and permission group (defaults when none is stored).
   *
   * Errors: not_found, storage, internal. Events: none.
   */
  run_context(params: RunContextParams): Promise<RunContext>;
  /**
   * Replaces the session's run context (`null` clears it); it applies from the next turn.
   *
   * Errors: not_found, storage, internal. Events: none.
   */
  set_run_context(params: SetRunContextParams): Promise<null>;
  /**
   * Every scheduled job, oldest first: its schedule in words, next run (RFC 3339 UTC) and
   * last run.
   *
   * Errors: storage. Events: none.
   */
  list_jobs(params: ListJobsParams): Promise<Array<JobInfo>>;
  /**
   * One job, with its next and last run.
   *
   * Errors: not_found, storage. Events: none.
   */
  get_job(params: GetJobParams): Promise<JobInfo>;
  /**
   * Checks a schedule without saving anything: in words, with its zone (the machine's when
   * left out) and its next five fire times; `invalid_input` says what is wrong.
   *
   * Errors: invalid_input. Events: none.
   */
  preview_schedule(params: PreviewScheduleParams): Promise<SchedulePreview>;
  /**
   * Adds a job: a task agent runs the prompt on the schedule, each run a session of source
   * `cron`. The schedule, zone, agent and client are checked first.
   *
   * Errors: invalid_input, storage, internal. Events: job_changed.
   */
  add_job(params: AddJobParams): Promise<JobInfo>;
  /**
   * Replaces a job's definition; its runs stay. An interval counts again from now when the
   * schedule or zone changed; otherwise the next run stays where it was.
   *
   * Errors: not_found, invalid_input, storage, internal. Events: job_changed.
   */
  edit_job(params: EditJobParams): Promise<JobInfo>;
  /**
   * Deletes a job; with `remove_history` its runs go too, without they stay readable by run
   * id and session. `conflict` while a run has not ended (kill it first).
   *
   * Errors: not_found, conflict, storage. Events: job_changed.
   */
  delete_job(params: DeleteJobParams): Promise<JobDeleted>;
  /**
   * Enables a job (its next run counted from now: nothing passed while disabled is
   * missed; `invalid_input` when its schedule has no time left) or disables it (a run going
   * on is not stopped).
   *
   * Errors: not_found, invalid_input, storage, internal. Events: job_changed.
   */
  set_job_enabled(params: SetJobEnabledParams): Promise<JobInfo>;
  /**
   * Starts a run of the job now, outside its schedule; the overlap policy applies (the run
   * may come back `skipped` or queued behind the one going on).
   *
   * Errors: not_found, conflict, storage, cancelled, internal. Events: job_run_update, home_notice.
   */
  run_job_now(params: RunJobNowParams): Promise<JobRunInfo>;
  /**
   * A job's runs and recorded occurrences, newest first (`limit`, default 50, at most 1000),
   * each with its state, session, times, tokens, cost and the reason it did not finish. A
   * job deleted with its history kept still lists its runs.
   *
   * Errors: not_found, storage. Events: none.
   */
  list_job_runs(params: ListJobRunsParams): Promise<Array<JobRunInfo>>;
  /**
   * Kills a run that has not ended, here or in another process: it ends `killed`, its
   * waiting approvals and questions are cancelled, its model call and commands abort.
   * `conflict` when it has ended.
   *
   * Errors: not_found, conflict, config, storage, internal. Events: job_run_update, home_notice, steers_discarded, tool_cancelled, turn_ended, turn_running.
   */
  kill_job_run(params: KillJobRunParams): Promise<JobRunInfo>;
  /**
   * What the home conversation shows about background work: each scheduled job's run that
   * ended (done, failed, expired, killed) with the first lines of its answer or the reason,
   * and its session; newest first, not dismissed (`limit`, default 20, at most 200).
   *
   * Errors: storage. Events: none.
   */
  home_notices(params: HomeNoticesParams): Promise<Array<HomeNotice>>;
  /**
   * Dismisses a notice of the home conversation (again is fine); every window drops it.
   *
   * Errors: not_found, storage. Events: home_notice_dismissed.
   */
  dismiss_home_notice(params: DismissHomeNoticeParams): Promise<null>;
  /**
   * What background work reported to the person (a job's run ended, a TIC tick's
   * `notify`), delivered home as briefings; newest first (`limit`, default 50, at most 500).
   *
   * Errors: storage. Events: none.
   */
  list_notifications(params: ListNotificationsParams): Promise<Array<NotificationInfo>>;
  /**
   * The source whose session receives briefings (`web` until one is chosen).
   *
   * Errors: storage. Events: none.
   */
  home_source(params: HomeSourceParams): Promise<HomeSource>;
  /**
   * Delivers what background work reported now (the background does it within a few
   * seconds anyway): one briefing input to the home session, whose agent then writes it.
   * The number of reports it carried (0: nothing waited, or briefings are off).
   *
   * Errors: invalid_input, storage. Events: briefing_delivered.
   */
  deliver_briefing(params: DeliverBriefingParams): Promise<number>;
  /**
   * `/sethome`: briefings go to `source`'s session from now on.
   *
   * Errors: invalid_input, storage. Events: none.
   */
  set_home_source(params: SetHomeSourceParams): Promise<HomeSource>;
  /**
   * Every agent memory file (Markdown under the data dir's `memory/`), by path; links are
   * not listed.
   *
   * Errors: internal. Events: none.
   */
  list_memory_files(params: ListMemoryFilesParams): Promise<Array<MemoryFileInfo>>;
  /**
   * One memory file's content, with the size limit a save must stay within. `path` is
   * relative to `memory/` and ends in `.md`; `..`, absolute paths and links leading out of
   * `memory/` are `invalid_input`.
   *
   * Errors: not_found, invalid_input, internal. Events: none.
   */
  read_memory_file(params: ReadMemoryFileParams): Promise<MemoryFileContent>;
  /**
   * The recorded writes of memory files, newest first, each with its diff, author (an
   * agent's call and session, or the person) and whether it was undone; of one file when
   * `path` is given (`limit`, default 100, at most 1000).
   *
   * Errors: invalid_input, storage. Events: none.
   */
  memory_history(params: MemoryHistoryParams): Promise<Array<MemoryEdit>>;
  /**
   * Saves the person's content of a memory file (created when new), recorded like an
   * agent's write; `invalid_input` past `memory.max_file_bytes` or for a bad path.
   *
   * Errors: invalid_input, conflict, internal. Events: none.
   */
  save_memory_file(params: SaveMemoryFileParams): Promise<MemoryFileContent>;
  /**
   * Undoes a recorded write: the file gets its content from before it back (a file the
   * write created is deleted). `conflict` when the file changed since or it was undone.
   *
   * Errors: not_found, conflict, invalid_input, storage, internal. Events: none.
   */
  undo_memory_edit(params: UndoMemoryEditParams): Promise<MemoryEdit>;
  /**
   * The TIC page: the settings in force (interval, batch, active hours), how many events of
   * servers kept connected wait, those servers, and the ticks that read events, newest first
   * (`limit`, default 50, at most 500), each with its event count, servers, session and end.
   *
   * Errors: storage. Events: none.
   */
  tic_status(params: TicStatusParams): Promise<TicStatus>;
  /**
   * One tick with the events it read (server, method, params as stored, time).
   *
   * Errors: not_found, storage. Events: none.
   */
  tic_tick(params: TicTickParams): Promise<TicTickDetail>;
  /**
   * Runs one TIC tick now (`skald tic run`): with events waiting, the `tic` agent reads a
   * batch in a new session; with none, the tick is recorded `empty` and no model is asked.
   * `conflict` while a tick runs (ticks never overlap).
   *
   * Errors: conflict, config, storage, cancelled, internal. Events: none.
   */
  run_tic(params: RunTicParams): Promise<TicTickInfo>;
}

/** The typed client over a transport. */
export function makeApi(call: Transport): Api {
  return {
    list_sessions: (params) => call("list_sessions", params) as Promise<Page<SessionSummary>>,
    session_detail: (params) => call("session_detail", params) as Promise<SessionDetail>,
    session_window: (params) => call("session_window", params) as Promise<SessionWindow>,
    session_item: (params) => call("session_item", params) as Promise<DebugMessage>,
    tool_media: (params) => call("tool_media", params) as Promise<MediaFile>,
    search: (params) => call("search", params) as Promise<SearchResults>,
    find_in_session: (params) => call("find_in_session", params) as Promise<SessionMatches>,
    rename_session: (params) => call("rename_session", params) as Promise<SessionMeta>,
    active_session: (params) => call("active_session", params) as Promise<SessionRef>,
    send_message: (params) => call("send_message", params) as Promise<SendResult>,
    stop_turn: (params) => call("stop_turn", params) as Promise<StopResult>,
    list_tasks: (params) => call("list_tasks", params) as Promise<Array<TaskInfo>>,
    continue_task: (params) => call("continue_task", params) as Promise<TaskInfo>,
    turn_running: (params) => call("turn_running", params) as Promise<TurnStatus>,
    new_session: (params) => call("new_session", params) as Promise<SessionRef>,
    session_usage: (params) => call("session_usage", params) as Promise<SessionUsage>,
    compact_session: (params) => call("compact_session", params) as Promise<CompactResult>,
    reset_tool_groups: (params) => call("reset_tool_groups", params) as Promise<ToolGroupsReset>,
    inbox: (params) => call("inbox", params) as Promise<Inbox>,
    decide: (params) => call("decide", params) as Promise<Decision>,
    active_bypasses: (params) => call("active_bypasses", params) as Promise<Array<BypassView>>,
    session_bypasses: (params) => call("session_bypasses", params) as Promise<Array<BypassView>>,
    revoke_bypass: (params) => call("revoke_bypass", params) as Promise<BypassView>,
    answer_question: (params) => call("answer_question", params) as Promise<Answer>,
    answer_elicitation: (params) => call("answer_elicitation", params) as Promise<ElicitationAnswered>,
    interrupted_calls: (params) => call("interrupted_calls", params) as Promise<Array<InterruptedCall>>,
    open_interrupted_calls: (params) => call("open_interrupted_calls", params) as Promise<Array<InterruptedCall>>,
    reconcile_call: (params) => call("reconcile_call", params) as Promise<InterruptedCall>,
    list_mcp_servers: (params) => call("list_mcp_servers", params) as Promise<Array<McpServerInfo>>,
    add_mcp_server: (params) => call("add_mcp_server", params) as Promise<Array<McpServerInfo>>,
    remove_mcp_server: (params) => call("remove_mcp_server", params) as Promise<Array<McpServerInfo>>,
    set_mcp_server_enabled: (params) => call("set_mcp_server_enabled", params) as Promise<Array<McpServerInfo>>,
    authorize_mcp_server: (params) => call("authorize_mcp_server", params) as Promise<McpAuthorization>,
    forget_mcp_authorization: (params) => call("forget_mcp_authorization", params) as Promise<Array<McpServerInfo>>,
    settings: (params) => call("settings", params) as Promise<SettingsView>,
    save_llm_clients: (params) => call("save_llm_clients", params) as Promise<SettingsView>,
    set_api_key: (params) => call("set_api_key", params) as Promise<null>,
    test_connection: (params) => call("test_connection", params) as Promise<ConnectionTest>,
    list_agents: (params) => call("list_agents", params) as Promise<Array<AgentSummary>>,
    get_agent: (params) => call("get_agent", params) as Promise<AgentDetail>,
    save_agent: (params) => call("save_agent", params) as Promise<AgentSummary>,
    delete_agent: (params) => call("delete_agent", params) as Promise<null>,
    approval_rules: (params) => call("approval_rules", params) as Promise<Array<ApprovalRuleView>>,
    save_approval_rule: (params) => call("save_approval_rule", params) as Promise<ApprovalRuleView>,
    delete_approval_rule: (params) => call("delete_approval_rule", params) as Promise<null>,
    llm_request: (params) => call("llm_request", params) as Promise<JsonValue>,
    run_context: (params) => call("run_context", params) as Promise<RunContext>,
    set_run_context: (params) => call("set_run_context", params) as Promise<null>,
    list_jobs: (params) => call("list_jobs", params) as Promise<Array<JobInfo>>,
    get_job: (params) => call("get_job", params) as Promise<JobInfo>,
    preview_schedule: (params) => call("preview_schedule", params) as Promise<SchedulePreview>,
    add_job: (params) => call("add_job", params) as Promise<JobInfo>,
    edit_job: (params) => call("edit_job", params) as Promise<JobInfo>,
    delete_job: (params) => call("delete_job", params) as Promise<JobDeleted>,
    set_job_enabled: (params) => call("set_job_enabled", params) as Promise<JobInfo>,
    run_job_now: (params) => call("run_job_now", params) as Promise<JobRunInfo>,
    list_job_runs: (params) => call("list_job_runs", params) as Promise<Array<JobRunInfo>>,
    kill_job_run: (params) => call("kill_job_run", params) as Promise<JobRunInfo>,
    home_notices: (params) => call("home_notices", params) as Promise<Array<HomeNotice>>,
    dismiss_home_notice: (params) => call("dismiss_home_notice", params) as Promise<null>,
    list_notifications: (params) => call("list_notifications", params) as Promise<Array<NotificationInfo>>,
    home_source: (params) => call("home_source", params) as Promise<HomeSource>,
    deliver_briefing: (params) => call("deliver_briefing", params) as Promise<number>,
    set_home_source: (params) => call("set_home_source", params) as Promise<HomeSource>,
    list_memory_files: (params) => call("list_memory_files", params) as Promise<Array<MemoryFileInfo>>,
    read_memory_file: (params) => call("read_memory_file", params) as Promise<MemoryFileContent>,
    memory_history: (params) => call("memory_history", params) as Promise<Array<MemoryEdit>>,
    save_memory_file: (params) => call("save_memory_file", params) as Promise<MemoryFileContent>,
    undo_memory_edit: (params) => call("undo_memory_edit", params) as Promise<MemoryEdit>,
    tic_status: (params) => call("tic_status", params) as Promise<TicStatus>,
    tic_tick: (params) => call("tic_tick", params) as Promise<TicTickDetail>,
    run_tic: (params) => call("run_tic", params) as Promise<TicTickInfo>,
  };
}

/** Every error code an operation or a transport can answer. */
export const ERROR_CODES: readonly ErrorCode[] = [
  "not_found",
  "invalid_input",
  "conflict",
  "config",
  "storage",
  "llm",
  "cancelled",
  "unauthorized",
  "internal",
];

/** Every event kind the engine emits (the `type` of an `Event`). */
export const EVENT_KINDS: readonly EventKind[] = [
  "sessions_changed",
  "resync",
  "subscribed",
  "config_reloaded",
  "agents_changed",
  "new_session",
  "user_message",
  "steer_queued",
  "steer_folded",
  "steers_discarded",
  "turn_running",
  "token_delta",
  "thinking",
  "tool_start",
  "tool_progress",
  "tool_done",
  "tool_error",
  "tool_cancelled",
  "tool_rejected",
  "approval_requested",
  "approval_resolved",
  "bypasses_changed",
  "agent_question",
  "clarification_resolved",
  "elicitation_requested",
  "elicitation_resolved",
  "file_changed",
  "model_fallback",
  "model_retry",
  "llm_failed",
  "truncated",
  "interim_answer",
  "done",
  "turn_ended",
  "compacting",
  "interrupted_call",
  "task_update",
  "job_run_update",
  "job_changed",
  "home_notice",
  "home_notice_dismissed",
  "briefing_delivered",
  "compaction_done",
];
