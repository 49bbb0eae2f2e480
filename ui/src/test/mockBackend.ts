// An in-memory Backend for component tests: filters and paginates like the engine, records calls.
import type {
  ApiError,
  ApprovalRuleInput,
  ApprovalRuleView,
  BypassView,
  CompactResult,
  ConnectionTest,
  Decision,
  DecisionInput,
  EventEnvelope,
  FileDiff,
  Inbox,
  InboxItem,
  LlmClientInput,
  LlmClientView,
  Page,
  SessionDetail,
  SessionListQuery,
  SessionSummary,
  SessionUsage,
  SettingsView,
} from "../backend";
import type { Backend, SendResult } from "../backend/types";

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
    ...over,
  };
}

export class MockBackend implements Backend {
  readonly kind = "web" as const;
  sessions: SessionSummary[] = [];
  details = new Map<number, SessionDetail>();
  /** When set, listSessions rejects with it (once per call) until cleared. */
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
  stopCalls: number[] = [];
  /** What `sessionUsage` answers, by session id (absent: nothing reported yet). */
  usage = new Map<number, Partial<SessionUsage>>();
  compactCalls: Array<{ sessionId: number; focus: string | null }> = [];
  /** Tool groups "activated" per session; `resetTools` revokes them. */
  toolGroups = new Map<number, number>();
  /** What the next `compact` answers (or rejects with, for an ApiError). */
  compactResult: CompactResult | ApiError = {
    compacted: true,
    tokens_before: 90_000,
    tokens_after: 12_000,
    summarised_messages: 40,
  };
  newSessionCalls: string[] = [];
  inboxItems: InboxItem[] = [];
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
  /** Keys "in the keychain", by client name. */
  keys = new Map<string, string>();
  keyCalls: Array<{ client: string; key: string | null }> = [];
  connectionTests = new Map<string, ConnectionTest>();
  testCalls: string[] = [];
  rules: ApprovalRuleView[] = [];
  ruleCalls: Array<{ id: number | null; input: ApprovalRuleInput }> = [];
  /** When set, the next saveRule rejects with it (and clears it). */
  ruleError: ApiError | null = null;
  deletedRules: number[] = [];
  nextRuleId = 500;
  /** Logged provider requests by message id; absent ids answer like an engine with the log off. */
  requests = new Map<number, unknown>();
  requestCalls: number[] = [];

  constructor(init: { sessions?: SessionSummary[]; details?: SessionDetail[] } = {}) {
    this.sessions = init.sessions ?? [];
    for (const d of init.details ?? []) this.details.set(d.session.id, d);
  }

  listSessions(query: SessionListQuery): Promise<Page<SessionSummary>> {
    this.listCalls.push(query);
    if (this.listError) return Promise.reject(this.listError);
    const needle = query.search?.toLowerCase() ?? null;
    const matching = this.sessions.filter(
      (s) =>
        (query.source === null || s.source === query.source) &&
        (needle === null || (s.title ?? "").toLowerCase().includes(needle)),
    );
    const start = (query.page - 1) * query.per_page;
    return Promise.resolve({
      items: matching.slice(start, start + query.per_page),
      total: matching.length,
      page: query.page,
      per_page: query.per_page,
    });
  }

  getSession(id: number): Promise<SessionDetail> {
    this.detailCalls.push(id);
    const d = this.details.get(id);
    return d
      ? Promise.resolve(d)
      : Promise.reject({ code: "not_found", message: `session ${id} not found` } satisfies ApiError);
  }

  activeSession(source: string): Promise<number> {
    let id = this.activeSessions.get(source);
    if (id === undefined) {
      id = this.nextSessionId++;
      this.activeSessions.set(source, id);
    }
    if (!this.details.has(id)) this.details.set(id, emptyDetail(id, source));
    return Promise.resolve(id);
  }

  sendMessage(source: string, text: string): Promise<SendResult> {
    if (this.sendError) return Promise.reject(this.sendError);
    this.sent.push({ source, text });
    const id = this.activeSessions.get(source) ?? 0;
    const steered = this.running.has(id) || this.waitingFor.length > 0;
    return Promise.resolve({ session_id: id, steered, waiting_for: [...this.waitingFor] });
  }

  stop(sessionId: number): Promise<boolean> {
    this.stopCalls.push(sessionId);
    return Promise.resolve(this.running.delete(sessionId));
  }

  isRunning(sessionId: number): Promise<boolean> {
    return Promise.resolve(this.running.has(sessionId));
  }

  sessionUsage(sessionId: number): Promise<SessionUsage> {
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

  resetTools(sessionId: number): Promise<number> {
    const n = this.toolGroups.get(sessionId) ?? 0;
    this.toolGroups.delete(sessionId);
    return Promise.resolve(n);
  }

  compact(sessionId: number, focus: string | null): Promise<CompactResult> {
    this.compactCalls.push({ sessionId, focus });
    const r = this.compactResult;
    return "code" in r ? Promise.reject(r) : Promise.resolve(r);
  }

  newSession(source: string): Promise<number> {
    this.newSessionCalls.push(source);
    const id = this.nextSessionId++;
    this.activeSessions.set(source, id);
    this.details.set(id, emptyDetail(id, source));
    return Promise.resolve(id);
  }

  inbox(): Promise<Inbox> {
    this.inboxCalls += 1;
    if (this.inboxError) return Promise.reject(this.inboxError);
    return Promise.resolve({ items: [...this.inboxItems], questions: [], total: this.inboxItems.length });
  }

  decide(toolCallId: number, input: DecisionInput): Promise<Decision> {
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
        granted_by: input.decided_by,
        tool_call_id: toolCallId,
      });
      this.bypasses = [...this.bypasses, granted];
    }
    return Promise.resolve({
      tool_call_id: toolCallId,
      session_id: item?.session_id ?? 0,
      approved: input.approved,
      note: input.note,
      decided_by: input.decided_by,
      decided_at: "2026-11-30T10:10:00Z",
      resumed: true,
      bypass: granted,
    });
  }

  activeBypasses(): Promise<BypassView[]> {
    return Promise.resolve([...this.bypasses]);
  }

  sessionBypasses(sessionId: number): Promise<BypassView[]> {
    return Promise.resolve(this.bypasses.filter((b) => b.session_id === sessionId));
  }

  revokeBypass(id: number): Promise<BypassView> {
    this.revokeCalls.push(id);
    if (this.revokeError) return Promise.reject(this.revokeError);
    const found = this.bypasses.find((b) => b.id === id);
    if (!found) return Promise.reject({ code: "not_found", message: `bypass ${id} not found` } satisfies ApiError);
    this.bypasses = this.bypasses.filter((b) => b.id !== id);
    return Promise.resolve({ ...found, remaining_secs: 0, revoked_at: "2026-11-30T10:20:00Z", revoked_by: "app" });
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
    });
  }

  saveClients(clients: LlmClientInput[], fallback: string[]): Promise<SettingsView> {
    this.saveClientsCalls.push({ clients, fallback });
    if (this.saveClientsError) return Promise.reject(this.saveClientsError);
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

  setApiKey(client: string, key: string | null): Promise<void> {
    this.keyCalls.push({ client, key });
    if (key) this.keys.set(client, key);
    else this.keys.delete(client);
    return Promise.resolve();
  }

  testConnection(client: string): Promise<ConnectionTest> {
    this.testCalls.push(client);
    const found = this.connectionTests.get(client);
    if (found) return Promise.resolve(found);
    return Promise.reject({ code: "not_found", message: `no LLM client named \`${client}\`` } satisfies ApiError);
  }

  approvalRules(): Promise<ApprovalRuleView[]> {
    return Promise.resolve([...this.rules]);
  }

  saveRule(id: number | null, input: ApprovalRuleInput): Promise<ApprovalRuleView> {
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

  deleteRule(id: number): Promise<void> {
    this.deletedRules.push(id);
    this.rules = this.rules.filter((r) => r.id !== id);
    return Promise.resolve();
  }

  llmRequest(messageId: number): Promise<unknown> {
    this.requestCalls.push(messageId);
    if (this.requests.has(messageId)) return Promise.resolve(this.requests.get(messageId));
    return Promise.reject({
      code: "not_found",
      message: `no request was logged for message ${messageId} (set llm.request_log.enabled: true in config.yml to keep them)`,
    } satisfies ApiError);
  }

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
  };
}

export function inboxItem(toolCallId: number, over: Partial<InboxItem> = {}): InboxItem {
  return {
    tool_call_id: toolCallId,
    session_id: 7,
    source: "web",
    agent_id: "main",
    context_label: null,
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

export function bypassView(id: number, over: Partial<BypassView> = {}): BypassView {
  return {
    id,
    session_id: 7,
    source: "web",
    scope: "category",
    scope_value: "filesystem",
    label: "filesystem tools",
    duration: "fifteen_minutes",
    granted_by: "inbox",
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
