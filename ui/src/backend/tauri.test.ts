import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { Channel } from "@tauri-apps/api/core";
import { afterEach, describe, expect, it } from "vitest";
import type { EventEnvelope } from "./bindings";
import { detectBackend } from "./index";
import { createTauriBackend } from "./tauri";

type Internals = { runCallback: (id: number, data: unknown) => void };

// clearMocks empties the internals object but leaves it on window, which would read as "in Tauri".
function leaveTauri() {
  clearMocks();
  delete (window as { __TAURI_INTERNALS__?: unknown }).__TAURI_INTERNALS__;
}

afterEach(leaveTauri);

describe("tauri backend", () => {
  it("calls list_sessions and session_detail with the documented arguments", async () => {
    const calls: Array<[string, unknown]> = [];
    mockIPC((cmd, args) => {
      calls.push([cmd, args]);
      if (cmd === "list_sessions") return { items: [], total: 0, page: 3, per_page: 10 };
      if (cmd === "session_detail") return { session: { id: 9 }, messages: [] };
      return null;
    });
    const backend = createTauriBackend();
    expect(backend.kind).toBe("tauri");
    const query = { source: "tic", search: null, page: 3, per_page: 10 };
    expect(await backend.listSessions(query)).toMatchObject({ page: 3 });
    await backend.getSession(9);
    expect(calls).toEqual([
      ["list_sessions", { query }],
      ["session_detail", { id: 9 }],
    ]);
  });

  it("calls the chat and inbox commands with camelCase arguments", async () => {
    const calls: Array<[string, unknown]> = [];
    const replies: Record<string, unknown> = {
      active_session: 4,
      send_message: { session_id: 4, steered: false, waiting_for: [] },
      stop_turn: true,
      turn_running: true,
      new_session: 5,
      inbox: { items: [], total: 0 },
      decide: { tool_call_id: 8, approved: true },
    };
    mockIPC((cmd, args) => {
      calls.push([cmd, args]);
      return replies[cmd] ?? null;
    });
    const backend = createTauriBackend();
    expect(await backend.activeSession("web")).toBe(4);
    expect(await backend.sendMessage("web", "hi")).toEqual({ session_id: 4, steered: false, waiting_for: [] });
    expect(await backend.stop(4)).toBe(true);
    expect(await backend.isRunning(4)).toBe(true);
    expect(await backend.newSession("web")).toBe(5);
    expect(await backend.inbox()).toEqual({ items: [], total: 0 });
    const input = { approved: true, note: null, decided_by: "app", bypass: { duration: "fifteen_minutes" as const, scope: "all" as const } };
    await backend.decide(8, input);
    await backend.activeBypasses();
    await backend.sessionBypasses(4);
    await backend.revokeBypass(3);
    expect(calls).toEqual([
      ["active_session", { source: "web" }],
      ["send_message", { source: "web", text: "hi" }],
      ["stop_turn", { sessionId: 4 }],
      ["turn_running", { sessionId: 4 }],
      ["new_session", { source: "web" }],
      ["inbox", {}],
      ["decide", { toolCallId: 8, input }],
      ["active_bypasses", {}],
      ["session_bypasses", { sessionId: 4 }],
      ["revoke_bypass", { id: 3 }],
    ]);
  });

  it("calls the settings, rule and request-log commands with the documented arguments", async () => {
    const calls: Array<[string, unknown]> = [];
    const view = { clients: [], fallback: [], data_dir: "/d", config_path: "/d/config.yml" };
    const replies: Record<string, unknown> = {
      settings: view,
      save_llm_clients: view,
      test_connection: { ok: false, models: [], model_listed: false, error: "refused", latency_ms: 1 },
      approval_rules: [],
      save_approval_rule: { id: 5 },
      llm_request: { messages: [] },
    };
    mockIPC((cmd, args) => {
      calls.push([cmd, args]);
      return replies[cmd] ?? null;
    });
    const backend = createTauriBackend();
    const client = { previous_name: null, name: "local", base_url: "http://x/v1", model: "m", provider: null, api_key_env: null, context_window: null, stream: null };
    const input = { group_id: null, tool_pattern: "*", path_pattern: null, agent_id: null, source: null, action: "deny" as const, priority: 1, note: null };
    expect(await backend.settings()).toEqual(view);
    await backend.saveClients([client], ["local"]);
    await backend.setApiKey("local", "k");
    expect(await backend.testConnection("local")).toMatchObject({ error: "refused" });
    expect(await backend.approvalRules()).toEqual([]);
    expect(await backend.saveRule(null, input)).toEqual({ id: 5 });
    await backend.deleteRule(5);
    expect(await backend.llmRequest(12)).toEqual({ messages: [] });
    expect(calls).toEqual([
      ["settings", {}],
      ["save_llm_clients", { clients: [client], fallback: ["local"] }],
      ["set_api_key", { client: "local", key: "k" }],
      ["test_connection", { client: "local" }],
      ["approval_rules", {}],
      ["save_approval_rule", { id: null, input }],
      ["delete_approval_rule", { id: 5 }],
      ["llm_request", { messageId: 12 }],
    ]);
  });

  it("rejects with the command's ApiError, and wraps anything else", async () => {
    let reply: unknown = { code: "not_found", message: "no session 9" };
    mockIPC(() => {
      throw reply;
    });
    const backend = createTauriBackend();
    await expect(backend.getSession(9)).rejects.toEqual({ code: "not_found", message: "no session 9" });
    reply = "command session_detail not found";
    await expect(backend.getSession(9)).rejects.toEqual({
      code: "internal",
      message: "command session_detail not found",
    });
  });

  it("subscribes through a Channel and stops forwarding after unsubscribe", async () => {
    let channel: Channel<EventEnvelope> | null = null;
    mockIPC((cmd, args) => {
      if (cmd === "subscribe_events") channel = (args as { channel: Channel<EventEnvelope> }).channel;
      return null;
    });
    const seen: EventEnvelope[] = [];
    const stop = createTauriBackend().subscribe((e) => seen.push(e));
    await Promise.resolve();
    expect(channel).toBeInstanceOf(Channel);
    const internals = (window as unknown as { __TAURI_INTERNALS__: Internals }).__TAURI_INTERNALS__;
    const envelope: EventEnvelope = { session_id: 1, source: "web", event: { type: "sessions_changed" } };
    internals.runCallback(channel!.id, { index: 0, message: envelope });
    expect(seen).toEqual([envelope]);
    stop();
    internals.runCallback(channel!.id, { index: 1, message: envelope });
    expect(seen).toHaveLength(1);
  });

  it("is picked only when the Tauri internals are present", () => {
    leaveTauri();
    expect(detectBackend().kind).toBe("web");
    mockIPC(() => null);
    expect(detectBackend().kind).toBe("tauri");
  });
});
