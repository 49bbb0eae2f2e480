// An in-memory Backend for component tests: filters and paginates like the engine, records calls.
import type {
  ApiError,
  EventEnvelope,
  Page,
  SessionDetail,
  SessionListQuery,
  SessionSummary,
} from "../backend";
import type { Backend } from "../backend/types";

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
