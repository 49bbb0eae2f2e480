// The browser transport for `skald serve`: every operation is `POST /api/<op>` with its params as
// the JSON body, events arrive over /api/ws; bearer token auth.
import { makeApi, type Transport } from "./api";
import type { ErrorCode } from "./bindings";
import { isApiError, isEventEnvelope, toApiError, type Backend } from "./types";

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

  const call: Transport = async (op, params) => {
    const headers: Record<string, string> = { Accept: "application/json", "Content-Type": "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    const path = `/api/${encodeURIComponent(op)}`;
    let response: Response;
    try {
      response = await doFetch(new URL(path, origin).toString(), { method: "POST", headers, body: JSON.stringify(params) });
    } catch (error) {
      throw toApiError(error instanceof Error ? `Cannot reach the Skald server: ${error.message}` : error);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok) {
      if (isApiError(body)) throw { code: body.code, message: body.message };
      throw { code: codeForStatus(response.status), message: `HTTP ${response.status}` };
    }
    return body;
  };

  function socketUrl(since: number | null): string {
    const url = new URL("/api/ws", origin);
    url.protocol = origin.protocol === "https:" ? "wss:" : "ws:";
    if (token) url.searchParams.set("token", token);
    if (since !== null) url.searchParams.set("since", String(since));
    return url.toString();
  }

  return {
    kind: "web",
    ...makeApi(call),
    subscribe(onEvent) {
      let stopped = false;
      let socket: WebSocketLike | null = null;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let attempt = 0;
      let everOpened = false;
      // The newest event sequence seen: a reconnect asks the server for what came after it, so
      // events committed while we were away (by any process) are replayed instead of reloaded.
      let cursor: number | null = null;

      const connect = () => {
        if (stopped) return;
        const ws = openSocket(socketUrl(cursor));
        socket = ws;
        ws.onopen = () => {
          // Without a sequence to resume from (a server that never said where its stream
          // started), events sent while we were away are lost: the database is the truth, so the
          // app reloads what it shows. With one, the server replays them, or says `resync`.
          if (everOpened && cursor === null) {
            onEvent({ seq: null, session_id: null, source: null, frame: null, event: { type: "resync" } });
          }
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
          if (!isEventEnvelope(parsed)) return;
          if (typeof parsed.seq === "number" && (cursor === null || parsed.seq > cursor)) cursor = parsed.seq;
          // Where the stream starts is the transport's business, not the pages'.
          if (parsed.event.type === "subscribed") return;
          onEvent(parsed);
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
