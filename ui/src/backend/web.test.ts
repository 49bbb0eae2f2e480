import { describe, expect, it, vi } from "vitest";
import { OPERATION_NAMES } from "./api";
import type { EventEnvelope } from "./bindings";
import { createWebBackend, takeToken, TOKEN_STORAGE_KEY, type WebBackendOptions } from "./web";

class MemoryStorage {
  data = new Map<string, string>();
  getItem(k: string) {
    return this.data.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.data.set(k, v);
  }
}

class FakeSocket {
  onopen: ((ev: Event) => unknown) | null = null;
  onmessage: ((ev: MessageEvent) => unknown) | null = null;
  onclose: ((ev: CloseEvent) => unknown) | null = null;
  closed = false;
  constructor(readonly url: string) {}
  close() {
    this.closed = true;
  }
  open() {
    this.onopen?.(new Event("open"));
  }
  send(data: string) {
    this.onmessage?.(new MessageEvent("message", { data }));
  }
  drop() {
    this.onclose?.(new CloseEvent("close"));
  }
}

function jsonResponse(status: number, body: unknown): Response {
  return new Response(body === undefined ? "" : JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

function setup(href: string, over: Partial<WebBackendOptions> = {}) {
  const storage = new MemoryStorage();
  const sockets: FakeSocket[] = [];
  const fetchMock = vi.fn<typeof fetch>(async () => jsonResponse(200, { items: [], total: 0, page: 1, per_page: 20 }));
  const replaceUrl = vi.fn<(url: string) => void>();
  const backend = createWebBackend({
    location: { href },
    storage,
    fetch: fetchMock,
    openSocket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    replaceUrl,
    reconnectDelayMs: () => 0,
    ...over,
  });
  return { backend, storage, sockets, fetchMock, replaceUrl };
}

const sessionsChanged: EventEnvelope = { seq: null, session_id: 3, source: "web", frame: null, event: { type: "sessions_changed" } };

describe("web backend", () => {
  it("keeps the ?token= of the first load and strips it from the address bar", () => {
    const storage = new MemoryStorage();
    const replace = vi.fn<(url: string) => void>();
    expect(takeToken({ href: "http://127.0.0.1:8765/?token=s3cret#tic" }, storage, replace)).toBe("s3cret");
    expect(storage.getItem(TOKEN_STORAGE_KEY)).toBe("s3cret");
    expect(replace).toHaveBeenCalledWith("http://127.0.0.1:8765/#tic");
    // A reload without the parameter still has it.
    expect(takeToken({ href: "http://127.0.0.1:8765/#tic" }, storage, replace)).toBe("s3cret");
  });

  it("posts each operation to /api/<op> with its params as the JSON body and a bearer token", async () => {
    const { backend, fetchMock } = setup("http://127.0.0.1:8765/?token=abc#sessions");
    const query = { source: "tic", search: "disk full", page: 2, per_page: 20 };
    await backend.list_sessions({ query });
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe("http://127.0.0.1:8765/api/list_sessions");
    expect(init?.method).toBe("POST");
    expect(JSON.parse(String(init?.body))).toEqual({ query });
    const headers = init?.headers as Record<string, string>;
    expect(headers.Authorization).toBe("Bearer abc");
    expect(headers["Content-Type"]).toBe("application/json");
  });

  it("sends no Authorization header without a token, and answers with the server's result", async () => {
    const fetchMock = vi.fn<typeof fetch>(async () => jsonResponse(200, { stopped: false }));
    const { backend } = setup("http://localhost:9000/", { fetch: fetchMock });
    expect(await backend.stop_turn({ session_id: 42 })).toEqual({ stopped: false });
    expect(fetchMock.mock.calls[0]![0]).toBe("http://localhost:9000/api/stop_turn");
    expect((fetchMock.mock.calls[0]![1]?.headers as Record<string, string>).Authorization).toBeUndefined();
  });

  it("has a method for every operation of the table, each posted to its own path", async () => {
    const { backend, fetchMock } = setup("http://127.0.0.1:8765/");
    for (const op of OPERATION_NAMES) {
      await (backend[op] as (params: unknown) => Promise<unknown>)({});
    }
    const paths = fetchMock.mock.calls.map(([url]) => String(url).replace("http://127.0.0.1:8765/api/", ""));
    expect(paths).toEqual([...OPERATION_NAMES]);
  });

  it("passes the server's ApiError through and maps bare statuses", async () => {
    const fetchMock = vi
      .fn<typeof fetch>()
      .mockResolvedValueOnce(jsonResponse(404, { code: "not_found", message: "session 7 not found" }))
      .mockResolvedValueOnce(new Response("nope", { status: 401 }))
      .mockRejectedValueOnce(new TypeError("Failed to fetch"));
    const { backend } = setup("http://127.0.0.1:1/", { fetch: fetchMock });
    const params = { session_id: 7 };
    await expect(backend.session_detail(params)).rejects.toEqual({ code: "not_found", message: "session 7 not found" });
    await expect(backend.session_detail(params)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(backend.session_detail(params)).rejects.toEqual({
      code: "internal",
      message: "Cannot reach the Skald server: Failed to fetch",
    });
  });

  it("streams events from /api/ws with the token, dropping malformed frames", () => {
    const { backend, sockets } = setup("https://host.test/?token=t0k#x");
    const seen: EventEnvelope[] = [];
    const stop = backend.subscribe((e) => seen.push(e));
    expect(sockets[0]!.url).toBe("wss://host.test/api/ws?token=t0k");
    sockets[0]!.open();
    sockets[0]!.send("not json");
    sockets[0]!.send(JSON.stringify({ hello: 1 }));
    sockets[0]!.send(JSON.stringify(sessionsChanged));
    expect(seen).toEqual([sessionsChanged]);
    stop();
    expect(sockets[0]!.closed).toBe(true);
  });

  it("reconnects from the last sequence it saw, so the server replays what it missed instead of a reload", async () => {
    const { backend, sockets } = setup("http://127.0.0.1:8765/?token=t");
    const seen: EventEnvelope[] = [];
    const stop = backend.subscribe((e) => seen.push(e));
    expect(sockets[0]!.url).toBe("ws://127.0.0.1:8765/api/ws?token=t");
    sockets[0]!.open();
    // Where the stream starts is kept by the transport, not shown to the pages.
    sockets[0]!.send(JSON.stringify({ seq: 40, session_id: null, source: null, frame: null, event: { type: "subscribed" } }));
    const done = { ...sessionsChanged, seq: 41 };
    const delta: EventEnvelope = { seq: null, session_id: 3, source: "web", frame: null, event: { type: "token_delta", kind: "content", delta: "hi" } };
    sockets[0]!.send(JSON.stringify(done));
    sockets[0]!.send(JSON.stringify(delta));
    expect(seen).toEqual([done, delta]);

    sockets[0]!.drop();
    await vi.waitFor(() => expect(sockets).toHaveLength(2));
    expect(sockets[1]!.url).toBe("ws://127.0.0.1:8765/api/ws?token=t&since=41");
    sockets[1]!.open();
    sockets[1]!.send(JSON.stringify({ seq: 41, session_id: null, source: null, frame: null, event: { type: "subscribed" } }));
    const missed = { ...sessionsChanged, seq: 42 };
    sockets[1]!.send(JSON.stringify(missed));
    expect(seen).toEqual([done, delta, missed]);

    sockets[1]!.drop();
    await vi.waitFor(() => expect(sockets).toHaveLength(3));
    expect(sockets[2]!.url).toBe("ws://127.0.0.1:8765/api/ws?token=t&since=42");
    // The server cannot replay (pruned, or another data dir): its resync reaches the pages.
    sockets[2]!.open();
    const resync: EventEnvelope = { seq: null, session_id: null, source: null, frame: null, event: { type: "resync" } };
    sockets[2]!.send(JSON.stringify(resync));
    expect(seen).toEqual([done, delta, missed, resync]);
    stop();
  });

  it("reconnects after a drop and asks for a resync when the server never said where its stream starts", async () => {
    const { backend, sockets } = setup("http://127.0.0.1:8765/");
    const seen: EventEnvelope[] = [];
    const stop = backend.subscribe((e) => seen.push(e));
    sockets[0]!.open();
    expect(seen).toEqual([]);
    sockets[0]!.drop();
    await vi.waitFor(() => expect(sockets).toHaveLength(2));
    sockets[1]!.open();
    expect(seen).toEqual([{ seq: null, session_id: null, source: null, frame: null, event: { type: "resync" } }]);
    stop();
    sockets[1]!.drop();
    await new Promise((r) => setTimeout(r, 5));
    expect(sockets).toHaveLength(2);
  });

  it("rejects a conflicting decision with the server's error", async () => {
    const fetchMock = vi.fn<typeof fetch>(async () => jsonResponse(409, { code: "conflict", message: "already rejected" }));
    const { backend } = setup("http://127.0.0.1:1/", { fetch: fetchMock });
    await expect(
      backend.decide({ tool_call_id: 1, input: { approved: true, note: null, bypass: null } }),
    ).rejects.toEqual({ code: "conflict", message: "already rejected" });
  });
});
