import { describe, expect, it } from "vitest";
import type { DebugMessage, Event, FrameOrigin, SessionWindow, TaskState } from "./bindings";
import { applyEvent, chatFromWindow, emptyChat, prependChat, appendChat, type ChatItem, type ChatState, type TaskItem } from "./chat";
import { laneViews, visibleItems } from "./lanes";

const ROOT: FrameOrigin = { stack_id: 1, depth: 0, label: null, parent_tool_call_id: null };
const child = (stack: number, label: string, call: number, depth = 1): FrameOrigin => ({
  stack_id: stack,
  depth,
  label,
  parent_tool_call_id: call,
});
const RESEARCHER = child(42, "researcher#42", 10);
const CODER = child(43, "coder#43", 11);

function run(events: Array<[Event, FrameOrigin]>, from: ChatState = emptyChat(5, true)): ChatState {
  return events.reduce((s, [e, f]) => applyEvent(s, e, f), from);
}

const toolStart = (id: number, name: string, label = name): Event => ({
  type: "tool_start",
  tool_call_id: id,
  message_id: 1,
  name,
  arguments: {},
  label_short: label,
  label_full: label,
  path: null,
});
const delta = (text: string): Event => ({ type: "token_delta", kind: "content", delta: text });
const thinking = (id: number, content: string, input: number, output: number, cost: number | null = null): Event => ({
  type: "thinking",
  message_id: id,
  content,
  reasoning: null,
  input_tokens: input,
  output_tokens: output,
  cost_usd: cost,
});
const done = (id: number, stack: number, content: string, input: number, output: number): Event => ({
  type: "done",
  message_id: id,
  stack_id: stack,
  content,
  input_tokens: input,
  output_tokens: output,
  cost_usd: null,
});

/** The chat as `lane/kind:text`, top to bottom (`-` for the root). */
function shape(s: ChatState): string[] {
  return s.items.map((i: ChatItem) => {
    const where = i.lane ?? "-";
    switch (i.kind) {
      case "lane":
        return `${where}/lane:${i.label}`;
      case "tool":
        return `${where}/tool:${i.toolCallId}`;
      case "assistant":
        return `${where}/assistant:${i.content}${i.streaming ? "…" : ""}`;
      case "user":
        return `${where}/user:${i.content}`;
      case "notice":
        return `${where}/notice:${i.text}`;
      case "task":
        return `${where}/task:${i.label}=${i.state}`;
    }
  });
}

describe("sub-agent lanes in the chat", () => {
  it("puts a child's events in a lane under its spawning call and leaves the root's state alone", () => {
    const s = run([
      [thinking(1, "Delegating.", 1000, 20), ROOT],
      [toolStart(10, "execute_task"), ROOT],
      [delta("Look"), RESEARCHER],
      [delta("ing"), RESEARCHER],
      [thinking(2, "Looking.", 300, 7), RESEARCHER],
      [toolStart(20, "read_file", "read_file a.txt"), RESEARCHER],
      [{ type: "tool_done", tool_call_id: 20, result: "abc", result_type: "string", media: { media: [], links: [] } }, RESEARCHER],
      [done(3, 42, "It says abc.", 400, 9), RESEARCHER],
    ]);
    expect(shape(s)).toEqual([
      "-/assistant:Delegating.",
      "-/tool:10",
      "42/lane:researcher#42",
      "42/assistant:Looking.",
      "42/tool:20",
      "42/assistant:It says abc.",
    ]);
    // The child's replies are not the root's context, and its end is not the turn's.
    expect([s.running, s.inputTokens, s.outputTokens]).toEqual([true, 1000, 20]);
    const tool = s.items.find((i) => i.kind === "tool" && i.toolCallId === 20);
    expect(tool).toMatchObject({ depth: 1, lane: 42, status: "done" });
    expect(laneViews(s.items, s.spend).lanes.get(42)).toEqual({ status: "done", step: null, input: 700, output: 16, cost: null });
  });

  it("keeps parallel siblings in call order, each streaming into its own draft", () => {
    const s = run([
      [toolStart(10, "execute_task"), ROOT],
      [toolStart(11, "execute_task"), ROOT],
      [delta("R1 "), RESEARCHER],
      [delta("C1 "), CODER],
      [delta("R2"), RESEARCHER],
      [toolStart(21, "list_dir"), CODER],
      [delta("C2"), CODER],
    ]);
    expect(shape(s)).toEqual([
      "-/tool:10",
      "42/lane:researcher#42",
      "42/assistant:R1 R2…",
      "-/tool:11",
      "43/lane:coder#43",
      "43/assistant:C1 ",
      "43/tool:21",
      "43/assistant:C2…",
    ]);
    // Each lane says what it does now: the researcher still writes; the coder's call closed its
    // first draft, and it writes a second one.
    const { lanes } = laneViews(s.items, s.spend);
    expect(lanes.get(42)?.step).toBe("writing: R1 R2");
    expect(lanes.get(43)?.step).toBe("writing: C2");
  });

  it("nests a grandchild in its parent's lane and rolls its tokens and cost up to the lane and the call", () => {
    const grandchild = child(44, "researcher#42>coder#44", 30, 2);
    const s = run([
      [toolStart(10, "execute_task"), ROOT],
      [thinking(2, "", 100, 10, 0.25), RESEARCHER],
      [toolStart(30, "execute_subtask"), RESEARCHER],
      [thinking(4, "Coding.", 50, 5, 0.125), grandchild],
      [{ type: "approval_requested", request_id: 1, tool_call_id: 31, tool_name: "write_file", arguments: { path: "x" }, request: { kind: "other", path: "x" } }, grandchild],
      [thinking(5, "Meanwhile.", 1, 1), RESEARCHER],
    ]);
    expect(shape(s)).toEqual([
      "-/tool:10",
      "42/lane:researcher#42",
      "42/tool:30",
      "44/lane:researcher#42>coder#44",
      "44/assistant:Coding.",
      "44/tool:31",
      "42/assistant:Meanwhile.",
    ]);
    const { lanes, calls } = laneViews(s.items, s.spend);
    expect(lanes.get(44)).toEqual({ status: "running", step: "waiting for approval: write_file", input: 50, output: 5, cost: 0.125 });
    // The researcher's unpriced reply adds tokens but no cost.
    expect(lanes.get(42)).toMatchObject({ input: 151, output: 16, cost: 0.375 });
    expect(calls.get(10)).toEqual({ input: 151, output: 16, cost: 0.375 });
    expect(calls.get(30)).toEqual({ input: 50, output: 5, cost: 0.125 });
    // Folding the researcher hides its grandchild too, but never a call waiting for a decision.
    expect(visibleItems(s.items, new Set([42])).map((i) => i.key)).toEqual(["tool-10", "agent-42", "tool-31"]);
  });

  it("ends a lane when its spawning call ends, and a child's turn end is not the root's", () => {
    let s = run([
      [toolStart(10, "execute_task"), ROOT],
      [toolStart(20, "execute_cmd"), RESEARCHER],
      [{ type: "turn_ended", outcome: { kind: "failed", reason: "boom" } }, RESEARCHER],
    ]);
    expect(s.running).toBe(true);
    expect(laneViews(s.items, s.spend).lanes.get(42)?.status).toBe("failed");
    expect(shape(s).at(-1)).toBe("42/notice:The turn failed: boom");
    s = run([[toolStart(10, "execute_task"), ROOT], [toolStart(20, "execute_cmd"), RESEARCHER]]);
    s = applyEvent(s, { type: "tool_cancelled", tool_call_id: 10 }, ROOT);
    expect(laneViews(s.items, s.spend).lanes.get(42)).toMatchObject({ status: "stopped", step: null });
  });
});

const at = { created_at: "2026-12-01T10:00:00Z", content_chars: 0, result_chars: 0, truncated: false };
const rows: DebugMessage[] = [
  { kind: "user", message_id: 1, content: "research this", is_synthetic: false, failed: false, stack_id: 1, depth: 0, ...at },
  { kind: "thinking", message_id: 2, content: "", reasoning: null, is_synthetic: false, input_tokens: 900, output_tokens: 30, cost_usd: null, stack_id: 1, depth: 0, ...at },
  { kind: "tool", tool_call_id: 10, message_id: 2, name: "execute_task", label: "execute_task researcher", arguments: {}, status: "running", result: null, diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, ...at },
  { kind: "agent", stack_id: 42, agent_id: "researcher", depth: 1, prompt: "find it", parent_tool_call_id: 10 },
  { kind: "user", message_id: 3, content: "find it", is_synthetic: false, failed: false, stack_id: 42, depth: 1, ...at },
  { kind: "thinking", message_id: 4, content: "Delegating deeper.", reasoning: null, is_synthetic: false, input_tokens: 200, output_tokens: 8, cost_usd: 0.02, stack_id: 42, depth: 1, ...at },
  { kind: "tool", tool_call_id: 30, message_id: 4, name: "execute_subtask", label: "execute_subtask", arguments: {}, status: "running", result: null, diff: null, media: { media: [], links: [] }, stack_id: 42, depth: 1, ...at },
  { kind: "agent", stack_id: 44, agent_id: "coder", depth: 2, prompt: null, parent_tool_call_id: 30 },
  { kind: "tool", tool_call_id: 31, message_id: 5, name: "write_file", label: "write_file x", arguments: { path: "x" }, status: "pending", result: null, diff: null, media: { media: [], links: [] }, stack_id: 44, depth: 2, ...at },
  { kind: "agent_end", stack_id: 44, agent_id: "coder", depth: 2 },
  { kind: "agent_end", stack_id: 42, agent_id: "researcher", depth: 1 },
];

function page(items: DebugMessage[], more: { before?: boolean; after?: boolean } = {}): SessionWindow {
  return {
    session: { id: 5, title: null, source: "web", agent_id: "main", is_interactive: true, is_ephemeral: false, created_at: at.created_at },
    items,
    has_more_before: more.before ?? false,
    has_more_after: more.after ?? false,
    anchor_index: null,
    pending_inputs: [],
    awaiting_human: [],
    turn_ends: [],
    tasks: [],
  };
}

describe("sub-agent lanes from history", () => {
  it("rebuilds the lanes a live turn showed, labels and tokens included", () => {
    const s = chatFromWindow(page(rows), true);
    expect(shape(s)).toEqual([
      "-/user:research this",
      "-/tool:10",
      "42/lane:researcher#42",
      "42/user:find it",
      "42/assistant:Delegating deeper.",
      "42/tool:30",
      "44/lane:researcher#42>coder#44",
      "44/tool:31",
    ]);
    expect([s.inputTokens, s.outputTokens]).toEqual([900, 30]);
    const { lanes, calls } = laneViews(s.items, s.spend);
    expect(lanes.get(44)?.step).toBe("waiting for approval: write_file x");
    expect(calls.get(10)).toEqual({ input: 200, output: 8, cost: 0.02 });
    // The child's approval, arriving live again, lands on the loaded card, not in a new lane.
    const live = applyEvent(
      s,
      { type: "approval_resolved", request_id: 1, tool_call_id: 31, approved: true },
      child(44, "researcher#42>coder#44", 30, 2),
    );
    expect(shape(live)).toEqual(shape(s));
  });

  it("shows a window that starts inside a child under a placeholder head until the earlier page names it", () => {
    const later = chatFromWindow(page(rows.slice(5), { before: true }), true);
    expect(shape(later)[0]).toBe("42/lane:#42");
    const whole = prependChat(later, page(rows.slice(0, 5)));
    expect(shape(whole)).toEqual(shape(chatFromWindow(page(rows), true)));
    expect(whole.spend).toEqual(chatFromWindow(page(rows), true).spend);
  });

  it("appends a later page into the lanes already shown", () => {
    const earlier = chatFromWindow(page(rows.slice(0, 6), { after: true }), true);
    const whole = appendChat(earlier, page(rows.slice(6)));
    expect(shape(whole)).toEqual(shape(chatFromWindow(page(rows), true)));
  });
});

describe("async task cards", () => {
  const card = (s: ChatState): TaskItem => {
    const first = s.items[0];
    if (first?.kind !== "task") throw new Error(`no task card: ${shape(s).join(", ")}`);
    return first;
  };
  const update = (state: TaskState, report: string | null = null, messageId: number | null = null): Event => ({
    type: "task_update",
    task_id: 3,
    child_session_id: 9,
    label: "scout#9",
    state,
    report,
    message_id: messageId,
  });

  it("shows one card per task that follows it from started to reported", () => {
    const s = run([
      [update("queued"), ROOT],
      [update("running"), ROOT],
      [update("done", "42 files"), ROOT],
      [update("delivered", "42 files", 77), ROOT],
    ]);
    expect(shape(s)).toEqual(["-/task:scout#9=delivered"]);
    const c = card(s);
    expect([c.ended, c.report, c.childSessionId]).toEqual(["done", "42 files", 9]);
  });

  it("ignores a dropped second delivery and starts over when a failed task is continued", () => {
    const failed = run([
      [update("queued"), ROOT],
      [update("failed", "model unreachable"), ROOT],
      [update("delivered", "model unreachable", 78), ROOT],
    ]);
    const dropped = applyEvent(failed, update("delivery_dropped"), ROOT);
    expect(dropped).toBe(failed);
    const again = run([[update("queued"), ROOT]], failed);
    const c = card(again);
    // As a reload shows it: the engine cleared the old report when it requeued the task.
    expect([c.state, c.ended, c.report]).toEqual(["queued", null, null]);
    expect(again.items).toHaveLength(1);
  });

  it("rebuilds a task's card after its call from a reloaded window, and live updates move that card", () => {
    const rows: DebugMessage[] = [
      { kind: "user", message_id: 1, content: "look around", is_synthetic: false, failed: false, stack_id: 1, depth: 0, ...at },
      { kind: "thinking", message_id: 2, content: "", reasoning: null, is_synthetic: false, input_tokens: 1, output_tokens: 1, cost_usd: null, stack_id: 1, depth: 0, ...at },
      { kind: "tool", tool_call_id: 10, message_id: 2, name: "execute_task", label: "execute_task", arguments: { mode: "async" }, status: "done", result: "Task scout#9 started", diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, ...at },
      { kind: "assistant", message_id: 3, content: "Started it.", reasoning: null, is_synthetic: false, input_tokens: 1, output_tokens: 1, cost_usd: null, stack_id: 1, depth: 0, ...at },
    ];
    const window = page(rows);
    window.tasks = [
      { task_id: 3, parent_session_id: 5, child_session_id: 9, tool_call_id: 10, label: "scout#9", agent_id: "scout", state: "running", report: null, delivered: false },
      // A task whose call is not in this window gets no card here.
      { task_id: 4, parent_session_id: 5, child_session_id: 11, tool_call_id: 99, label: "scout#11", agent_id: "scout", state: "done", report: "old", delivered: true },
    ];
    const s = chatFromWindow(window, true);
    expect(shape(s)).toEqual(["-/user:look around", "-/tool:10", "-/task:scout#9=running", "-/assistant:Started it."]);
    const next = applyEvent(s, update("done", "42 files"), ROOT);
    expect(shape(next)).toEqual(["-/user:look around", "-/tool:10", "-/task:scout#9=done", "-/assistant:Started it."]);
  });
});

describe("a call's live progress", () => {
  const progress = (id: number, p: number, total: number | null, message: string | null = null): Event => ({
    type: "tool_progress",
    tool_call_id: id,
    progress: p,
    total,
    message,
  });
  const card = (s: ChatState, id: number) => s.items.find((i) => i.kind === "tool" && i.toolCallId === id);

  it("shows the latest report on the running call, in a sub-agent's lane too, and clears at its end", () => {
    let s = run([
      [toolStart(10, "execute_task"), ROOT],
      [toolStart(20, "mcp__everything__trigger-long-running-operation"), RESEARCHER],
      [progress(20, 1, 4), RESEARCHER],
      [progress(20, 2, 4, "halfway"), RESEARCHER],
    ]);
    expect(card(s, 20)).toMatchObject({ status: "running", progress: { progress: 2, total: 4, message: "halfway" }, lane: 42 });
    expect(card(s, 10)).not.toHaveProperty("progress.progress");
    s = applyEvent(s, { type: "tool_done", tool_call_id: 20, result: "ok", result_type: "string", media: { media: [], links: [] } }, RESEARCHER);
    expect(card(s, 20)).toMatchObject({ status: "done", progress: null });
    // A report that arrives after the end is stale; one for a call not shown adds nothing.
    const late = run([[progress(20, 4, 4), RESEARCHER], [progress(99, 1, null), ROOT]], s);
    expect(card(late, 20)).toMatchObject({ progress: null });
    expect(late.items).toHaveLength(s.items.length);
  });
});
