import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { Channel } from "@tauri-apps/api/core";
import { afterEach, describe, expect, it } from "vitest";
import { OPERATION_NAMES } from "./api";
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
  it("sends every operation through the one `api` command, params as they are", async () => {
    const calls: Array<[string, unknown]> = [];
    mockIPC((cmd, args) => {
      calls.push([cmd, args]);
      const { op } = args as { op: string };
      if (op === "list_sessions") return { items: [], total: 0, page: 3, per_page: 10 };
      if (op === "stop_turn") return { stopped: true };
      return null;
    });
    const backend = createTauriBackend();
    expect(backend.kind).toBe("tauri");
    const query = { source: "tic", search: null, page: 3, per_page: 10 };
    expect(await backend.list_sessions({ query })).toMatchObject({ page: 3 });
    expect(await backend.stop_turn({ session_id: 4 })).toEqual({ stopped: true });
    const input = { approved: true, note: null, bypass: { duration: "one_hour" as const, scope: "all" as const } };
    await backend.decide({ tool_call_id: 8, input });
    expect(calls).toEqual([
      ["api", { op: "list_sessions", params: { query } }],
      ["api", { op: "stop_turn", params: { session_id: 4 } }],
      ["api", { op: "decide", params: { tool_call_id: 8, input } }],
    ]);
  });

  it("has a method for every operation of the table, each sent under its own name", async () => {
    const ops: string[] = [];
    mockIPC((_cmd, args) => {
      ops.push((args as { op: string }).op);
      return null;
    });
    const backend = createTauriBackend();
    for (const op of OPERATION_NAMES) {
      await (backend[op] as (params: unknown) => Promise<unknown>)({});
    }
    expect(ops).toEqual([...OPERATION_NAMES]);
  });

  it("rejects with the command's ApiError, and wraps anything else", async () => {
    let reply: unknown = { code: "not_found", message: "no session 9" };
    mockIPC(() => {
      throw reply;
    });
    const backend = createTauriBackend();
    await expect(backend.session_detail({ session_id: 9 })).rejects.toEqual({ code: "not_found", message: "no session 9" });
    reply = "command api not allowed";
    await expect(backend.session_detail({ session_id: 9 })).rejects.toEqual({
      code: "internal",
      message: "command api not allowed",
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
    const envelope: EventEnvelope = { seq: null, session_id: 1, source: "web", frame: null, event: { type: "sessions_changed" } };
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
