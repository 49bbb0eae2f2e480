// The browser transport for `skald serve`: REST under /api, events over /api/ws, bearer token auth.
import type {
  ApprovalRuleInput,
  ApprovalRuleView,
  BypassView,
  CompactResult,
  ConnectionTest,
  Decision,
  DecisionInput,
  ErrorCode,
  Inbox,
  LlmClientInput,
  Page,
  SessionDetail,
  SessionListQuery,
  SessionSummary,
  SessionUsage,
  SettingsView,
} from "./bindings";
import { isApiError, isEventEnvelope, toApiError, type Backend, type SendResult } from "./types";

export const TOKEN_STORAGE_KEY = "skald.token";

type WebSocketLike = Pick<WebSocket, "close"> & {
  onopen: ((ev: Event) => unknown) | null;
  onmessage: ((ev: MessageEvent) => unknown) | null;
  onclose: ((ev: CloseEvent) => unknown) | null;
};

export interface WebBackendOptions {
  /** Page location; the API is same-origin with it. */
  location?: Pick<Location, "href">;
  storage?: Pick<Storage, "getItem" | "setItem">;
  fetch?: typeof fetch;
  openSocket?: (url: string) => WebSocketLike;
  /** Called once the token has been lifted out of the address bar. */
  replaceUrl?: (url: string) => void;
  reconnectDelayMs?: (attempt: number) => number;
}

/**
 * Takes `?token=` from the first load into session storage and strips it from the address bar,
 * so the secret does not linger in history or get copied along with a link.
 */
export function takeToken(
  location: Pick<Location, "href">,
  storage: Pick<Storage, "getItem" | "setItem">,
  replaceUrl?: (url: string) => void,
): string | null {
  const url = new URL(location.href);
  const fromUrl = url.searchParams.get("token");
  if (fromUrl) {
    storage.setItem(TOKEN_STORAGE_KEY, fromUrl);
    url.searchParams.delete("token");
    replaceUrl?.(url.toString());
    return fromUrl;
  }
  return storage.getItem(TOKEN_STORAGE_KEY);
}

function codeForStatus(status: number): ErrorCode {
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 404) return "not_found";
  if (status === 400 || status === 422) return "invalid_input";
  if (status === 409) return "conflict";
  return "internal";
}

export function sessionsPath(query: SessionListQuery): string {
  const params = new URLSearchParams();
  if (query.source) params.set("source", query.source);
  if (query.search) params.set("search", query.search);
  params.set("page", String(query.page));
  params.set("per_page", String(query.per_page));
  return `/api/sessions?${params.toString()}`;
}

export function createWebBackend(options: WebBackendOptions = {}): Backend {
  const location = options.location ?? window.location;
  const storage = options.storage ?? window.sessionStorage;
  const doFetch = options.fetch ?? ((input, init) => window.fetch(input, init));
  const openSocket = options.openSocket ?? ((url: string) => new WebSocket(url));
  const replaceUrl =
    options.replaceUrl ?? ((url: string) => window.history.replaceState(window.history.state, "", url));
  const reconnectDelay =
    options.reconnectDelayMs ?? ((attempt: number) => Math.min(500 * 2 ** attempt, 10_000));

  const token = takeToken(location, storage, replaceUrl);
  const origin = new URL(location.href);

  async function request<T>(method: "GET" | "POST" | "PUT" | "DELETE", path: string, payload?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    const init: RequestInit = { method, headers };
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(payload);
    }
    let response: Response;
    try {
      response = await doFetch(new URL(path, origin).toString(), init);
    } catch (error) {
      throw toApiError(error instanceof Error ? `Cannot reach the Skald server: ${error.message}` : error);
    }
    let body: unknown = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok) {
      if (isApiError(body)) throw { code: body.code, message: body.message };
      throw { code: codeForStatus(response.status), message: `HTTP ${response.status}` };
    }
    return body as T;
  }

  const get = <T>(path: string) => request<T>("GET", path);
  const post = <T>(path: string, body?: unknown) => request<T>("POST", path, body);
  const put = <T>(path: string, body?: unknown) => request<T>("PUT", path, body);
  const del = <T>(path: string) => request<T>("DELETE", path);
  const seg = (value: string | number) => encodeURIComponent(String(value));

  function socketUrl(): string {
    const url = new URL("/api/ws", origin);
    url.protocol = origin.protocol === "https:" ? "wss:" : "ws:";
    if (token) url.searchParams.set("token", token);
    return url.toString();
  }

  return {
    kind: "web",
    listSessions: (query) => get<Page<SessionSummary>>(sessionsPath(query)),
    getSession: (id) => get<SessionDetail>(`/api/sessions/${seg(id)}`),
    activeSession: async (source) =>
      (await get<{ session_id: number }>(`/api/sources/${seg(source)}/session`)).session_id,
    sendMessage: (source, text) => post<SendResult>(`/api/sources/${seg(source)}/messages`, { text }),
    stop: async (sessionId) => (await post<{ stopped: boolean }>(`/api/sessions/${seg(sessionId)}/stop`)).stopped,
    isRunning: async (sessionId) =>
      (await get<{ running: boolean }>(`/api/sessions/${seg(sessionId)}/running`)).running,
    sessionUsage: (sessionId) => get<SessionUsage>(`/api/sessions/${seg(sessionId)}/usage`),
    resetTools: async (sessionId) =>
      (await post<{ revoked: number }>(`/api/sessions/${seg(sessionId)}/resettools`)).revoked,
    compact: (sessionId, focus) => post<CompactResult>(`/api/sessions/${seg(sessionId)}/compact`, { focus }),
    newSession: async (source) =>
      (await post<{ session_id: number }>(`/api/sessions?source=${seg(source)}`)).session_id,
    inbox: () => get<Inbox>("/api/inbox"),
    decide: (toolCallId: number, input: DecisionInput) =>
      post<Decision>(`/api/tools/${seg(toolCallId)}/decision`, input),
    activeBypasses: () => get<BypassView[]>("/api/bypasses"),
    sessionBypasses: (sessionId: number) => get<BypassView[]>(`/api/sessions/${seg(sessionId)}/bypasses`),
    revokeBypass: (id: number) => post<BypassView>(`/api/bypasses/${seg(id)}/revoke`),
    settings: () => get<SettingsView>("/api/settings"),
    saveClients: (clients: LlmClientInput[], fallback: string[]) =>
      put<SettingsView>("/api/settings/clients", { clients, fallback }),
    setApiKey: async (client: string, key: string | null) => {
      await put<unknown>(`/api/settings/clients/${seg(client)}/key`, { key });
    },
    testConnection: (client: string) => post<ConnectionTest>(`/api/settings/clients/${seg(client)}/test`),
    approvalRules: () => get<ApprovalRuleView[]>("/api/approval/rules"),
    saveRule: (id: number | null, input: ApprovalRuleInput) =>
      id === null
        ? post<ApprovalRuleView>("/api/approval/rules", input)
        : put<ApprovalRuleView>(`/api/approval/rules/${seg(id)}`, input),
    deleteRule: async (id: number) => {
      await del<unknown>(`/api/approval/rules/${seg(id)}`);
    },
    llmRequest: (messageId: number) => get<unknown>(`/api/messages/${seg(messageId)}/request`),
    subscribe(onEvent) {
      let stopped = false;
      let socket: WebSocketLike | null = null;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let attempt = 0;
      let everOpened = false;

      const connect = () => {
        if (stopped) return;
        const ws = openSocket(socketUrl());
        socket = ws;
        ws.onopen = () => {
          // Events sent while we were away are lost; the database is the truth, so a
          // reconnect tells the app to reload what it shows.
          if (everOpened) onEvent({ session_id: null, source: null, event: { type: "resync" } });
          everOpened = true;
          attempt = 0;
        };
        ws.onmessage = (message) => {
          if (typeof message.data !== "string") return;
          let parsed: unknown;
          try {
            parsed = JSON.parse(message.data);
          } catch {
            return;
          }
          if (isEventEnvelope(parsed)) onEvent(parsed);
        };
        ws.onclose = () => {
          if (stopped) return;
          timer = setTimeout(connect, reconnectDelay(attempt));
          attempt += 1;
        };
      };

      connect();
      return () => {
        stopped = true;
        if (timer !== undefined) clearTimeout(timer);
        socket?.close();
      };
    },
  };
}
