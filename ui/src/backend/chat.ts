// The chat view model: built from a window of the session tree, grown by earlier pages as the
// user scrolls up, and advanced by live engine events.
import type {
  DebugMessage,
  EndedTurn,
  Event,
  FileDiff,
  ToolResultMedia,
  FrameOrigin,
  ItemRef,
  ResultType,
  SessionDetail,
  SessionWindow,
  TaskInfo,
  TaskState,
  TurnEnd,
} from "./bindings";
import {
  endLane,
  ensureLane,
  frameLane,
  insertInLane,
  laneOf,
  lastInLane,
  mergePrepended,
  RowLanes,
  type LaneItem,
  type LaneOutcome,
  type Spend,
} from "./lanes";
import { itemRef } from "./window";

export type CardStatus = "running" | "done" | "error" | "cancelled" | "rejected" | "pending";

export type ApprovalInfo = {
  toolCallId: number;
  /** Live request id when an event announced it; null for a card rebuilt from history. */
  requestId: number | null;
  kind: "write" | "command" | "mcp" | "tool";
  toolName: string;
  arguments: unknown;
  path: string | null;
  diff: FileDiff | null;
  command: string | null;
  workdir: string | null;
  /** The MCP server and its tool, for an MCP call. */
  mcp: { server: string; tool: string } | null;
};

/** `lane`: the sub-agent frame (stack id) an item belongs to; absent for the session's root frame. */
/** A clarification question a call waits on (`ask_user_clarification`). */
export type QuestionInfo = {
  toolCallId: number;
  title: string;
  /** Markdown. */
  question: string;
  suggestedAnswers: string[];
};

/** The tool that asks the user a question; its waiting call is a question, never an approval. */
export const ASK_TOOL = "ask_user_clarification";

export type UserItem = { kind: "user"; key: string; messageId: number; content: string; truncated?: boolean; lane?: number };
/** A message stored while the session was busy, not yet part of the history (a pending input). */
export type QueuedItem = { key: string; pendingInputId: number; content: string };
export type AssistantItem = {
  kind: "assistant";
  key: string;
  messageId: number | null;
  content: string;
  reasoning: string | null;
  streaming: boolean;
  /** The text was cut to a preview; the whole message is fetched on expand. */
  truncated: boolean;
  lane?: number;
};
export type ToolItem = {
  kind: "tool";
  /** The result or an argument was cut to a preview; the whole call is fetched on expand. */
  truncated: boolean;
  /** Characters of the whole result. */
  resultChars: number;
  key: string;
  toolCallId: number;
  name: string;
  label: string;
  arguments: unknown;
  status: CardStatus;
  result: string | null;
  resultType: ResultType;
  error: string | null;
  approval: ApprovalInfo | null;
  /** The question the call waits on an answer to. */
  question: QuestionInfo | null;
  /** The change a write call made, once it is done. */
  diff: FileDiff | null;
  /** The media files and resource links an MCP call returned, once it is done. */
  media?: ToolResultMedia | null;
  /** The latest progress its MCP server reported while it runs (live only, never stored). */
  progress?: ToolProgressInfo | null;
  depth: number;
  lane?: number;
};
export type ToolProgressInfo = { progress: number; total: number | null; message: string | null };
export type NoticeItem = { kind: "notice"; key: string; tone: "info" | "warn" | "error"; text: string; lane?: number };
export type { LaneItem, LaneOutcome, Spend };
/** An async task the session started (`execute_task` mode async): its card follows its state. */
export type TaskItem = {
  kind: "task";
  key: string;
  taskId: number;
  /** The session the task runs in. */
  childSessionId: number;
  /** `agent#session`, as its report block names it. */
  label: string;
  state: TaskState;
  /** How it ended (`done`, `failed`, `cancelled`), kept once it is `delivered`. */
  ended: TaskState | null;
  /** The final answer or the failure, once it ended. */
  report: string | null;
  lane?: number;
};

const TASK_ENDS: TaskState[] = ["done", "failed", "cancelled"];
export type ChatItem = UserItem | AssistantItem | ToolItem | NoticeItem | LaneItem | TaskItem;

export type ChatState = {
  sessionId: number | null;
  items: ChatItem[];
  /**
   * Messages waiting to be folded into the conversation, oldest first. They stay below it until
   * the engine folds them (at a round boundary, after any decision the turn waits for).
   */
  queued: QueuedItem[];
  running: boolean;
  /** Tokens of the last model request (the context actually sent), or after a compaction the
   *  engine's estimate of the compacted context. */
  inputTokens: number | null;
  outputTokens: number | null;
  /** Counter for locally made keys (notices, streaming bubbles). */
  seq: number;
  /** Rows of the session exist before the loaded ones: scrolling up loads them. */
  hasMoreBefore: boolean;
  /**
   * The loaded rows stop before the newest (after a jump to an older row): live rows are not
   * appended until the user goes back to the latest.
   */
  hasMoreAfter: boolean;
  /** Tree rows at the edges of what is loaded: where an earlier or later page starts. */
  first: ItemRef | null;
  last: ItemRef | null;
  /** Key of the item a jump landed on (highlighted). */
  highlight: string | null;
  /** Calls of the session waiting for a human when the window was read (loaded or not). */
  awaiting: number[];
  /** Counts fresh windows (a load, a jump, a resync): the list starts over at each. */
  generation: number;
  /** Tokens each sub-agent reply reported, by message id (the root's are `inputTokens`). */
  spend: Record<number, Spend>;
};

export function emptyChat(sessionId: number | null, running = false): ChatState {
  return {
    sessionId,
    items: [],
    queued: [],
    running,
    inputTokens: null,
    outputTokens: null,
    seq: 0,
    hasMoreBefore: false,
    hasMoreAfter: false,
    first: null,
    last: null,
    highlight: null,
    awaiting: [],
    generation: 0,
    spend: {},
  };
}

const WRITE_TOOLS = new Set(["write_file", "edit_file", "insert_at_line", "replace_lines"]);

function argObject(args: unknown): Record<string, unknown> {
  if (typeof args === "string") {
    try {
      const parsed: unknown = JSON.parse(args);
      return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
}

function argString(args: unknown, key: string): string | null {
  const v = argObject(args)[key];
  return typeof v === "string" ? v : null;
}

/** What the card of a call rebuilt from history shows until the inbox (which stored the request's
 * kind and diff) fills it in: a guess from the tool's name and arguments. */
function approvalFor(toolCallId: number, toolName: string, args: unknown): ApprovalInfo {
  const kind = toolName === "execute_cmd" ? "command" : WRITE_TOOLS.has(toolName) ? "write" : "tool";
  return {
    toolCallId,
    requestId: null,
    kind,
    toolName,
    arguments: args,
    path: argString(args, "path"),
    diff: null,
    command: kind === "command" ? argString(args, "command") : null,
    workdir: kind === "command" ? argString(args, "workdir") : null,
    mcp: null,
  };
}

/** The question a waiting call rebuilt from history asks, from its arguments (as the engine reads them). */
function questionFor(toolCallId: number, args: unknown): QuestionInfo {
  const suggested = argObject(args).suggested_answers;
  return {
    toolCallId,
    title: argString(args, "title")?.trim() || "Question",
    question: argString(args, "question") ?? "",
    suggestedAnswers: Array.isArray(suggested) ? suggested.filter((a): a is string => typeof a === "string") : [],
  };
}

type ApprovalRequested = Extract<Event, { type: "approval_requested" }>;

/** The card of a live approval request: its kind and what to review come with the event. */
export function approvalOf(event: ApprovalRequested): ApprovalInfo {
  const base: ApprovalInfo = {
    toolCallId: event.tool_call_id,
    requestId: event.request_id,
    kind: "tool",
    toolName: event.tool_name,
    arguments: event.arguments,
    path: null,
    diff: null,
    command: null,
    workdir: null,
    mcp: null,
  };
  const r = event.request;
  switch (r.kind) {
    case "write":
      return { ...base, kind: "write", path: r.path, diff: r.diff };
    case "command":
      return { ...base, kind: "command", command: r.command, workdir: r.workdir };
    case "mcp_call":
      return { ...base, kind: "mcp", mcp: { server: r.server, tool: r.tool } };
    case "other":
      return { ...base, path: r.path };
  }
}

/** How a turn ended, in words. */
export function describeTurnEnd(outcome: TurnEnd): string {
  switch (outcome.kind) {
    case "final":
      return `Answered (message ${outcome.message_id}).`;
    case "parked":
      return `Waiting for a decision on call ${outcome.tool_call_ids.join(", ")}.`;
    case "cancelled":
      return "Stopped: you ended this turn.";
    case "exhausted":
      return `Stopped after ${outcome.rounds} tool rounds without a final answer.`;
    case "failed":
      return `The turn failed: ${outcome.reason}`;
  }
}

/** What the chat says about how a turn ended; nothing for an answer or a call waiting for you
 * (the answer and the approval card say it). */
export function turnEndNotice(outcome: TurnEnd): { tone: NoticeItem["tone"]; text: string } | null {
  switch (outcome.kind) {
    case "final":
    case "parked":
      return null;
    case "cancelled":
      return { tone: "info", text: describeTurnEnd(outcome) };
    case "exhausted":
    case "failed":
      return { tone: "error", text: describeTurnEnd(outcome) };
  }
}

function turnEndItem(end: EndedTurn): NoticeItem | null {
  const n = turnEndNotice(end.outcome);
  return n ? { kind: "notice", key: `turn-end-${end.id}`, ...n } : null;
}

function debugMessageId(m: DebugMessage): number | null {
  return m.kind === "agent" || m.kind === "agent_end" ? null : m.message_id;
}

function toolFromDebug(m: Extract<DebugMessage, { kind: "tool" }>): ToolItem {
  const failed = m.status === "failed";
  const status: CardStatus = m.status === "failed" ? "error" : m.status;
  return {
    kind: "tool",
    key: `tool-${m.tool_call_id}`,
    truncated: m.truncated,
    resultChars: m.result_chars,
    toolCallId: m.tool_call_id,
    name: m.name,
    label: m.label,
    arguments: m.arguments,
    status,
    result: failed || m.status === "rejected" ? null : m.result,
    resultType: "string",
    error: failed || m.status === "rejected" ? m.result : null,
    approval: m.status === "pending" && m.name !== ASK_TOOL ? approvalFor(m.tool_call_id, m.name, m.arguments) : null,
    question: m.status === "pending" && m.name === ASK_TOOL ? questionFor(m.tool_call_id, m.arguments) : null,
    diff: m.diff,
    media: m.media,
    depth: m.depth,
  };
}

/** How the engine starts a briefing input (what background work reported, for the home agent). */
export const BRIEFING_PREFIX = "[briefing] ";

/**
 * A briefing input as the chat shows it: a line saying how many reports arrived (the agent's
 * briefing follows as its answer); the reported facts themselves stay in the debug tree.
 */
export function briefingItem(messageId: number, content: string): NoticeItem | null {
  if (!content.startsWith(BRIEFING_PREFIX)) return null;
  const count = /reported (\d+) things?/.exec(content)?.[1];
  const what = count === undefined ? "Background work reported" : `Background work reported ${count} ${count === "1" ? "thing" : "things"}`;
  return { kind: "notice", key: `briefing-${messageId}`, tone: "info", text: `Briefing: ${what} while you were away.` };
}

/** The chat item a tree row shows as, if any: synthetic rows and sub-agent bookkeeping are left out. */
export function chatItem(m: DebugMessage): ChatItem | null {
  switch (m.kind) {
    case "user":
      if (m.is_synthetic) return briefingItem(m.message_id, m.content);
      return { ...userItem(m.message_id, m.content), truncated: m.truncated };
    case "thinking":
    case "assistant":
      if (m.is_synthetic || !(m.content || m.reasoning)) return null;
      return {
        kind: "assistant",
        key: `msg-${m.message_id}`,
        messageId: m.message_id,
        content: m.content,
        reasoning: m.reasoning,
        streaming: false,
        truncated: m.truncated,
      };
    case "tool":
      return toolFromDebug(m);
    case "agent":
    case "agent_end":
      return null;
  }
}

/**
 * The conversation a person sees in `rows`, with each stored turn end after the newest row it saw
 * (so a reload shows why turns ended), the last token counts the root frame reported among them,
 * and what each sub-agent reply spent. Sub-agent rows go in lanes under their spawning call;
 * `shown` items (a page joins them) keep their lane heads.
 */
function fromRows(
  rows: DebugMessage[],
  turnEnds: EndedTurn[],
  shown: ChatItem[] = [],
): { items: ChatItem[]; inputTokens: number | null; outputTokens: number | null; spend: Record<number, Spend> } {
  const items: ChatItem[] = [];
  let inputTokens: number | null = null;
  let outputTokens: number | null = null;
  const spend: Record<number, Spend> = {};
  const lanes = new RowLanes(shown);
  const ends = turnEnds.slice();
  const flushEnds = (upTo: number | null) => {
    for (let end = ends[0]; end && (upTo === null || (end.after_message_id ?? -1) < upTo); end = ends[0]) {
      ends.shift();
      const item = turnEndItem(end);
      if (item) items.push(item);
    }
  };
  for (const m of rows) {
    const id = debugMessageId(m);
    if (id !== null) flushEnds(id);
    const { head, lane } = lanes.row(m);
    if (head) items.push(head);
    if (m.kind === "thinking" || m.kind === "assistant") {
      if (lane !== undefined) {
        if (m.input_tokens !== null || m.output_tokens !== null || m.cost_usd !== null) {
          spend[m.message_id] = { lane, input: m.input_tokens ?? 0, output: m.output_tokens ?? 0, cost: m.cost_usd };
        }
      } else {
        if (m.input_tokens !== null) inputTokens = m.input_tokens;
        if (m.output_tokens !== null) outputTokens = m.output_tokens;
      }
    }
    const item = chatItem(m);
    if (item) items.push(lane === undefined ? item : { ...item, lane });
  }
  flushEnds(null);
  return { items, inputTokens, outputTokens, spend };
}

/** The whole conversation from the full tree (kept for callers that read it all). */
export function chatFromDetail(detail: SessionDetail, running: boolean): ChatState {
  const state = emptyChat(detail.session.id, running);
  const { items, inputTokens, outputTokens, spend } = fromRows(detail.messages, detail.turn_ends);
  state.queued = detail.pending_inputs.map((p) => queuedItem(p.id, p.content));
  return { ...state, items, inputTokens, outputTokens, spend };
}

/** The key a jump highlights: the anchor row's item, or the next item shown after it. */
function highlightOf(page: SessionWindow): string | null {
  if (page.anchor_index === null) return null;
  for (const row of page.items.slice(page.anchor_index)) {
    const item = chatItem(row);
    if (item) return item.key;
  }
  return null;
}

/** The chat of one window of the session (the newest rows, or the rows around a jump target). */
export function chatFromWindow(page: SessionWindow, running: boolean): ChatState {
  const state = emptyChat(page.session.id, running);
  const { items, inputTokens, outputTokens, spend } = fromRows(page.items, page.turn_ends);
  return {
    ...state,
    items: withTasks(items, page.tasks),
    inputTokens,
    outputTokens,
    spend,
    queued: page.pending_inputs.map((p) => queuedItem(p.id, p.content)),
    hasMoreBefore: page.has_more_before,
    hasMoreAfter: page.has_more_after,
    first: edge(page.items, 0),
    last: edge(page.items, page.items.length - 1),
    highlight: highlightOf(page),
    awaiting: page.awaiting_human,
  };
}

/** The cursor of row `index` of a page, if there is one. */
/** A task's card as history tells it (a reload, another window): after the call that started
 *  it, when that call is loaded and the card is not shown yet. */
function withTasks(items: ChatItem[], tasks: TaskInfo[]): ChatItem[] {
  let out = items;
  for (const t of tasks) {
    const key = `task-${t.task_id}`;
    if (out.some((i) => i.key === key)) continue;
    const at = out.findIndex((i) => i.key === `tool-${t.tool_call_id}`);
    if (at < 0) continue;
    const call = out[at] as ChatItem;
    const card: TaskItem = {
      kind: "task",
      key,
      taskId: t.task_id,
      childSessionId: t.child_session_id,
      label: t.label,
      state: t.delivered ? "delivered" : t.state,
      ended: TASK_ENDS.includes(t.state) ? t.state : null,
      report: t.report,
      ...(call.lane !== undefined ? { lane: call.lane } : {}),
    };
    out = [...out.slice(0, at + 1), card, ...out.slice(at + 1)];
  }
  return out;
}

function edge(rows: DebugMessage[], index: number): ItemRef | null {
  const row = rows[index];
  return row ? itemRef(row) : null;
}

function withoutKnown(state: ChatState, items: ChatItem[]): ChatItem[] {
  const known = new Set(state.items.map((i) => i.key));
  return items.filter((i) => !known.has(i.key));
}

/** An earlier page (read before the first loaded row) goes on top. */
export function prependChat(state: ChatState, page: SessionWindow): ChatState {
  if (page.session.id !== state.sessionId) return state;
  const { items, spend } = fromRows(page.items, page.turn_ends);
  return {
    ...state,
    items: withTasks(mergePrepended(items, state.items), page.tasks),
    spend: { ...spend, ...state.spend },
    hasMoreBefore: page.has_more_before,
    first: edge(page.items, 0) ?? state.first,
  };
}

/** A later page (read after the last loaded row) goes below. */
export function appendChat(state: ChatState, page: SessionWindow): ChatState {
  if (page.session.id !== state.sessionId) return state;
  const { items, spend } = fromRows(page.items, page.turn_ends, state.items);
  return {
    ...state,
    items: withTasks([...state.items, ...withoutKnown(state, items)], page.tasks),
    spend: { ...state.spend, ...spend },
    hasMoreAfter: page.has_more_after,
    last: edge(page.items, page.items.length - 1) ?? state.last,
    queued: page.has_more_after ? state.queued : page.pending_inputs.map((p) => queuedItem(p.id, p.content)),
  };
}

/** Puts the whole text of an item a window cut to a preview in its place. */
export function expandChat(state: ChatState, row: DebugMessage): ChatState {
  const whole = chatItem(row);
  if (!whole) return state;
  return {
    ...state,
    items: state.items.map((i) => {
      if (i.key !== whole.key) return i;
      // Live state (an approval card, a streamed draft) stays; the texts come whole.
      if (i.kind === "tool" && whole.kind === "tool") {
        return {
          ...i,
          arguments: whole.arguments,
          result: whole.result,
          error: whole.error,
          diff: whole.diff ?? i.diff,
          media: whole.media ?? i.media,
          truncated: false,
        };
      }
      return i.lane === undefined ? whole : { ...whole, lane: i.lane };
    }),
  };
}

function userItem(messageId: number, content: string): UserItem {
  return { kind: "user", key: `user-${messageId}`, messageId, content };
}

function queuedItem(pendingInputId: number, content: string): QueuedItem {
  return { key: `pending-${pendingInputId}`, pendingInputId, content };
}

/** Why the queued messages wait: the decisions the turn needs first, or the running turn. */
export function queuedReason(state: ChatState): string {
  const waiting = state.items.filter((i): i is ToolItem => i.kind === "tool" && i.status === "pending");
  if (waiting.length > 0) return `waiting for your decision on ${waiting.map((t) => t.label).join(", ")}`;
  return state.running ? "queued for the running turn" : "queued";
}

/** `item` in `lane` (absent for the root frame, as every root item has been). */
function inLaneOf<T extends ChatItem>(item: T, lane: number | null): T {
  return lane === null ? item : { ...item, lane };
}

const sameLane = (i: ChatItem, lane: number | null) => laneOf(i) === lane;

function addUser(state: ChatState, messageId: number, content: string, lane: number | null = null): ChatState {
  if (state.items.some((i) => i.kind === "user" && i.messageId === messageId)) return state;
  return { ...state, items: insertInLane(state.items, inLaneOf(userItem(messageId, content), lane)) };
}

function notice(state: ChatState, tone: NoticeItem["tone"], text: string, lane: number | null = null): ChatState {
  const item: NoticeItem = inLaneOf({ kind: "notice", key: `notice-${state.seq}`, tone, text }, lane);
  return { ...state, seq: state.seq + 1, items: insertInLane(state.items, item) };
}

export function addNotice(state: ChatState, tone: NoticeItem["tone"], text: string): ChatState {
  return notice(state, tone, text);
}

function updateTool(
  state: ChatState,
  toolCallId: number,
  change: (t: ToolItem) => ToolItem,
  create?: () => ToolItem,
): ChatState {
  const index = state.items.findIndex((i) => i.kind === "tool" && i.toolCallId === toolCallId);
  if (index < 0) return create ? { ...state, items: insertInLane(state.items, change(create())) } : state;
  const items = state.items.slice();
  items[index] = change(items[index] as ToolItem);
  return { ...state, items };
}

function newTool(toolCallId: number, name: string, args: unknown, frame: FrameOrigin | null): ToolItem {
  const tool: ToolItem = {
    kind: "tool",
    key: `tool-${toolCallId}`,
    truncated: false,
    resultChars: 0,
    toolCallId,
    name,
    label: name,
    arguments: args,
    status: "running",
    result: null,
    resultType: "string",
    error: null,
    approval: null,
    question: null,
    diff: null,
    depth: frame?.depth ?? 0,
  };
  return inLaneOf(tool, frameLane(frame));
}

/** Drops the draft a failed model request of `lane` streamed: the retry or the next model streams anew. */
function dropDraft(state: ChatState, lane: number | null): ChatState {
  return { ...state, items: state.items.filter((i) => !(i.kind === "assistant" && i.streaming && sameLane(i, lane))) };
}

/** Closes the drafts of `lane` (`undefined`: of every lane, when the turn is over). */
function endStreaming(items: ChatItem[], lane?: number | null): ChatItem[] {
  return items.map((i) =>
    i.kind === "assistant" && i.streaming && (lane === undefined || sameLane(i, lane)) ? { ...i, streaming: false } : i,
  );
}

/** Puts the authoritative text of a saved assistant message in place of its lane's streamed draft. */
function settleAssistant(
  state: ChatState,
  messageId: number,
  content: string,
  reasoning: string | null,
  lane: number | null,
): ChatState {
  const draftIndex = state.items.findIndex((i) => i.kind === "assistant" && i.streaming && sameLane(i, lane));
  const savedIndex = state.items.findIndex((i) => i.kind === "assistant" && i.messageId === messageId);
  let items = state.items.slice();
  const settled: AssistantItem = inLaneOf(
    {
      kind: "assistant",
      key: `msg-${messageId}`,
      messageId,
      content,
      reasoning,
      streaming: false,
      truncated: false,
    },
    lane,
  );
  const visible = content.length > 0 || (reasoning !== null && reasoning.length > 0);
  if (savedIndex >= 0) {
    items[savedIndex] = settled;
    if (draftIndex >= 0) items.splice(draftIndex, 1);
  } else if (draftIndex >= 0) {
    if (visible) items[draftIndex] = settled;
    else items.splice(draftIndex, 1);
  } else if (visible) {
    items = insertInLane(items, settled);
  }
  return { ...state, items };
}

/** Records the tokens a sub-agent reply reported (the root's are the context meter's). */
function spent(state: ChatState, lane: number | null, messageId: number, input: number | null, output: number | null, cost: number | null): ChatState {
  if (lane === null || (input === null && output === null && cost === null)) return state;
  return { ...state, spend: { ...state.spend, [messageId]: { lane, input: input ?? 0, output: output ?? 0, cost } } };
}

/** What a turn end of a sub-agent frame says of its lane. */
function laneOutcome(outcome: TurnEnd): LaneOutcome | null {
  switch (outcome.kind) {
    case "final":
      return "done";
    case "cancelled":
      return "stopped";
    case "exhausted":
    case "failed":
      return "failed";
    case "parked":
      return null;
  }
}

/**
 * Applies a live event from `frame` (null: the event names none, as the root's did before
 * frames). A sub-agent frame's items go in its lane under the spawning call; its replies and
 * turn end never touch the root's running state or context meter. While the window stops
 * before the newest rows (after a jump), items it would add are left out: they are rows the user
 * reaches by going back to the latest.
 */
export function applyEvent(state: ChatState, event: Event, frame: FrameOrigin | null = null): ChatState {
  const lane = frameLane(frame);
  const framed = lane === null || !ADDS_ITEMS.has(event.type) ? state : { ...state, items: ensureLane(state.items, frame) };
  const next = trackAwaiting(lane === null ? applyLive(framed, event) : applyInLane(framed, event, frame as FrameOrigin), event);
  if (!state.hasMoreAfter || next.items === state.items) return next;
  const known = new Set(state.items.map((i) => i.key));
  return { ...next, items: next.items.filter((i) => known.has(i.key)) };
}

/** Events of a sub-agent frame that show in its lane (and so open it). */
const ADDS_ITEMS = new Set<Event["type"]>([
  "user_message",
  "token_delta",
  "thinking",
  "interim_answer",
  "done",
  "tool_start",
  "approval_requested",
  "agent_question",
  "model_fallback",
  "model_retry",
  "llm_failed",
  "truncated",
  "turn_ended",
  "compacting",
  "compaction_done",
]);

/** Keeps the list of calls waiting for a human current (loaded in the window or not). */
function trackAwaiting(state: ChatState, event: Event): ChatState {
  switch (event.type) {
    case "approval_requested":
    case "agent_question":
      if (state.awaiting.includes(event.tool_call_id)) return state;
      return { ...state, awaiting: [...state.awaiting, event.tool_call_id] };
    case "approval_resolved":
    case "clarification_resolved":
    case "tool_done":
    case "tool_error":
    case "tool_cancelled":
    case "tool_rejected":
      if (!state.awaiting.includes(event.tool_call_id)) return state;
      return { ...state, awaiting: state.awaiting.filter((id) => id !== event.tool_call_id) };
    default:
      return state;
  }
}

/** Streams a delta into the lane's draft, or starts one at the end of the lane. */
function streamDelta(state: ChatState, event: Extract<Event, { type: "token_delta" }>, lane: number | null): ChatState {
  const reasoning = event.kind === "reasoning";
  const last = lastInLane(state.items, lane);
  if (last && last.kind === "assistant" && last.streaming && sameLane(last, lane)) {
    const grown: AssistantItem = reasoning
      ? { ...last, reasoning: (last.reasoning ?? "") + event.delta }
      : { ...last, content: last.content + event.delta };
    return { ...state, items: state.items.map((i) => (i === last ? grown : i)) };
  }
  const draft: AssistantItem = inLaneOf(
    {
      kind: "assistant",
      key: `draft-${state.seq}`,
      messageId: null,
      content: reasoning ? "" : event.delta,
      reasoning: reasoning ? event.delta : null,
      streaming: true,
      truncated: false,
    },
    lane,
  );
  return { ...state, seq: state.seq + 1, items: insertInLane(state.items, draft) };
}

/** The final answer of a reply: the saved text, keeping reasoning that streamed before it. */
function finishReply(state: ChatState, event: Extract<Event, { type: "done" }>, lane: number | null): ChatState {
  const next = settleAssistant(state, event.message_id, event.content, null, lane);
  const items = next.items.map((i): ChatItem => {
    if (i.kind === "assistant" && i.messageId === event.message_id && i.reasoning === null) {
      const before = state.items.find(
        (b): b is AssistantItem =>
          b.kind === "assistant" && (b.messageId === event.message_id || (b.streaming && sameLane(b, lane))),
      );
      return before?.reasoning ? { ...i, reasoning: before.reasoning } : i;
    }
    return i;
  });
  return { ...next, items: endStreaming(items, lane) };
}

/** Events every frame shares: calls (found by id wherever their lane is) and their changes. */
function applyCall(state: ChatState, event: Event, frame: FrameOrigin | null): ChatState | null {
  const lane = frameLane(frame);
  switch (event.type) {
    case "tool_start":
      return updateTool(
        { ...state, items: endStreaming(state.items, lane) },
        event.tool_call_id,
        (t) => ({
          ...t,
          name: event.name,
          label: event.label_full || event.name,
          arguments: event.arguments,
          status: t.status === "pending" ? t.status : "running",
        }),
        () => newTool(event.tool_call_id, event.name, event.arguments, frame),
      );
    case "tool_progress":
      // Only a running call shows progress; a report that arrives after its end is stale.
      return updateTool(state, event.tool_call_id, (t) =>
        t.status === "running" ? { ...t, progress: { progress: event.progress, total: event.total, message: event.message } } : t,
      );
    case "tool_done":
      return updateTool(state, event.tool_call_id, (t) => ({
        ...t,
        status: "done",
        progress: null,
        result: event.result,
        resultChars: event.result.length,
        resultType: event.result_type,
        media: event.media,
        approval: null,
        question: null,
      }));
    case "tool_error":
      // A failed MCP call may still have returned media (recorded with it).
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, status: "error", error: event.error, media: event.media, progress: null, approval: null, question: null }));
    case "tool_cancelled":
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, status: "cancelled", progress: null, approval: null, question: null }));
    case "tool_rejected":
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, status: "rejected", error: event.reason, progress: null, approval: null, question: null }));
    case "agent_question":
      return updateTool(
        state,
        event.tool_call_id,
        (t) => ({
          ...t,
          status: "pending",
          question: {
            toolCallId: event.tool_call_id,
            title: event.title,
            question: event.question,
            suggestedAnswers: event.suggested_answers,
          },
        }),
        () => newTool(event.tool_call_id, ASK_TOOL, {}, frame),
      );
    case "clarification_resolved":
      return updateTool(state, event.tool_call_id, (t) => ({
        ...t,
        question: null,
        status: t.status === "pending" ? "running" : t.status,
      }));
    case "approval_requested":
      return updateTool(
        state,
        event.tool_call_id,
        (t) => ({ ...t, status: "pending", approval: approvalOf(event) }),
        () => newTool(event.tool_call_id, event.tool_name, event.arguments, frame),
      );
    case "approval_resolved":
      return updateTool(state, event.tool_call_id, (t) => ({
        ...t,
        approval: null,
        status: t.status === "pending" ? (event.approved ? "running" : "rejected") : t.status,
      }));
    case "file_changed":
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, diff: event.diff }));
    default:
      return null;
  }
}

/** An event of a sub-agent frame: its lane shows it; the root's state stays as it is. */
function applyInLane(state: ChatState, event: Event, frame: FrameOrigin): ChatState {
  const lane = frame.stack_id;
  const call = applyCall(state, event, frame);
  if (call) return call;
  switch (event.type) {
    case "user_message":
      return addUser(state, event.message_id, event.content, lane);
    case "token_delta":
      return streamDelta(state, event, lane);
    case "thinking":
      return spent(
        settleAssistant(state, event.message_id, event.content, event.reasoning, lane),
        lane,
        event.message_id,
        event.input_tokens,
        event.output_tokens,
        event.cost_usd,
      );
    case "interim_answer": {
      const next = settleAssistant(state, event.message_id, event.content, event.reasoning, lane);
      return spent({ ...next, items: endStreaming(next.items, lane) }, lane, event.message_id, event.input_tokens, event.output_tokens, event.cost_usd);
    }
    case "done": {
      const next = finishReply(state, event, lane);
      return spent({ ...next, items: endLane(next.items, lane, "done") }, lane, event.message_id, event.input_tokens, event.output_tokens, event.cost_usd);
    }
    case "turn_ended": {
      const said = turnEndNotice(event.outcome);
      const next = said ? notice(state, said.tone, said.text, lane) : state;
      const outcome = laneOutcome(event.outcome);
      const items = endStreaming(next.items, lane);
      return { ...next, items: outcome ? endLane(items, lane, outcome) : items };
    }
    case "llm_failed": {
      const next = notice(state, "error", llmFailedText(event), lane);
      return { ...next, items: endLane(endStreaming(next.items, lane), lane, "failed") };
    }
    case "model_fallback":
    case "model_retry":
    case "truncated":
    case "compacting":
    case "compaction_done":
      return sayInLane(state, event, lane);
    default:
      // Session-wide events (running, steers, questions) mean the same whatever frame sent them.
      return applyLive(state, event);
  }
}

function llmFailedText(event: Extract<Event, { type: "llm_failed" }>): string {
  const tried = event.tried.length > 0 ? ` (tried ${event.tried.join(", ")})` : "";
  return `The model could not be reached${tried}: ${event.last_error}`;
}

/** The notices a model request of any frame gives, in that frame's lane (null: the root). */
function sayInLane(
  state: ChatState,
  event: Extract<Event, { type: "model_fallback" | "model_retry" | "truncated" | "compacting" | "compaction_done" }>,
  lane: number | null,
): ChatState {
  switch (event.type) {
    case "model_fallback":
      return notice(dropDraft(state, lane), "warn", `Switched model from ${event.from} to ${event.to}: ${event.reason}`, lane);
    case "model_retry":
      return notice(dropDraft(state, lane), "info", `The model failed (${event.reason}); asking it again`, lane);
    case "truncated":
      return notice(
        state,
        "warn",
        event.output_tokens !== null
          ? `The reply was cut off at the output limit (${event.output_tokens.toLocaleString()} tokens).`
          : "The reply was cut off at the output limit.",
        lane,
      );
    case "compacting":
      return notice(state, "info", "Compacting the conversation…", lane);
    case "compaction_done":
      return notice(
        state,
        "info",
        `Conversation compacted: ${event.tokens_before.toLocaleString()} → ${event.tokens_after.toLocaleString()} tokens.`,
        lane,
      );
  }
}

function applyLive(state: ChatState, event: Event): ChatState {
  const call = applyCall(state, event, null);
  if (call) {
    // A call starting or asking for a decision means the turn runs.
    return event.type === "tool_start" || event.type === "approval_requested" || event.type === "agent_question"
      ? { ...call, running: true }
      : call;
  }
  switch (event.type) {
    case "user_message":
      return addUser(state, event.message_id, event.content);
    case "steer_queued":
      if (state.queued.some((q) => q.pendingInputId === event.pending_input_id)) return state;
      return { ...state, queued: [...state.queued, queuedItem(event.pending_input_id, event.content)] };
    case "steer_folded": {
      // Folded at a round boundary: everything before it in the history is already on screen.
      const rest = state.queued.filter((q) => q.pendingInputId !== event.pending_input_id);
      const briefing = briefingItem(event.message_id, event.content);
      if (briefing) {
        if (state.items.some((i) => i.key === briefing.key)) return { ...state, queued: rest };
        return { ...state, queued: rest, items: insertInLane(state.items, briefing) };
      }
      return addUser({ ...state, queued: rest }, event.message_id, event.content);
    }
    case "steers_discarded": {
      const dropped = state.queued.filter((q) => event.pending_input_ids.includes(q.pendingInputId));
      const kept = { ...state, queued: state.queued.filter((q) => !dropped.includes(q)) };
      return dropped.reduce((s, q) => notice(s, "info", `Not sent (stopped before it was read): “${q.content}”`), kept);
    }
    case "interim_answer": {
      // An answer the turn goes on from (messages arrived while it was written): close it here.
      const next = settleAssistant(state, event.message_id, event.content, event.reasoning, null);
      return {
        ...next,
        items: endStreaming(next.items, null),
        inputTokens: event.input_tokens ?? state.inputTokens,
        outputTokens: event.output_tokens ?? state.outputTokens,
      };
    }
    case "turn_running":
      return event.running
        ? { ...state, running: true }
        : { ...state, running: false, items: endStreaming(state.items) };
    case "token_delta":
      return { ...streamDelta(state, event, null), running: true };
    case "thinking": {
      const next = settleAssistant(state, event.message_id, event.content, event.reasoning, null);
      return {
        ...next,
        running: true,
        inputTokens: event.input_tokens ?? state.inputTokens,
        outputTokens: event.output_tokens ?? state.outputTokens,
      };
    }
    case "done":
      return {
        ...finishReply(state, event, null),
        running: false,
        inputTokens: event.input_tokens ?? state.inputTokens,
        outputTokens: event.output_tokens ?? state.outputTokens,
      };
    case "llm_failed": {
      const next = notice(state, "error", llmFailedText(event));
      return { ...next, running: false, items: endStreaming(next.items) };
    }
    case "turn_ended": {
      const said = turnEndNotice(event.outcome);
      const next = said ? notice(state, said.tone, said.text) : state;
      return { ...next, running: false, items: endStreaming(next.items) };
    }
    case "compaction_done":
      // The last reply's usage described the longer conversation; until the next reply, the
      // engine's estimate of the compacted one is the context.
      return { ...sayInLane(state, event, null), inputTokens: event.tokens_after, outputTokens: null };
    case "model_fallback":
    case "model_retry":
    case "truncated":
    case "compacting":
      return sayInLane(state, event, null);
    case "new_session":
    case "sessions_changed":
    // The chat answers a resync by reloading from the engine (useChat), not event by event.
    case "resync":
    // The transports keep where their stream starts to themselves.
    case "subscribed":
    case "config_reloaded":
    case "agents_changed":
    // The chat's bypass strip reads its own query (see BypassList).
    case "bypasses_changed":
    // Calls and their questions are handled above (applyCall).
    case "agent_question":
    case "clarification_resolved":
    case "tool_start":
    case "tool_progress":
    case "tool_done":
    case "tool_error":
    case "tool_cancelled":
    case "tool_rejected":
    case "approval_requested":
    case "approval_resolved":
    case "file_changed":
    // An interrupted call's flag is read by its own query (useInterruptedCalls).
    case "interrupted_call":
    // A job's run is shown by the Jobs page; its own session's rows arrive as for any session.
    case "job_run_update":
    case "job_changed":
    // Notices have their own list above the home chat (useHomeNotices).
    case "home_notice":
    case "home_notice_dismissed":
    // The briefing itself arrives as its input's fold and the agent's answer.
    case "briefing_delivered":
    // A server's question is a form in the inbox (useInbox).
    case "elicitation_requested":
    case "elicitation_resolved":
      return state;
    case "task_update":
      return taskUpdate(state, event);
  }
}

/** A task's card: created at its first update, then moved through its states in place. A
 *  dropped second delivery changes nothing the user sees. */
function taskUpdate(state: ChatState, event: Extract<Event, { type: "task_update" }>): ChatState {
  if (event.state === "delivery_dropped") return state;
  const index = state.items.findIndex((i) => i.kind === "task" && i.taskId === event.task_id);
  if (index < 0) {
    const item: TaskItem = {
      kind: "task",
      key: `task-${event.task_id}`,
      taskId: event.task_id,
      childSessionId: event.child_session_id,
      label: event.label,
      state: event.state,
      ended: TASK_ENDS.includes(event.state) ? event.state : null,
      report: event.report,
    };
    return { ...state, items: insertInLane(state.items, item) };
  }
  const old = state.items[index] as TaskItem;
  const ended = TASK_ENDS.includes(event.state) ? event.state : event.state === "delivered" ? old.ended : null;
  // A continued task starts over: its old report no longer says where it is.
  const restarted = event.state === "queued" || event.state === "running";
  const report = restarted ? null : (event.report ?? old.report);
  const updated: TaskItem = { ...old, state: event.state, ended, report };
  const items = [...state.items];
  items[index] = updated;
  return { ...state, items };
}
