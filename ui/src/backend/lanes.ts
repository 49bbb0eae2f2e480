// Sub-agent lanes of the chat: each sub-agent frame's items sit in one contiguous block right
// under the call that spawned it (the session tree's spliced order), headed by its origin label.
// A flat list keeps the chat windowed: a lane is rows of the list, not one tall row.
import type { DebugMessage, FrameOrigin } from "./bindings";
import type { CardStatus, ChatItem } from "./chat";
import { agentLabel } from "./labels";

/** How a sub-agent frame ended, when a live event said so. */
export type LaneOutcome = "done" | "failed" | "stopped";

/** The head of a sub-agent's lane. Its `lane` is its own frame, so it belongs to its block. */
export type LaneItem = {
  kind: "lane";
  /** The key of the frame's `agent` row (`refKey`), so a jump to the row lands on the head. */
  key: string;
  lane: number;
  depth: number;
  /** The origin label as the live stream says it (`researcher#42>coder#47`). */
  label: string;
  agentId: string | null;
  /** The call (in the parent frame) that opened the frame. */
  parentCallId: number | null;
  /** The lane of that call; null for a call of the root frame. */
  parentLane: number | null;
  outcome: LaneOutcome | null;
  /** The task the sub-agent was given. */
  prompt: string | null;
  /** Made from a row of the frame without its `agent` row (a window that starts inside it). */
  placeholder: boolean;
};

/** Tokens one sub-agent reply reported. */
/** One reply of a lane: its tokens and, when the provider said, its cost in USD. */
export type Spend = { lane: number; input: number; output: number; cost: number | null };

/** Tokens and cost summed over replies; `cost` stays null until a reply carries one. */
export type SpendSum = { input: number; output: number; cost: number | null };

const addCost = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b);

/** How far lane parents are followed: deeper than any nesting the engine allows. */
const MAX_DEPTH = 64;

const laneKey = (stackId: number): string => `agent-${stackId}`;


export const laneOf = (item: ChatItem): number | null => item.lane ?? null;

/** The lane a live event's frame puts its items in; null for the root frame. */
export const frameLane = (frame: FrameOrigin | null): number | null =>
  frame !== null && frame.depth > 0 ? frame.stack_id : null;

/** Lane heads by frame. */
function heads(items: ChatItem[]): Map<number, LaneItem> {
  const out = new Map<number, LaneItem>();
  for (const i of items) if (i.kind === "lane") out.set(i.lane, i);
  return out;
}

/** The lanes `item` is nested in, innermost first. */
function chain(item: ChatItem, byLane: Map<number, LaneItem>): number[] {
  const out: number[] = [];
  for (let l = laneOf(item); l !== null && out.length < MAX_DEPTH; l = byLane.get(l)?.parentLane ?? null) out.push(l);
  return out;
}

/** Whether `item` is in `lane` or in a lane nested in it. */
function inLane(item: ChatItem, lane: number, byLane: Map<number, LaneItem>): boolean {
  return chain(item, byLane).includes(lane);
}

/** Whether `item` is in a lane that call `callId` opened (or one nested in it). */
function underCall(item: ChatItem, callId: number, byLane: Map<number, LaneItem>): boolean {
  return chain(item, byLane).some((l) => byLane.get(l)?.parentCallId === callId);
}

/** The index after the run of items following `start` that `owns` claims. */
function blockEnd(items: ChatItem[], start: number, owns: (item: ChatItem) => boolean): number {
  let end = start + 1;
  while (end < items.length && owns(items[end] as ChatItem)) end += 1;
  return end;
}

function insertAt(items: ChatItem[], index: number, item: ChatItem): ChatItem[] {
  return [...items.slice(0, index), item, ...items.slice(index)];
}

/** Puts `item` at the end of its lane's block (the root's items go at the end of the chat). */
export function insertInLane(items: ChatItem[], item: ChatItem): ChatItem[] {
  const lane = laneOf(item);
  const head = lane === null ? -1 : items.findIndex((i) => i.kind === "lane" && i.lane === lane);
  if (head < 0) return [...items, item];
  const byLane = heads(items);
  return insertAt(items, blockEnd(items, head, (i) => inLane(i, lane as number, byLane)), item);
}

/** The last item of a lane's own block (the chat's last item for the root). */
export function lastInLane(items: ChatItem[], lane: number | null): ChatItem | undefined {
  if (lane === null) return items[items.length - 1];
  const head = items.findIndex((i) => i.kind === "lane" && i.lane === lane);
  if (head < 0) return undefined;
  const byLane = heads(items);
  return items[blockEnd(items, head, (i) => inLane(i, lane, byLane)) - 1];
}

function agentOfLabel(label: string): string | null {
  const last = label.split(">").pop() ?? "";
  const hash = last.lastIndexOf("#");
  return hash > 0 ? last.slice(0, hash) : null;
}

/**
 * Makes sure the chat has a head for the frame of a live event: a new lane goes right after the
 * spawning call and the lanes it already opened (its siblings from a parallel batch stay in call
 * order); a placeholder head takes the label the event brings.
 */
export function ensureLane(items: ChatItem[], frame: FrameOrigin | null): ChatItem[] {
  const lane = frameLane(frame);
  if (frame === null || lane === null) return items;
  const label = frame.label ?? `#${lane}`;
  const known = items.findIndex((i) => i.kind === "lane" && i.lane === lane);
  if (known >= 0) {
    const head = items[known] as LaneItem;
    if (!head.placeholder || frame.label === null) return items;
    const next = items.slice();
    next[known] = { ...head, label, agentId: agentOfLabel(label), placeholder: false };
    return next;
  }
  const callId = frame.parent_tool_call_id;
  const call = callId === null ? -1 : items.findIndex((i) => i.kind === "tool" && i.toolCallId === callId);
  const head: LaneItem = {
    kind: "lane",
    key: laneKey(lane),
    lane,
    depth: frame.depth,
    label,
    agentId: agentOfLabel(label),
    parentCallId: callId,
    parentLane: call >= 0 ? laneOf(items[call] as ChatItem) : null,
    outcome: null,
    prompt: null,
    placeholder: frame.label === null,
  };
  if (call < 0) return [...items, head];
  const byLane = heads(items);
  return insertAt(items, blockEnd(items, call, (i) => underCall(i, callId as number, byLane)), head);
}

/** Records how a lane ended (the first word wins: a later "stopped" does not undo "done"). */
export function endLane(items: ChatItem[], lane: number, outcome: LaneOutcome): ChatItem[] {
  return items.map((i) => (i.kind === "lane" && i.lane === lane && i.outcome === null ? { ...i, outcome } : i));
}

/**
 * Lanes of a run of tree rows (a window or a page): an `agent` row opens a head whose label is
 * built as the engine builds it live; a row of a frame whose `agent` row is not loaded gets a
 * placeholder head. `known` lanes (already on screen) get no second head.
 */
export class RowLanes {
  private heads = new Map<number, LaneItem>();
  private callLane = new Map<number, number | null>();

  constructor(known: ChatItem[] = []) {
    for (const i of known) {
      if (i.kind === "lane") this.heads.set(i.lane, i);
      if (i.kind === "tool") this.callLane.set(i.toolCallId, laneOf(i));
    }
  }

  /** The head `m` opens, if any, and the lane its item goes in (absent for the root frame). */
  row(m: DebugMessage): { head: LaneItem | null; lane: number | undefined } {
    if (m.kind === "agent_end") return { head: null, lane: undefined };
    if (m.kind === "agent") {
      const parentLane = m.parent_tool_call_id === null ? null : (this.callLane.get(m.parent_tool_call_id) ?? null);
      const part = agentLabel(m.agent_id, m.stack_id);
      const parentLabel = parentLane === null ? null : this.heads.get(parentLane)?.label;
      const head: LaneItem = {
        kind: "lane",
        key: laneKey(m.stack_id),
        lane: m.stack_id,
        depth: m.depth,
        label: parentLabel ? `${parentLabel}>${part}` : part,
        agentId: m.agent_id,
        parentCallId: m.parent_tool_call_id,
        parentLane,
        outcome: null,
        prompt: m.prompt,
        placeholder: false,
      };
      this.heads.set(m.stack_id, head);
      return { head, lane: undefined };
    }
    if (m.kind === "tool") this.callLane.set(m.tool_call_id, m.depth > 0 ? m.stack_id : null);
    if (m.depth === 0) return { head: null, lane: undefined };
    if (this.heads.has(m.stack_id)) return { head: null, lane: m.stack_id };
    const head = placeholderLane(m.stack_id, m.depth);
    this.heads.set(m.stack_id, head);
    return { head, lane: m.stack_id };
  }
}

function placeholderLane(lane: number, depth: number): LaneItem {
  return {
    kind: "lane",
    key: laneKey(lane),
    lane,
    depth,
    label: `#${lane}`,
    agentId: null,
    parentCallId: null,
    parentLane: null,
    outcome: null,
    prompt: null,
    placeholder: true,
  };
}

/**
 * An earlier page on top of the loaded items: a head the page brings replaces the one shown
 * (a placeholder shown because the window started inside the frame), keeping what live events
 * said of how the lane ended.
 */
export function mergePrepended(page: ChatItem[], shown: ChatItem[]): ChatItem[] {
  const pageHeads = heads(page);
  const shownHeads = heads(shown);
  const kept = shown.filter((i) => !(i.kind === "lane" && pageHeads.has(i.lane)));
  const known = new Set(kept.map((i) => i.key));
  const top = page
    .filter((i) => !known.has(i.key))
    .map((i) => (i.kind === "lane" ? { ...i, outcome: i.outcome ?? shownHeads.get(i.lane)?.outcome ?? null } : i));
  return relabel([...top, ...kept]);
}

/**
 * Labels built from rows again once their parents are known (a head made while its parent's
 * `agent` row was not loaded lacked the parent's part), as the engine builds them live.
 */
function relabel(items: ChatItem[]): ChatItem[] {
  const callLane = new Map<number, number | null>();
  const byLane = new Map<number, LaneItem>();
  return items.map((i) => {
    if (i.kind === "tool") callLane.set(i.toolCallId, laneOf(i));
    if (i.kind !== "lane") return i;
    let head = i;
    if (i.agentId !== null && i.parentCallId !== null && callLane.has(i.parentCallId)) {
      const parentLane = callLane.get(i.parentCallId) ?? null;
      const parentLabel = parentLane === null ? null : byLane.get(parentLane)?.label;
      const part = agentLabel(i.agentId, i.lane);
      head = { ...i, parentLane, label: parentLabel ? `${parentLabel}>${part}` : part };
    }
    byLane.set(head.lane, head);
    return head;
  });
}

/** What a status of the spawning call says of its lane, when the lane itself said nothing. */
function outcomeOfCall(status: CardStatus | undefined): LaneOutcome | null {
  switch (status) {
    case "done":
      return "done";
    case "error":
      return "failed";
    case "cancelled":
    case "rejected":
      return "stopped";
    default:
      return null;
  }
}

export type LaneStatus = LaneOutcome | "running";

/** A lane as its head shows it: how it stands, what it does now, what it spent. */
export type LaneView = {
  status: LaneStatus;
  /** What the sub-agent does right now (while running). */
  step: string | null;
  /** Tokens and cost of the lane's replies and of the lanes nested in it. */
  input: number;
  output: number;
  cost: number | null;
};

/** Characters of streamed text the head shows as progress. */
const STEP_TAIL = 80;

function stepOf(last: ChatItem | undefined): string {
  if (!last || last.kind === "lane" || last.kind === "user") return "starting…";
  switch (last.kind) {
    case "assistant": {
      if (!last.streaming) return "thinking…";
      const text = (last.content || last.reasoning || "").replace(/\s+/g, " ").trim();
      return text.length > STEP_TAIL ? `writing: …${text.slice(-STEP_TAIL)}` : `writing: ${text}`;
    }
    case "tool":
      return last.status === "pending" ? `waiting for approval: ${last.label}` : `${last.label} (${last.status})`;
    case "notice":
      return last.text;
    case "task":
      return `task ${last.label} (${last.state})`;
  }
}

/** Every lane's view, and the tokens each spawning call's lanes spent (rolled up). */
export function laneViews(
  items: ChatItem[],
  spend: Record<number, Spend>,
): { lanes: Map<number, LaneView>; calls: Map<number, SpendSum> } {
  const byLane = heads(items);
  const calls = new Map<number, SpendSum>();
  const callStatus = new Map<number, CardStatus>();
  const lastOwn = new Map<number, ChatItem>();
  for (const i of items) {
    if (i.kind === "tool") callStatus.set(i.toolCallId, i.status);
    const l = laneOf(i);
    if (l !== null && i.kind !== "lane") lastOwn.set(l, i);
  }
  const lanes = new Map<number, LaneView>();
  for (const head of byLane.values()) {
    const status = head.outcome ?? outcomeOfCall(head.parentCallId === null ? undefined : callStatus.get(head.parentCallId)) ?? "running";
    lanes.set(head.lane, { status, step: status === "running" ? stepOf(lastOwn.get(head.lane)) : null, input: 0, output: 0, cost: null });
  }
  for (const s of Object.values(spend)) {
    for (let l: number | null = s.lane, n = 0; l !== null && n < MAX_DEPTH; l = byLane.get(l)?.parentLane ?? null, n += 1) {
      const view = lanes.get(l);
      if (view) {
        view.input += s.input;
        view.output += s.output;
        view.cost = addCost(view.cost, s.cost);
      }
    }
  }
  for (const head of byLane.values()) {
    const view = lanes.get(head.lane);
    if (head.parentCallId === null || !view) continue;
    // Lanes nested in another lane are already counted in it: the call sums its own children.
    const sum = calls.get(head.parentCallId) ?? { input: 0, output: 0, cost: null };
    calls.set(head.parentCallId, { input: sum.input + view.input, output: sum.output + view.output, cost: addCost(sum.cost, view.cost) });
  }
  return { lanes, calls };
}

/** Items a person sees with the collapsed lanes folded: a head stays, its block goes, except
 * calls waiting for a decision (a question or an approval is never hidden). */
export function visibleItems(items: ChatItem[], collapsed: ReadonlySet<number>): ChatItem[] {
  if (collapsed.size === 0) return items;
  const byLane = heads(items);
  return items.filter((i) => {
    const lanes = chain(i, byLane);
    // A head is hidden only by a collapsed lane it is nested in, not by its own.
    const outer = i.kind === "lane" ? lanes.slice(1) : lanes;
    if (!outer.some((l) => collapsed.has(l))) return true;
    return i.kind === "tool" && i.status === "pending";
  });
}

/** The origin label of each sub-agent frame of a run of tree rows, as the live stream names it. */
export function originLabels(rows: DebugMessage[]): Map<number, string> {
  const lanes = new RowLanes();
  const labels = new Map<number, string>();
  for (const m of rows) {
    const { head } = lanes.row(m);
    if (head) labels.set(head.lane, head.label);
  }
  return labels;
}

/** How each sub-agent frame of a run of tree rows stands, from its spawning call's row. */
export function frameStatuses(rows: DebugMessage[]): Map<number, LaneStatus> {
  const calls = new Map<number, DebugMessage & { kind: "tool" }>();
  for (const m of rows) if (m.kind === "tool") calls.set(m.tool_call_id, m);
  const out = new Map<number, LaneStatus>();
  for (const m of rows) {
    if (m.kind !== "agent" || m.parent_tool_call_id === null) continue;
    const call = calls.get(m.parent_tool_call_id);
    if (!call) continue;
    const status = call.status === "failed" ? "error" : call.status;
    out.set(m.stack_id, outcomeOfCall(status) ?? "running");
  }
  return out;
}

/**
 * Where new rows of a live session can appear in a window that reaches the newest row: inside
 * the first frame still running (before its closing row, which the tree writes for a running
 * frame too), else after the last row. The index of the row to read after.
 */
export function liveAnchor(rows: DebugMessage[]): number {
  const running = frameStatuses(rows);
  const open = rows.findIndex((m) => m.kind === "agent_end" && (running.get(m.stack_id) ?? "running") === "running");
  return open > 0 ? open - 1 : rows.length - 1;
}
