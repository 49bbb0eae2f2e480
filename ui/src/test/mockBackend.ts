// An in-memory Backend for component tests: filters and paginates like the engine, records calls.
// It implements the generated `Api`, so a changed operation fails to compile here too.
import type {
  AgentDefinition,
  AgentDetail,
  AgentSummary,
  McpAuthorization,
  McpServerInfo,
  McpServerInput,
  ApiError,
  ApprovalRuleInput,
  ApprovalRuleView,
  BypassView,
  CompactResult,
  ConnectionTest,
  Decision,
  DecisionInput,
  EventEnvelope,
  JsonValue,
  FileDiff,
  HomeNotice,
  Inbox,
  InboxItem,
  QuestionItem,
  ElicitationItem,
  ElicitationAnswered,
  InterruptedCall,
  LlmClientInput,
  LlmClientView,
  MatchRef,
  Page,
  SearchResults,
  SessionDetail,
  SessionMatches,
  SessionListQuery,
  SessionMeta,
  SessionSummary,
  SendResult,
  SessionRef,
  SessionUsage,
  SessionWindow,
  SettingsView,
  StopResult,
  TaskInfo,
  TicEventInfo,
  TicStatus,
  TicTickInfo,
  ToolGroupsReset,
  TurnStatus,
  DebugMessage,
  ItemRef,
  MediaFile,
} from "../backend";
import { itemRef, refKey } from "../backend/window";
import type {
  ToolMediaParams,
  ActiveSessionParams,
  DeleteAgentParams,
  GetAgentParams,
  ListMcpServersParams,
  AddMcpServerParams,
  RemoveMcpServerParams,
  SetMcpServerEnabledParams,
  AuthorizeMcpServerParams,
  ForgetMcpAuthorizationParams,
  SaveAgentParams,
  AnswerQuestionParams,
  AnswerElicitationParams,
  CompactSessionParams,
  InterruptedCallsParams,
  OpenInterruptedCallsParams,
  ReconcileCallParams,
  DecideParams,
  DeleteApprovalRuleParams,
  ListSessionsParams,
  LlmRequestParams,
  NewSessionParams,
  ResetToolGroupsParams,
  SetHomeSourceParams,
  RenameSessionParams,
  RevokeBypassParams,
  RunContextParams,
  SaveApprovalRuleParams,
  FindInSessionParams,
  SearchParams,
  SaveLlmClientsParams,
  SendMessageParams,
  SessionBypassesParams,
  SessionDetailParams,
  SessionItemParams,
  SessionUsageParams,
  SessionWindowParams,
  SetApiKeyParams,
  SetRunContextParams,
  StopTurnParams,
  ListTasksParams,
  ContinueTaskParams,
  TestConnectionParams,
  TurnRunningParams,
} from "../backend/api";
import type { Answer, HomeSource, NotificationInfo, RunContext, WindowQuery } from "../backend/bindings";
import type { Backend } from "../backend/types";
import { MockMemory } from "./mockMemory";
import { MockJobs } from "./mockJobs";

export function summary(id: number, over: Partial<SessionSummary> = {}): SessionSummary {
  return {
    id,
    title: `Session ${id}`,
    source: "web",
    agent_id: "main",
    is_ephemeral: false,
    is_interactive: true,
    created_at: "2026-11-30T10:00:00Z",
    message_count: id * 2,
    last_message_at: "2026-11-30T10:05:00Z",
    hit_count: 0,
    best_hit: null,
    ...over,
  };
}

export class MockBackend implements Backend {
  readonly kind = "web" as const;
  /** The surface the engine records for this transport's decisions (the caller, never a param). */
  readonly surface = "web";
  sessions: SessionSummary[] = [];
  details = new Map<number, SessionDetail>();
  /** When set, list_sessions rejects with it (once per call) until cleared. */
  listError: ApiError | null = null;
  listCalls: SessionListQuery[] = [];
  detailCalls: number[] = [];
  private listeners = new Set<(e: EventEnvelope) => void>();
  /** The chat side: which session each source writes to, and which of them run a turn. */
  activeSessions = new Map<string, number>();
  running = new Set<number>();
  nextSessionId = 100;
  sent: Array<{ source: string; text: string }> = [];
  /** Calls a sent message is queued behind (what `sendMessage` answers in `waiting_for`). */
  waitingFor: number[] = [];
  sendError: ApiError | null = null;
  /** Async tasks `list_tasks` answers; `continue_task` records the child sessions it got. */
  tasks: TaskInfo[] = [];
  continued: number[] = [];
  stopCalls: number[] = [];
  /** What `session_usage` answers, by session id (absent: nothing reported yet). */
  usage = new Map<number, Partial<SessionUsage>>();
  compactCalls: Array<{ sessionId: number; focus: string | null }> = [];
  /** Tool groups "activated" per session; `reset_tool_groups` revokes them. */
  toolGroups = new Map<number, number>();
  /** What the next `compact_session` answers (or rejects with, for an ApiError). */
  compactResult: CompactResult | ApiError = {
    compacted: true,
    tokens_before: 90_000,
    tokens_after: 12_000,
    summarised_messages: 40,
    summary_id: 41,
    summary: "The earlier work, in short.",
  };
  newSessionCalls: string[] = [];
  /** The agent asked for by each `new_session` (null when none). */
  newSessionAgents: Array<string | null> = [];
  /** Agent definitions by id, with their AGENT.md text. */
  agents = new Map<string, { summary: AgentSummary; meta: AgentDefinition | null; prompt: string }>([
    ["generalist", agentEntry("generalist", { name: "Generalist", type: "task", built_in: true }, "Do the task.")],
    ["main", agentEntry("main", { name: "Skald", type: "chat", built_in: true }, "You are Skald.")],
  ]);
  /** When set, the next save_agent rejects with it (and clears it). */
  agentError: ApiError | null = null;
  savedAgents: SaveAgentParams[] = [];
  deletedAgents: string[] = [];
  inboxItems: InboxItem[] = [];
  /** Open clarification questions the inbox lists. */
  inboxQuestions: QuestionItem[] = [];
  /** Open questions of MCP servers the inbox lists. */
  inboxElicitations: ElicitationItem[] = [];
  /** Server questions answered, in order. */
  elicitationAnswers: AnswerElicitationParams[] = [];
  inboxError: ApiError | null = null;
  inboxCalls = 0;
  decisions: Array<{ toolCallId: number; input: DecisionInput }> = [];
  decideError: ApiError | null = null;
  /** Bypasses in force; `decide` with a bypass adds one, `revokeBypass` removes it. */
  bypasses: BypassView[] = [];
  revokeCalls: number[] = [];
  /** When set, revokeBypass rejects with it. */
  revokeError: ApiError | null = null;
  nextBypassId = 900;

  /** Settings: one configured client by default, so the first-run redirect stays out of the way. */
  clients: LlmClientView[] = [llmClient("local")];
  settingsError: ApiError | null = null;
  saveClientsCalls: Array<{ clients: LlmClientInput[]; fallback: string[] }> = [];
  saveClientsError: ApiError | null = null;
  /** config.yml's revision: bumped by every save, and by a test standing for a hand edit. */
  configRevision = 1;
  saveClientsRevisions: Array<string | null> = [];
  /** Keys "in the keychain", by client name. */
  keys = new Map<string, string>();
  keyCalls: Array<{ client: string; key: string | null }> = [];
  connectionTests = new Map<string, ConnectionTest>();
  testCalls: string[] = [];
  rules: ApprovalRuleView[] = [];
  ruleCalls: Array<{ id: number | null; input: ApprovalRuleInput }> = [];
  /** When set, the next save_approval_rule rejects with it (and clears it). */
  ruleError: ApiError | null = null;
  deletedRules: number[] = [];
  nextRuleId = 500;
  /** Logged provider requests by message id; absent ids answer like an engine with the log off. */
  requests = new Map<number, JsonValue>();
  requestCalls: number[] = [];

  constructor(init: { sessions?: SessionSummary[]; details?: SessionDetail[] } = {}) {
    this.sessions = init.sessions ?? [];
    for (const d of init.details ?? []) this.details.set(d.session.id, d);
  }

  list_sessions({ query }: ListSessionsParams): Promise<Page<SessionSummary>> {
    this.listCalls.push(query);
    if (this.listError) return Promise.reject(this.listError);
    const needle = query.search?.toLowerCase() ?? null;
    // Like the engine: a session's `best_hit` counts (and is sent) only while searching, and
    // only when its snippet holds the text; a title match alone comes without one.
    const hitMatches = (s: SessionSummary) =>
      needle !== null && (s.best_hit?.snippet.map((p) => p.text).join("") ?? "").toLowerCase().includes(needle);
    const matching = this.sessions
      .filter(
        (s) =>
          (query.source === null || s.source === query.source) &&
          (needle === null || (s.title ?? "").toLowerCase().includes(needle) || hitMatches(s)),
      )
      .map((s) => (hitMatches(s) ? s : { ...s, hit_count: 0, best_hit: null }));
    const start = (query.page - 1) * query.per_page;
    return Promise.resolve({
      items: matching.slice(start, start + query.per_page),
      total: matching.length,
      page: query.page,
      per_page: query.per_page,
    });
  }

  searchCalls: SearchParams[] = [];

  /** The listed sessions' best hits whose snippet holds the text, as the engine ranks them. */
  search(params: SearchParams): Promise<SearchResults> {
    this.searchCalls.push(params);
    const needle = params.query.text.toLowerCase();
    const hits = this.sessions
      .flatMap((s) => (s.best_hit ? [s.best_hit] : []))
      .filter((h) => h.snippet.map((p) => p.text).join("").toLowerCase().includes(needle));
    return Promise.resolve({ hits: hits.slice(0, params.query.limit), more: hits.length > params.query.limit });
  }

  findCalls: FindInSessionParams[] = [];

  /** The detail's rows whose text (a call's label) holds the text, case-insensitively, in order. */
  find_in_session(params: FindInSessionParams): Promise<SessionMatches> {
    this.findCalls.push(params);
    const detail = this.details.get(params.session_id);
    if (!detail) {
      return Promise.reject({ code: "not_found", message: `session ${params.session_id} not found` } satisfies ApiError);
    }
    const needle = params.text.toLowerCase();
    const matches: MatchRef[] = detail.messages.flatMap((m): MatchRef[] => {
      if (m.kind === "tool") {
        return m.label.toLowerCase().includes(needle)
          ? [{ message_id: m.message_id, tool_call_id: m.tool_call_id, kind: "tool" }]
          : [];
      }
      if (m.kind === "user" || m.kind === "assistant" || m.kind === "thinking") {
        const kind = m.kind === "user" ? "user" : "assistant";
        return m.content.toLowerCase().includes(needle) ? [{ message_id: m.message_id, tool_call_id: null, kind }] : [];
      }
      return [];
    });
    return Promise.resolve({ session_id: params.session_id, matches });
  }

  session_detail({ session_id: id }: SessionDetailParams): Promise<SessionDetail> {
    this.detailCalls.push(id);
    const d = this.details.get(id);
    return d
      ? Promise.resolve(d)
      : Promise.reject({ code: "not_found", message: `session ${id} not found` } satisfies ApiError);
  }

  /** Every window read, in order. */
  windowCalls: Array<{ sessionId: number; query: WindowQuery }> = [];
  itemCalls: ItemRef[] = [];
  /** Whole rows `session_item` answers, by ref key (the window's row when absent). */
  wholeRows = new Map<string, DebugMessage>();

  /** Slices the session's rows the way the engine pages its tree. */
  session_window({ session_id: sessionId, query }: SessionWindowParams): Promise<SessionWindow> {
    this.windowCalls.push({ sessionId, query });
    const d = this.details.get(sessionId);
    if (!d) return Promise.reject({ code: "not_found", message: `session ${sessionId} not found` } satisfies ApiError);
    const rows = d.messages;
    const n = rows.length;
    const limit = Math.max(1, Math.min(query.limit, 500));
    const at = (ref: ItemRef) => rows.findIndex((m) => refKey(itemRef(m)) === refKey(ref));
    // As the engine: the turn ends placed between the page's rows, open-ended at a side with no more rows.
    const endsWithin = (items: DebugMessage[], before: boolean, after: boolean) => {
      const ids = items.flatMap((m) => (m.kind === "agent" || m.kind === "agent_end" ? [] : [m.message_id]));
      if (ids.length === 0 && (before || after)) return [];
      const lo = before ? Math.min(...ids) : -Infinity;
      const hi = after ? Math.max(...ids) : Infinity;
      return d.turn_ends.filter((t) => (t.after_message_id ?? -1) >= lo && (t.after_message_id ?? -1) <= hi);
    };
    const page = (start: number, end: number, before: boolean, after: boolean, anchor: number | null): SessionWindow => ({
      session: d.session,
      items: rows.slice(start, end),
      turn_ends: endsWithin(rows.slice(start, end), before, after),
      has_more_before: before,
      has_more_after: after,
      anchor_index: anchor,
      pending_inputs: d.pending_inputs,
      awaiting_human: rows.flatMap((m) => (m.kind === "tool" && m.status === "pending" ? [m.tool_call_id] : [])),
      tasks: this.tasks.filter((t) => t.parent_session_id === d.session.id),
    });
    const { anchor } = query;
    if (anchor.type === "latest") {
      const start = Math.max(0, n - limit);
      return Promise.resolve(page(start, n, start > 0, false, null));
    }
    const i = at(anchor.item);
    if (i < 0) return Promise.reject({ code: "not_found", message: "no such row" } satisfies ApiError);
    if (anchor.type === "before") {
      const start = Math.max(0, i - limit);
      return Promise.resolve(page(start, i, start > 0, true, null));
    }
    if (anchor.type === "after") return Promise.resolve(page(i + 1, i + 1 + limit, true, i + 1 + limit < n, null));
    const start = Math.max(0, i - Math.floor((limit - 1) / 2));
    return Promise.resolve(page(start, start + limit, start > 0, start + limit < n, i - start));
  }

  session_item({ session_id: sessionId, item }: SessionItemParams): Promise<DebugMessage> {
    this.itemCalls.push(item);
    const row =
      this.wholeRows.get(refKey(item)) ??
      this.details.get(sessionId)?.messages.find((m) => refKey(itemRef(m)) === refKey(item));
    return row ? Promise.resolve(row) : Promise.reject({ code: "not_found", message: "no such row" } satisfies ApiError);
  }

  /** Media files `tool_media` answers, by `<tool call id>:<index>`; every read, in order. */
  mediaFiles = new Map<string, MediaFile>();
  mediaCalls: ToolMediaParams[] = [];

  tool_media(params: ToolMediaParams): Promise<MediaFile> {
    this.mediaCalls.push(params);
    const file = this.mediaFiles.get(`${params.tool_call_id}:${params.index}`);
    return file
      ? Promise.resolve(file)
      : Promise.reject({ code: "not_found", message: `tool call ${params.tool_call_id} has no media file ${params.index}` } satisfies ApiError);
  }

  renameCalls: RenameSessionParams[] = [];

  rename_session(params: RenameSessionParams): Promise<SessionMeta> {
    this.renameCalls.push(params);
    const detail = this.details.get(params.session_id);
    if (!detail) {
      return Promise.reject({ code: "not_found", message: `session ${params.session_id} not found` } satisfies ApiError);
    }
    const title = params.title?.trim() || null;
    const session = { ...detail.session, title };
    this.details.set(params.session_id, { ...detail, session });
    this.sessions = this.sessions.map((s) => (s.id === params.session_id ? { ...s, title } : s));
    return Promise.resolve(session);
  }

  active_session({ source }: ActiveSessionParams): Promise<SessionRef> {
    let id = this.activeSessions.get(source);
    if (id === undefined) {
      id = this.nextSessionId++;
      this.activeSessions.set(source, id);
    }
    if (!this.details.has(id)) this.details.set(id, emptyDetail(id, source));
    return Promise.resolve({ session_id: id });
  }

  send_message({ source, text }: SendMessageParams): Promise<SendResult> {
    if (this.sendError) return Promise.reject(this.sendError);
    this.sent.push({ source, text });
    const id = this.activeSessions.get(source) ?? 0;
    const steered = this.running.has(id) || this.waitingFor.length > 0;
    return Promise.resolve({ session_id: id, steered, waiting_for: [...this.waitingFor] });
  }

  stop_turn({ session_id: sessionId }: StopTurnParams): Promise<StopResult> {
    this.stopCalls.push(sessionId);
    return Promise.resolve({ stopped: this.running.delete(sessionId) });
  }

  list_tasks({ session_id: sessionId }: ListTasksParams): Promise<TaskInfo[]> {
    return Promise.resolve(this.tasks.filter((t) => t.parent_session_id === sessionId));
  }

  continue_task({ session_id: sessionId }: ContinueTaskParams): Promise<TaskInfo> {
    this.continued.push(sessionId);
    const task = this.tasks.find((t) => t.child_session_id === sessionId);
    if (!task) {
      return Promise.reject({ code: "not_found", message: `session ${sessionId} is not a task` } satisfies ApiError);
    }
    task.state = "queued";
    return Promise.resolve({ ...task });
  }

  turn_running({ session_id: sessionId }: TurnRunningParams): Promise<TurnStatus> {
    return Promise.resolve({ running: this.running.has(sessionId) });
  }

  session_usage({ session_id: sessionId }: SessionUsageParams): Promise<SessionUsage> {
    return Promise.resolve({
      session_id: sessionId,
      last_input_tokens: null,
      last_output_tokens: null,
      model: null,
      context_window: null,
      context_tokens: null,
      context_estimated: false,
      input_tokens_total: 0,
      output_tokens_total: 0,
      cost_usd: null,
      priced_replies: 0,
      replies: 0,
      ...this.usage.get(sessionId),
    });
  }

  /** The home source `/sethome` chose (null: the default). */
  homeSource: string | null = null;

  home_source(): Promise<HomeSource> {
    return Promise.resolve({ source: this.homeSource ?? "web", chosen: this.homeSource !== null });
  }

  set_home_source({ source }: SetHomeSourceParams): Promise<HomeSource> {
    if (!source.trim()) return Promise.reject({ code: "invalid_input", message: "a source name is required" });
    this.homeSource = source.trim();
    return this.home_source();
  }

  list_notifications(): Promise<NotificationInfo[]> {
    return Promise.resolve([]);
  }

  deliver_briefing(): Promise<number> {
    return Promise.resolve(0);
  }

  reset_tool_groups({ session_id: sessionId }: ResetToolGroupsParams): Promise<ToolGroupsReset> {
    const revoked = this.toolGroups.get(sessionId) ?? 0;
    this.toolGroups.delete(sessionId);
    return Promise.resolve({ revoked });
  }

  compact_session({ session_id: sessionId, focus }: CompactSessionParams): Promise<CompactResult> {
    this.compactCalls.push({ sessionId, focus });
    const r = this.compactResult;
    return "code" in r ? Promise.reject(r) : Promise.resolve(r);
  }

  new_session({ source, agent_id }: NewSessionParams): Promise<SessionRef> {
    this.newSessionCalls.push(source);
    this.newSessionAgents.push(agent_id ?? null);
    const id = this.nextSessionId++;
    this.activeSessions.set(source, id);
    const detail = emptyDetail(id, source);
    this.details.set(id, { ...detail, session: { ...detail.session, agent_id: agent_id ?? "main" } });
    return Promise.resolve({ session_id: id });
  }

  /** What list_mcp_servers answers, and what it was asked. */
  mcpServers: McpServerInfo[] = [];
  mcpListCalls: ListMcpServersParams[] = [];
  /** What the servers answer once started (`start: true`). */
  mcpStarted: McpServerInfo[] | null = null;

  /** Servers added from Settings, in order. */
  addedMcpServers: McpServerInput[] = [];

  add_mcp_server({ server }: AddMcpServerParams): Promise<McpServerInfo[]> {
    if (this.mcpServers.some((s) => s.name === server.name))
      return Promise.reject({ code: "invalid_input", message: `config.yml: an MCP server named \`${server.name}\` exists already` } satisfies ApiError);
    this.addedMcpServers.push(server);
    const endpoint = server.command ? `stdio: ${[server.command, ...server.args].join(" ")}` : `http: ${server.url ?? ""}`;
    this.mcpServers = [
      ...this.mcpServers,
      { name: server.name, description: server.description, endpoint, state: "not_started", error: null, tools: [], log_path: null, log_lines: [], keep_connected: server.keep_connected },
    ];
    return Promise.resolve(this.mcpServers);
  }

  remove_mcp_server({ name }: RemoveMcpServerParams): Promise<McpServerInfo[]> {
    this.mcpServers = this.mcpServers.filter((s) => s.name !== name);
    return Promise.resolve(this.mcpServers);
  }

  set_mcp_server_enabled({ name, enabled }: SetMcpServerEnabledParams): Promise<McpServerInfo[]> {
    this.mcpServers = this.mcpServers.map((s) =>
      s.name === name ? { ...s, state: enabled ? "not_started" : "disabled", tools: enabled ? s.tools : [] } : s,
    );
    return Promise.resolve(this.mcpServers);
  }

  /** Servers whose OAuth authorization was started, in order. */
  mcpAuthorized: string[] = [];

  authorize_mcp_server({ name }: AuthorizeMcpServerParams): Promise<McpAuthorization> {
    const server = this.mcpServers.find((s) => s.name === name);
    if (!server) return Promise.reject({ code: "not_found", message: `no MCP server named \`${name}\`` } satisfies ApiError);
    if (!server.endpoint.startsWith("http"))
      return Promise.reject({ code: "invalid_input", message: `the MCP server \`${name}\` could not be started: a local (stdio) server needs no authorization` } satisfies ApiError);
    this.mcpAuthorized.push(name);
    this.mcpServers = this.mcpServers.map((s) => (s.name === name ? { ...s, state: "authorizing", error: null } : s));
    return Promise.resolve({ server: name, url: `https://auth.example/authorize?client_id=skald&state=s-${name}` });
  }

  forget_mcp_authorization({ name }: ForgetMcpAuthorizationParams): Promise<McpServerInfo[]> {
    this.mcpServers = this.mcpServers.map((s) => (s.name === name ? { ...s, state: "not_started", tools: [] } : s));
    return Promise.resolve(this.mcpServers.filter((s) => s.name === name));
  }

  list_mcp_servers(params: ListMcpServersParams): Promise<McpServerInfo[]> {
    this.mcpListCalls.push(params);
    if (params.start && this.mcpStarted) this.mcpServers = this.mcpStarted;
    return Promise.resolve(this.mcpServers);
  }

  list_agents(): Promise<AgentSummary[]> {
    return Promise.resolve([...this.agents.values()].map((a) => a.summary).sort((a, b) => a.id.localeCompare(b.id)));
  }

  get_agent({ id }: GetAgentParams): Promise<AgentDetail> {
    const a = this.agents.get(id);
    return a
      ? Promise.resolve({ summary: a.summary, meta: a.meta, prompt: a.prompt })
      : Promise.reject({ code: "not_found", message: `agent \`${id}\` not found` } satisfies ApiError);
  }

  save_agent(params: SaveAgentParams): Promise<AgentSummary> {
    this.savedAgents.push(params);
    if (this.agentError) {
      const error = this.agentError;
      this.agentError = null;
      return Promise.reject(error);
    }
    const old = this.agents.get(params.id);
    const overrides = old?.summary.built_in === true || old?.summary.overrides_built_in === true;
    const saved = agentEntry(params.id, { ...params.meta, overrides_built_in: overrides }, params.prompt);
    this.agents.set(params.id, saved);
    return Promise.resolve(saved.summary);
  }

  delete_agent({ id }: DeleteAgentParams): Promise<null> {
    this.deletedAgents.push(id);
    this.agents.delete(id);
    return Promise.resolve(null);
  }

  inbox(): Promise<Inbox> {
    this.inboxCalls += 1;
    if (this.inboxError) return Promise.reject(this.inboxError);
    return Promise.resolve({
      items: [...this.inboxItems],
      questions: [...this.inboxQuestions],
      elicitations: [...this.inboxElicitations],
      total: this.inboxItems.length + this.inboxQuestions.length + this.inboxElicitations.length,
    });
  }

  decide({ tool_call_id: toolCallId, input }: DecideParams): Promise<Decision> {
    this.decisions.push({ toolCallId, input });
    if (this.decideError) return Promise.reject(this.decideError);
    const item = this.inboxItems.find((i) => i.tool_call_id === toolCallId);
    this.inboxItems = this.inboxItems.filter((i) => i.tool_call_id !== toolCallId);
    let granted: BypassView | null = null;
    if (input.bypass) {
      const scope = input.bypass.scope ?? "all";
      const value = scope === "category" ? item?.tool_category ?? null : scope === "mcp_server" ? item?.mcp_server ?? null : null;
      granted = bypassView(this.nextBypassId++, {
        session_id: item?.session_id ?? 0,
        scope,
        scope_value: value,
        label: value ? `${value} tools` : "all tools",
        duration: input.bypass.duration,
        granted_by: this.surface,
        tool_call_id: toolCallId,
      });
      this.bypasses = [...this.bypasses, granted];
    }
    return Promise.resolve({
      tool_call_id: toolCallId,
      session_id: item?.session_id ?? 0,
      approved: input.approved,
      note: input.note,
      decided_by: this.surface,
      decided_at: "2026-11-30T10:10:00Z",
      resumed: true,
      bypass: granted,
    });
  }

  active_bypasses(): Promise<BypassView[]> {
    return Promise.resolve([...this.bypasses]);
  }

  session_bypasses({ session_id: sessionId }: SessionBypassesParams): Promise<BypassView[]> {
    return Promise.resolve(this.bypasses.filter((b) => b.session_id === sessionId));
  }

  revoke_bypass({ id }: RevokeBypassParams): Promise<BypassView> {
    this.revokeCalls.push(id);
    if (this.revokeError) return Promise.reject(this.revokeError);
    const found = this.bypasses.find((b) => b.id === id);
    if (!found) return Promise.reject({ code: "not_found", message: `bypass ${id} not found` } satisfies ApiError);
    this.bypasses = this.bypasses.filter((b) => b.id !== id);
    return Promise.resolve({ ...found, remaining_secs: 0, revoked_at: "2026-11-30T10:20:00Z", revoked_by: this.surface });
  }

  /** Calls a restart cut off while they ran, by session; `reconcile_call` records the choice. */
  interrupted = new Map<number, InterruptedCall[]>();
  reconcileCalls: ReconcileCallParams[] = [];
  /** When set, reconcile_call rejects with it. */
  reconcileError: ApiError | null = null;

  interrupted_calls({ session_id: sessionId }: InterruptedCallsParams): Promise<InterruptedCall[]> {
    return Promise.resolve([...(this.interrupted.get(sessionId) ?? [])]);
  }

  open_interrupted_calls(_params: OpenInterruptedCallsParams): Promise<InterruptedCall[]> {
    const open = [...this.interrupted.values()].flat().filter((c) => c.choice === null);
    return Promise.resolve(open.sort((a, b) => a.tool_call_id - b.tool_call_id));
  }

  /** Like the engine: set once; a re-run "completes" with `ok`; clients hear `interrupted_call`. */
  reconcile_call(params: ReconcileCallParams): Promise<InterruptedCall> {
    this.reconcileCalls.push(params);
    if (this.reconcileError) return Promise.reject(this.reconcileError);
    for (const [sessionId, calls] of this.interrupted) {
      const i = calls.findIndex((c) => c.tool_call_id === params.tool_call_id);
      if (i < 0) continue;
      const rerun = params.choice === "run_again";
      const call: InterruptedCall = {
        ...(calls[i] as InterruptedCall),
        choice: params.choice,
        decided_by: this.surface,
        decided_at: "2026-11-30T10:30:00Z",
        rerun_status: rerun ? "done" : null,
        rerun_result: rerun ? "ok" : null,
      };
      calls[i] = call;
      this.emit({ seq: null, session_id: sessionId, source: null, frame: null, event: { type: "interrupted_call", call } });
      return Promise.resolve(call);
    }
    return Promise.reject({ code: "not_found", message: `call ${params.tool_call_id} is not interrupted` } satisfies ApiError);
  }

  /** Questions answered, in order (from the chat or the inbox). */
  answers: AnswerQuestionParams[] = [];

  answer_question(params: AnswerQuestionParams): Promise<Answer> {
    this.answers.push(params);
    return Promise.resolve({ tool_call_id: params.tool_call_id, session_id: 7, answer: params.answer, resumed: true });
  }

  answer_elicitation(params: AnswerElicitationParams): Promise<ElicitationAnswered> {
    this.elicitationAnswers.push(params);
    this.inboxElicitations = this.inboxElicitations.filter((e) => e.elicitation_id !== params.elicitation_id);
    return Promise.resolve({ delivered: true });
  }

  settings(): Promise<SettingsView> {
    if (this.settingsError) return Promise.reject(this.settingsError);
    const clients = this.clients.map((c) => ({
      ...c,
      has_api_key: c.from_env || c.api_key_env !== null ? c.has_api_key : this.keys.has(c.name),
    }));
    return Promise.resolve({
      clients,
      fallback: clients.map((c) => c.name),
      data_dir: "/home/me/.local/share/skald",
      config_path: "/home/me/.local/share/skald/config.yml",
      revision: `r${this.configRevision}`,
    });
  }

  save_llm_clients({ clients, fallback, revision }: SaveLlmClientsParams): Promise<SettingsView> {
    this.saveClientsCalls.push({ clients, fallback });
    this.saveClientsRevisions.push(revision);
    if (this.saveClientsError) return Promise.reject(this.saveClientsError);
    if (revision !== null && revision !== `r${this.configRevision}`) {
      return Promise.reject({ code: "conflict", message: "config.yml changed since these settings were loaded; nothing was saved." } satisfies ApiError);
    }
    this.configRevision += 1;
    const env = this.clients.filter((c) => c.from_env);
    const ordered = [...fallback.map((n) => clients.find((c) => c.name === n)), ...clients]
      .filter((c): c is LlmClientInput => c !== undefined)
      .filter((c, i, all) => all.findIndex((o) => o.name === c.name) === i);
    this.clients = [
      ...env,
      ...ordered.map(({ previous_name: _renamed, stream, ...c }) => ({ ...c, stream: stream !== false, has_api_key: false, from_env: false })),
    ];
    return this.settings();
  }

  set_api_key({ client, key }: SetApiKeyParams): Promise<null> {
    this.keyCalls.push({ client, key });
    if (key) this.keys.set(client, key);
    else this.keys.delete(client);
    return Promise.resolve(null);
  }

  test_connection({ client }: TestConnectionParams): Promise<ConnectionTest> {
    this.testCalls.push(client);
    const found = this.connectionTests.get(client);
    if (found) return Promise.resolve(found);
    return Promise.reject({ code: "not_found", message: `no LLM client named \`${client}\`` } satisfies ApiError);
  }

  approval_rules(): Promise<ApprovalRuleView[]> {
    return Promise.resolve([...this.rules]);
  }

  save_approval_rule({ id, input }: SaveApprovalRuleParams): Promise<ApprovalRuleView> {
    this.ruleCalls.push({ id, input });
    if (this.ruleError) {
      const error = this.ruleError;
      this.ruleError = null;
      return Promise.reject(error);
    }
    const old = id === null ? undefined : this.rules.find((r) => r.id === id);
    const saved: ApprovalRuleView = {
      id: id ?? this.nextRuleId++,
      group_id: input.group_id ?? "default",
      tool_pattern: input.tool_pattern,
      path_pattern: input.path_pattern,
      agent_id: input.agent_id,
      source: input.source,
      action: input.action,
      priority: input.priority,
      note: input.note,
      seed_key: old?.seed_key ?? null,
    };
    this.rules = [...this.rules.filter((r) => r.id !== saved.id), saved].sort(
      (a, b) => a.group_id.localeCompare(b.group_id) || a.priority - b.priority || a.id - b.id,
    );
    return Promise.resolve(saved);
  }

  delete_approval_rule({ id }: DeleteApprovalRuleParams): Promise<null> {
    this.deletedRules.push(id);
    this.rules = this.rules.filter((r) => r.id !== id);
    return Promise.resolve(null);
  }

  llm_request({ message_id: messageId }: LlmRequestParams): Promise<JsonValue> {
    this.requestCalls.push(messageId);
    const logged = this.requests.get(messageId);
    if (logged !== undefined) return Promise.resolve(logged);
    return Promise.reject({
      code: "not_found",
      message: `no request was logged for message ${messageId} (set llm.request_log.enabled: true in config.yml to keep them)`,
    } satisfies ApiError);
  }

  /** Run contexts set per session (absent: the defaults). */
  runContexts = new Map<number, RunContext>();

  run_context({ session_id: sessionId }: RunContextParams): Promise<RunContext> {
    return Promise.resolve(
      this.runContexts.get(sessionId) ?? {
        working_directory: null,
        system_prompt: [],
        allow_fs_reads: [],
        allow_fs_writes: [],
        security_group: null,
      },
    );
  }

  set_run_context({ session_id: sessionId, run_context }: SetRunContextParams): Promise<null> {
    if (run_context) this.runContexts.set(sessionId, run_context);
    else this.runContexts.delete(sessionId);
    return Promise.resolve(null);
  }

  /** Scheduled jobs and their runs (see mockJobs.ts). */
  jobs = new MockJobs();
  list_jobs = () => this.jobs.list_jobs();
  get_job: Backend["get_job"] = (p) => this.jobs.get_job(p);
  preview_schedule: Backend["preview_schedule"] = (p) => this.jobs.preview_schedule(p);
  add_job: Backend["add_job"] = (p) => this.jobs.add_job(p);
  edit_job: Backend["edit_job"] = (p) => this.jobs.edit_job(p);
  delete_job: Backend["delete_job"] = (p) => this.jobs.delete_job(p);
  set_job_enabled: Backend["set_job_enabled"] = (p) => this.jobs.set_job_enabled(p);
  run_job_now: Backend["run_job_now"] = (p) => this.jobs.run_job_now(p);
  list_job_runs: Backend["list_job_runs"] = (p) => this.jobs.list_job_runs(p);
  kill_job_run: Backend["kill_job_run"] = (p) => this.jobs.kill_job_run(p);
  /** Agent memory files and their recorded writes (see mockMemory.ts). */
  memory = new MockMemory();
  list_memory_files: Backend["list_memory_files"] = () => this.memory.list_memory_files();
  read_memory_file: Backend["read_memory_file"] = (p) => this.memory.read_memory_file(p);
  memory_history: Backend["memory_history"] = (p) => this.memory.memory_history(p);
  save_memory_file: Backend["save_memory_file"] = (p) => this.memory.save_memory_file(p);
  undo_memory_edit: Backend["undo_memory_edit"] = (p) => this.memory.undo_memory_edit(p);
  /** TIC: the status the page reads, each tick's events, and what Run a tick now starts. */
  tic: TicStatus = { interval_secs: 900, batch_size: 50, active_hours: null, pending_events: 0, kept_connected: [], ticks: [] };
  ticEvents: Record<number, TicEventInfo[]> = {};
  ticRuns = 0;
  tic_status: Backend["tic_status"] = async () => structuredClone(this.tic);
  tic_tick: Backend["tic_tick"] = async ({ tick_id }) => {
    const tick = this.tic.ticks.find((t) => t.id === tick_id);
    if (!tick) throw { code: "not_found", message: `no tick ${tick_id}` };
    return { tick, events: this.ticEvents[tick_id] ?? [] };
  };
  run_tic: Backend["run_tic"] = async () => {
    this.ticRuns += 1;
    if (this.tic.ticks.some((t) => t.state === "running")) throw { code: "conflict", message: "a tick is running" };
    const id = Math.max(0, ...this.tic.ticks.map((t) => t.id)) + 1;
    const events = Math.min(this.tic.pending_events, this.tic.batch_size);
    const tick: TicTickInfo = {
      id,
      slot: "2026-05-04T10:00:00.000Z",
      manual: true,
      state: events ? "running" : "empty",
      events,
      servers: [],
      session_id: events ? 500 + id : null,
      started_at: "2026-05-04T10:00:00.000Z",
      ended_at: null,
      reason: events ? null : "nothing new",
    };
    this.tic.pending_events -= events;
    if (events) this.tic.ticks.unshift(tick);
    return tick;
  };
  /** Notices for the home chat, newest first; dismissed ones leave the list. */
  notices: HomeNotice[] = [];
  dismissed: number[] = [];
  home_notices: Backend["home_notices"] = async () => this.notices.filter((n) => !this.dismissed.includes(n.id));
  dismiss_home_notice: Backend["dismiss_home_notice"] = async ({ notice_id }) => {
    if (!this.notices.some((n) => n.id === notice_id)) throw { code: "not_found", message: `no notice ${notice_id}` };
    this.dismissed.push(notice_id);
    return null;
  };

  subscribe(onEvent: (e: EventEnvelope) => void): () => void {
    this.listeners.add(onEvent);
    return () => this.listeners.delete(onEvent);
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  emit(envelope: EventEnvelope): void {
    for (const l of this.listeners) l(envelope);
  }
}

export function emptyDetail(id: number, source = "web"): SessionDetail {
  return {
    session: {
      id,
      title: null,
      source,
      agent_id: "main",
      is_interactive: true,
      is_ephemeral: false,
      created_at: "2026-11-30T10:00:00Z",
    },
    messages: [],
    pending_inputs: [],
    turn_ends: [],
    tasks: [],
  };
}

/** A call a restart cut off while it ran, not reconciled yet. */
export function interruptedCall(toolCallId: number, over: Partial<InterruptedCall> = {}): InterruptedCall {
  return {
    tool_call_id: toolCallId,
    session_id: 1,
    tool_name: "execute_cmd",
    label: "execute_cmd make install",
    flagged_at: "2026-11-30T10:00:00Z",
    choice: null,
    decided_by: null,
    decided_at: null,
    rerun_status: null,
    rerun_result: null,
    ...over,
  };
}

export function inboxItem(toolCallId: number, over: Partial<InboxItem> = {}): InboxItem {
  return {
    tool_call_id: toolCallId,
    session_id: 7,
    source: "web",
    agent_id: "main",
    context_label: null,
    frame_label: null,
    tool_name: "write_file",
    tool_category: "filesystem",
    mcp_server: null,
    kind: "write",
    arguments: { path: `notes-${toolCallId}.md`, content: "hello" },
    summary: `write notes-${toolCallId}.md`,
    path: `notes-${toolCallId}.md`,
    command: null,
    workdir: null,
    diff: null,
    created_at: "2026-11-30T10:00:00Z",
    age_secs: 60,
    ...over,
  };
}

export function questionItem(toolCallId: number, over: Partial<QuestionItem> = {}): QuestionItem {
  return {
    tool_call_id: toolCallId,
    session_id: 7,
    source: "web",
    agent_id: "main",
    context_label: null,
    frame_label: null,
    title: "Which branch?",
    question: "Should I work on **main** or a new branch?",
    suggested_answers: ["main", "a new branch"],
    created_at: "2026-11-30T10:00:00Z",
    age_secs: 30,
    ...over,
  };
}

export function bypassView(id: number, over: Partial<BypassView> = {}): BypassView {
  return {
    id,
    session_id: 7,
    source: "web",
    scope: "category",
    scope_value: "filesystem",
    label: "filesystem tools",
    duration: "fifteen_minutes",
    granted_by: "web",
    granted_at: "2026-11-30T10:00:00.000Z",
    expires_at: "2026-11-30T10:15:00.000Z",
    remaining_secs: 900,
    tool_call_id: null,
    revoked_at: null,
    revoked_by: null,
    ...over,
  };
}

/** A small modify diff: line 2 changed (word-level spans), line 3 inserted. */
export function fileDiff(over: Partial<FileDiff> = {}): FileDiff {
  return {
    path: "src/main.rs",
    kind: "modify",
    hunks: [
      {
        old_start: 1,
        old_lines: 2,
        new_start: 1,
        new_lines: 3,
        lines: [
          { tag: "context", old_line: 1, new_line: 1, text: "fn main() {", spans: [] },
          {
            tag: "delete",
            old_line: 2,
            new_line: null,
            text: '    println!("hello");',
            spans: [
              { text: '    println!("', changed: false },
              { text: "hello", changed: true },
              { text: '");', changed: false },
            ],
          },
          {
            tag: "insert",
            old_line: null,
            new_line: 2,
            text: '    println!("goodbye");',
            spans: [
              { text: '    println!("', changed: false },
              { text: "goodbye", changed: true },
              { text: '");', changed: false },
            ],
          },
          { tag: "insert", old_line: null, new_line: 3, text: "    exit();", spans: [] },
        ],
      },
    ],
    added: 2,
    removed: 1,
    unified: "",
    summary: "1 hunk, +2 −1",
    crlf: false,
    old_missing_newline: false,
    new_missing_newline: false,
    ...over,
  };
}

/** A diff of a brand-new file with `n` lines. */
export function newFileDiff(path: string, n: number): FileDiff {
  return fileDiff({
    path,
    kind: "create",
    hunks: [
      {
        old_start: 0,
        old_lines: 0,
        new_start: 1,
        new_lines: n,
        lines: Array.from({ length: n }, (_, i) => ({
          tag: "insert" as const,
          old_line: null,
          new_line: i + 1,
          text: `line ${i + 1}`,
          spans: [],
        })),
      },
    ],
    added: n,
    removed: 0,
    summary: `new file, ${n} lines`,
  });
}

export function llmClient(name: string, over: Partial<LlmClientView> = {}): LlmClientView {
  return {
    name,
    base_url: "http://localhost:11434/v1",
    model: "llama3.2",
    provider: null,
    api_key_env: null,
    has_api_key: false,
    from_env: false,
    context_window: null,
    stream: true,
    ...over,
  };
}

export function rule(id: number, over: Partial<ApprovalRuleView> = {}): ApprovalRuleView {
  return {
    id,
    group_id: "default",
    tool_pattern: "write_file",
    path_pattern: null,
    agent_id: null,
    source: null,
    action: "require",
    priority: 10,
    note: null,
    seed_key: null,
    ...over,
  };
}

/** An agent as the engine lists it, with the meta and prompt `get_agent` answers. */
export function agentEntry(
  id: string,
  over: Partial<AgentSummary & AgentDefinition> = {},
  prompt = "",
): { summary: AgentSummary; meta: AgentDefinition; prompt: string } {
  const meta: AgentDefinition = {
    name: over.name ?? id,
    description: over.description ?? `What ${id} does`,
    friendly_description: null,
    instructions: null,
    type: over.type ?? "task",
    inject_memory: over.inject_memory ?? [],
    client: over.client ?? null,
    scope: over.scope ?? null,
    strength: over.strength ?? null,
  };
  const summary: AgentSummary = {
    id,
    name: meta.name,
    description: meta.description,
    type: meta.type,
    client: meta.client,
    scope: meta.scope,
    strength: meta.strength,
    built_in: over.built_in ?? false,
    overrides_built_in: over.overrides_built_in ?? false,
    error: over.error ?? null,
    warnings: over.warnings ?? [],
  };
  return { summary, meta, prompt };
}
