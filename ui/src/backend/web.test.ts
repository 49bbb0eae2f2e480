import { describe, expect, it, vi } from "vitest";
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

const sessionsChanged: EventEnvelope = { session_id: 3, source: "web", event: { type: "sessions_changed" } };

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

  it("lists sessions with the query string and a bearer token", async () => {
    const { backend, fetchMock } = setup("http://127.0.0.1:8765/?token=abc#sessions");
    await backend.listSessions({ source: "tic", search: "disk full", page: 2, per_page: 20 });
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe("http://127.0.0.1:8765/api/sessions?source=tic&search=disk+full&page=2&per_page=20");
    expect((init?.headers as Record<string, string>).Authorization).toBe("Bearer abc");
  });

  it("omits empty filters and fetches one session by id", async () => {
    const { backend, fetchMock } = setup("http://localhost:9000/");
    await backend.listSessions({ source: null, search: null, page: 1, per_page: 25 });
    expect(fetchMock.mock.calls[0]![0]).toBe("http://localhost:9000/api/sessions?page=1&per_page=25");
    expect((fetchMock.mock.calls[0]![1]?.headers as Record<string, string>).Authorization).toBeUndefined();
    await backend.getSession(42);
    expect(fetchMock.mock.calls[1]![0]).toBe("http://localhost:9000/api/sessions/42");
  });

  it("passes the server's ApiError through and maps bare statuses", async () => {
    const fetchMock = vi
      .fn<typeof fetch>()
      .mockResolvedValueOnce(jsonResponse(404, { code: "not_found", message: "session 7 not found" }))
      .mockResolvedValueOnce(new Response("nope", { status: 401 }))
      .mockRejectedValueOnce(new TypeError("Failed to fetch"));
    const { backend } = setup("http://127.0.0.1:1/", { fetch: fetchMock });
    await expect(backend.getSession(7)).rejects.toEqual({ code: "not_found", message: "session 7 not found" });
    await expect(backend.getSession(7)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(backend.getSession(7)).rejects.toEqual({
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

  it("reconnects after a drop and asks for a resync, since events may have been missed", async () => {
    const { backend, sockets } = setup("http://127.0.0.1:8765/");
    const seen: EventEnvelope[] = [];
    const stop = backend.subscribe((e) => seen.push(e));
    sockets[0]!.open();
    expect(seen).toEqual([]);
    sockets[0]!.drop();
    await vi.waitFor(() => expect(sockets).toHaveLength(2));
    sockets[1]!.open();
    expect(seen).toEqual([{ session_id: null, source: null, event: { type: "resync" } }]);
    stop();
    sockets[1]!.drop();
    await new Promise((r) => setTimeout(r, 5));
    expect(sockets).toHaveLength(2);
  });
  it("calls the chat and inbox endpoints with the documented methods, paths and bodies", async () => {
    const replies: unknown[] = [
      { session_id: 4 },
      { session_id: 4, steered: true, waiting_for: [9] },
      { stopped: true },
      { running: false },
      { session_id: 5 },
      { items: [], total: 0 },
      { tool_call_id: 8, session_id: 4, approved: false, note: "no", decided_by: "web", decided_at: "x", resumed: true, bypass: null },
      [],
      [],
      { id: 3 },
    ];
    const fetchMock = vi.fn<typeof fetch>(async () => jsonResponse(200, replies.shift()));
    const { backend } = setup("http://127.0.0.1:8765/?token=abc", { fetch: fetchMock });
    expect(await backend.activeSession("tele gram")).toBe(4);
    expect(await backend.sendMessage("web", "hi")).toEqual({ session_id: 4, steered: true, waiting_for: [9] });
    expect(await backend.stop(4)).toBe(true);
    expect(await backend.isRunning(4)).toBe(false);
    expect(await backend.newSession("web")).toBe(5);
    expect(await backend.inbox()).toEqual({ items: [], total: 0 });
    const input = { approved: false, note: "no", decided_by: "web", bypass: null };
    expect(await backend.decide(8, input)).toMatchObject({ tool_call_id: 8 });
    expect(await backend.activeBypasses()).toEqual([]);
    expect(await backend.sessionBypasses(4)).toEqual([]);
    expect(await backend.revokeBypass(3)).toEqual({ id: 3 });
    const calls = fetchMock.mock.calls.map(([url, init]) => [
      init?.method,
      String(url).replace("http://127.0.0.1:8765", ""),
      init?.body === undefined ? undefined : JSON.parse(String(init.body)),
    ]);
    expect(calls).toEqual([
      ["GET", "/api/sources/tele%20gram/session", undefined],
      ["POST", "/api/sources/web/messages", { text: "hi" }],
      ["POST", "/api/sessions/4/stop", undefined],
      ["GET", "/api/sessions/4/running", undefined],
      ["POST", "/api/sessions?source=web", undefined],
      ["GET", "/api/inbox", undefined],
      ["POST", "/api/tools/8/decision", input],
      ["GET", "/api/bypasses", undefined],
      ["GET", "/api/sessions/4/bypasses", undefined],
      ["POST", "/api/bypasses/3/revoke", undefined],
    ]);
    for (const [, init] of fetchMock.mock.calls) {
      expect((init?.headers as Record<string, string>).Authorization).toBe("Bearer abc");
    }
    expect((fetchMock.mock.calls[1]![1]?.headers as Record<string, string>)["Content-Type"]).toBe("application/json");
  });

  it("calls the settings, rule and request-log endpoints with the documented methods and bodies", async () => {
    const view = { clients: [], fallback: [], data_dir: "/d", config_path: "/d/config.yml" };
    const rule = { id: 3, group_id: "g", tool_pattern: "write_file", path_pattern: null, agent_id: null, source: null, action: "allow", priority: 10, note: null, seed_key: null };
    const replies: unknown[] = [view, view, { ok: true }, { ok: true }, { ok: true, models: ["m"], model_listed: true, error: null, latency_ms: 4 }, [rule], rule, rule, { ok: true }, { messages: [] }];
    const fetchMock = vi.fn<typeof fetch>(async () => jsonResponse(200, replies.shift()));
    const { backend } = setup("http://127.0.0.1:8765/?token=abc", { fetch: fetchMock });
    const client = { previous_name: null, name: "my box", base_url: "http://x/v1", model: "m", provider: null, api_key_env: null, context_window: null, stream: null };
    const input = { group_id: null, tool_pattern: "write_file", path_pattern: null, agent_id: null, source: null, action: "allow" as const, priority: 10, note: null };
    expect(await backend.settings()).toEqual(view);
    expect(await backend.saveClients([client], ["my box"])).toEqual(view);
    await backend.setApiKey("my box", "sk-1");
    await backend.setApiKey("my box", null);
    expect(await backend.testConnection("my box")).toMatchObject({ ok: true, latency_ms: 4 });
    expect(await backend.approvalRules()).toEqual([rule]);
    await backend.saveRule(null, input);
    await backend.saveRule(3, input);
    await backend.deleteRule(3);
    expect(await backend.llmRequest(12)).toEqual({ messages: [] });
    const calls = fetchMock.mock.calls.map(([url, init]) => [
      init?.method,
      String(url).replace("http://127.0.0.1:8765", ""),
      init?.body === undefined ? undefined : JSON.parse(String(init.body)),
    ]);
    expect(calls).toEqual([
      ["GET", "/api/settings", undefined],
      ["PUT", "/api/settings/clients", { clients: [client], fallback: ["my box"] }],
      ["PUT", "/api/settings/clients/my%20box/key", { key: "sk-1" }],
      ["PUT", "/api/settings/clients/my%20box/key", { key: null }],
      ["POST", "/api/settings/clients/my%20box/test", undefined],
      ["GET", "/api/approval/rules", undefined],
      ["POST", "/api/approval/rules", input],
      ["PUT", "/api/approval/rules/3", input],
      ["DELETE", "/api/approval/rules/3", undefined],
      ["GET", "/api/messages/12/request", undefined],
    ]);
  });

  it("rejects a conflicting decision with the server's error", async () => {
    const fetchMock = vi.fn<typeof fetch>(async () => jsonResponse(409, { code: "conflict", message: "already rejected" }));
    const { backend } = setup("http://127.0.0.1:1/", { fetch: fetchMock });
    await expect(
      backend.decide(1, { approved: true, note: null, decided_by: "web", bypass: null }),
    ).rejects.toEqual({ code: "conflict", message: "already rejected" });
  });
});
