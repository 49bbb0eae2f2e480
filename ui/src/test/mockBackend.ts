// An in-memory Backend for component tests: filters and paginates like the engine, records calls.
import type {
  ApiError,
  Decision,
  DecisionInput,
  EventEnvelope,
  FileDiff,
  Inbox,
  InboxItem,
  Page,
  SessionDetail,
  SessionListQuery,
  SessionSummary,
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
  sendError: ApiError | null = null;
  stopCalls: number[] = [];
  newSessionCalls: string[] = [];
  inboxItems: InboxItem[] = [];
  inboxError: ApiError | null = null;
  inboxCalls = 0;
  decisions: Array<{ toolCallId: number; input: DecisionInput }> = [];
  decideError: ApiError | null = null;

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
    return Promise.resolve({ session_id: id, steered: this.running.has(id) });
  }

  stop(sessionId: number): Promise<boolean> {
    this.stopCalls.push(sessionId);
    return Promise.resolve(this.running.delete(sessionId));
  }

  isRunning(sessionId: number): Promise<boolean> {
    return Promise.resolve(this.running.has(sessionId));
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
    return Promise.resolve({ items: [...this.inboxItems], total: this.inboxItems.length });
  }

  decide(toolCallId: number, input: DecisionInput): Promise<Decision> {
    this.decisions.push({ toolCallId, input });
    if (this.decideError) return Promise.reject(this.decideError);
    const item = this.inboxItems.find((i) => i.tool_call_id === toolCallId);
    this.inboxItems = this.inboxItems.filter((i) => i.tool_call_id !== toolCallId);
    return Promise.resolve({
      tool_call_id: toolCallId,
      session_id: item?.session_id ?? 0,
      approved: input.approved,
      note: input.note,
      decided_by: input.decided_by,
      decided_at: "2026-11-30T10:10:00Z",
      resumed: true,
    });
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
