// The chat view model: built from a window of the session tree, grown by earlier pages as the
// user scrolls up, and advanced by live engine events.
import type { DebugMessage, EndedTurn, Event, FileDiff, ItemRef, ResultType, SessionDetail, SessionWindow, TurnEnd } from "./bindings";
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

export type UserItem = { kind: "user"; key: string; messageId: number; content: string; truncated?: boolean };
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
  /** The change a write call made, once it is done. */
  diff: FileDiff | null;
  depth: number;
};
export type NoticeItem = { kind: "notice"; key: string; tone: "info" | "warn" | "error"; text: string };
export type ChatItem = UserItem | AssistantItem | ToolItem | NoticeItem;

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
    approval: m.status === "pending" ? approvalFor(m.tool_call_id, m.name, m.arguments) : null,
    diff: m.diff,
    depth: m.depth,
  };
}

/** The chat item a tree row shows as, if any: synthetic rows and sub-agent bookkeeping are left out. */
export function chatItem(m: DebugMessage): ChatItem | null {
  switch (m.kind) {
    case "user":
      return m.is_synthetic ? null : { ...userItem(m.message_id, m.content), truncated: m.truncated };
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
 * (so a reload shows why turns ended), and the last token counts reported among them.
 */
function fromRows(
  rows: DebugMessage[],
  turnEnds: EndedTurn[],
): { items: ChatItem[]; inputTokens: number | null; outputTokens: number | null } {
  const items: ChatItem[] = [];
  let inputTokens: number | null = null;
  let outputTokens: number | null = null;
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
    if ((m.kind === "thinking" || m.kind === "assistant") && m.input_tokens !== null) inputTokens = m.input_tokens;
    if ((m.kind === "thinking" || m.kind === "assistant") && m.output_tokens !== null) outputTokens = m.output_tokens;
    const item = chatItem(m);
    if (item) items.push(item);
  }
  flushEnds(null);
  return { items, inputTokens, outputTokens };
}

/** The whole conversation from the full tree (kept for callers that read it all). */
export function chatFromDetail(detail: SessionDetail, running: boolean): ChatState {
  const state = emptyChat(detail.session.id, running);
  const { items, inputTokens, outputTokens } = fromRows(detail.messages, detail.turn_ends);
  state.queued = detail.pending_inputs.map((p) => queuedItem(p.id, p.content));
  return { ...state, items, inputTokens, outputTokens };
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
  const { items, inputTokens, outputTokens } = fromRows(page.items, page.turn_ends);
  return {
    ...state,
    items,
    inputTokens,
    outputTokens,
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
  const { items } = fromRows(page.items, page.turn_ends);
  return {
    ...state,
    items: [...withoutKnown(state, items), ...state.items],
    hasMoreBefore: page.has_more_before,
    first: edge(page.items, 0) ?? state.first,
  };
}

/** A later page (read after the last loaded row) goes below. */
export function appendChat(state: ChatState, page: SessionWindow): ChatState {
  if (page.session.id !== state.sessionId) return state;
  const { items } = fromRows(page.items, page.turn_ends);
  return {
    ...state,
    items: [...state.items, ...withoutKnown(state, items)],
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
        return { ...i, arguments: whole.arguments, result: whole.result, error: whole.error, diff: whole.diff ?? i.diff, truncated: false };
      }
      return whole;
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

function addUser(state: ChatState, messageId: number, content: string): ChatState {
  if (state.items.some((i) => i.kind === "user" && i.messageId === messageId)) return state;
  return { ...state, items: [...state.items, userItem(messageId, content)] };
}

function notice(state: ChatState, tone: NoticeItem["tone"], text: string): ChatState {
  return {
    ...state,
    seq: state.seq + 1,
    items: [...state.items, { kind: "notice", key: `notice-${state.seq}`, tone, text }],
  };
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
  if (index < 0) return create ? { ...state, items: [...state.items, change(create())] } : state;
  const items = state.items.slice();
  items[index] = change(items[index] as ToolItem);
  return { ...state, items };
}

function newTool(toolCallId: number, name: string, args: unknown): ToolItem {
  return {
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
    diff: null,
    depth: 0,
  };
}

/** Drops the draft a failed model request streamed: the retry or the next model streams anew. */
function dropDraft(state: ChatState): ChatState {
  return { ...state, items: state.items.filter((i) => !(i.kind === "assistant" && i.streaming)) };
}

function endStreaming(items: ChatItem[]): ChatItem[] {
  return items.map((i) => (i.kind === "assistant" && i.streaming ? { ...i, streaming: false } : i));
}

/** Puts the authoritative text of a saved assistant message in place of the streamed draft. */
function settleAssistant(state: ChatState, messageId: number, content: string, reasoning: string | null): ChatState {
  const draftIndex = state.items.findIndex((i) => i.kind === "assistant" && i.streaming);
  const savedIndex = state.items.findIndex((i) => i.kind === "assistant" && i.messageId === messageId);
  const items = state.items.slice();
  const settled: AssistantItem = {
    kind: "assistant",
    key: `msg-${messageId}`,
    messageId,
    content,
    reasoning,
    streaming: false,
    truncated: false,
  };
  const visible = content.length > 0 || (reasoning !== null && reasoning.length > 0);
  if (savedIndex >= 0) {
    items[savedIndex] = settled;
    if (draftIndex >= 0) items.splice(draftIndex, 1);
  } else if (draftIndex >= 0) {
    if (visible) items[draftIndex] = settled;
    else items.splice(draftIndex, 1);
  } else if (visible) {
    items.push(settled);
  }
  return { ...state, items };
}

/**
 * Applies a live event. While the window stops before the newest rows (after a jump), items it
 * would add are left out: they are rows the user reaches by going back to the latest.
 */
export function applyEvent(state: ChatState, event: Event): ChatState {
  const next = trackAwaiting(applyLive(state, event), event);
  if (!state.hasMoreAfter || next.items === state.items) return next;
  const known = new Set(state.items.map((i) => i.key));
  return { ...next, items: next.items.filter((i) => known.has(i.key)) };
}

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

function applyLive(state: ChatState, event: Event): ChatState {
  switch (event.type) {
    case "user_message":
      return addUser(state, event.message_id, event.content);
    case "steer_queued":
      if (state.queued.some((q) => q.pendingInputId === event.pending_input_id)) return state;
      return { ...state, queued: [...state.queued, queuedItem(event.pending_input_id, event.content)] };
    case "steer_folded": {
      // Folded at a round boundary: everything before it in the history is already on screen.
      const rest = state.queued.filter((q) => q.pendingInputId !== event.pending_input_id);
      return addUser({ ...state, queued: rest }, event.message_id, event.content);
    }
    case "steers_discarded": {
      const dropped = state.queued.filter((q) => event.pending_input_ids.includes(q.pendingInputId));
      const kept = { ...state, queued: state.queued.filter((q) => !dropped.includes(q)) };
      return dropped.reduce((s, q) => notice(s, "info", `Not sent (stopped before it was read): “${q.content}”`), kept);
    }
    case "interim_answer": {
      // An answer the turn goes on from (messages arrived while it was written): close it here.
      const next = settleAssistant(state, event.message_id, event.content, event.reasoning);
      return {
        ...next,
        items: endStreaming(next.items),
        inputTokens: event.input_tokens ?? state.inputTokens,
        outputTokens: event.output_tokens ?? state.outputTokens,
      };
    }
    case "turn_running":
      return event.running
        ? { ...state, running: true }
        : { ...state, running: false, items: endStreaming(state.items) };
    case "token_delta": {
      const items = state.items.slice();
      const last = items[items.length - 1];
      const reasoning = event.kind === "reasoning";
      if (last && last.kind === "assistant" && last.streaming) {
        items[items.length - 1] = reasoning
          ? { ...last, reasoning: (last.reasoning ?? "") + event.delta }
          : { ...last, content: last.content + event.delta };
        return { ...state, running: true, items };
      }
      const draft: AssistantItem = {
        kind: "assistant",
        key: `draft-${state.seq}`,
        messageId: null,
        content: reasoning ? "" : event.delta,
        reasoning: reasoning ? event.delta : null,
        streaming: true,
        truncated: false,
      };
      return { ...state, running: true, seq: state.seq + 1, items: [...items, draft] };
    }
    case "thinking": {
      const next = settleAssistant(state, event.message_id, event.content, event.reasoning);
      return {
        ...next,
        running: true,
        inputTokens: event.input_tokens ?? state.inputTokens,
        outputTokens: event.output_tokens ?? state.outputTokens,
      };
    }
    case "done": {
      const next = settleAssistant(state, event.message_id, event.content, null);
      // Keep reasoning that streamed or came with an earlier record of this message.
      const items = next.items.map((i): ChatItem => {
        if (i.kind === "assistant" && i.messageId === event.message_id && i.reasoning === null) {
          const before = state.items.find(
            (b): b is AssistantItem => b.kind === "assistant" && (b.messageId === event.message_id || b.streaming),
          );
          return before?.reasoning ? { ...i, reasoning: before.reasoning } : i;
        }
        return i;
      });
      return {
        ...next,
        items: endStreaming(items),
        running: false,
        inputTokens: event.input_tokens ?? state.inputTokens,
        outputTokens: event.output_tokens ?? state.outputTokens,
      };
    }
    case "tool_start":
      return updateTool(
        { ...state, running: true, items: endStreaming(state.items) },
        event.tool_call_id,
        (t) => ({
          ...t,
          name: event.name,
          label: event.label_full || event.name,
          arguments: event.arguments,
          status: t.status === "pending" ? t.status : "running",
        }),
        () => newTool(event.tool_call_id, event.name, event.arguments),
      );
    case "tool_done":
      return updateTool(state, event.tool_call_id, (t) => ({
        ...t,
        status: "done",
        result: event.result,
        resultChars: event.result.length,
        resultType: event.result_type,
        approval: null,
      }));
    case "tool_error":
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, status: "error", error: event.error, approval: null }));
    case "tool_cancelled":
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, status: "cancelled", approval: null }));
    case "tool_rejected":
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, status: "rejected", error: event.reason, approval: null }));
    case "approval_requested":
      return updateTool(
        { ...state, running: true },
        event.tool_call_id,
        (t) => ({ ...t, status: "pending", approval: approvalOf(event) }),
        () => newTool(event.tool_call_id, event.tool_name, event.arguments),
      );
    case "approval_resolved":
      return updateTool(state, event.tool_call_id, (t) => ({
        ...t,
        approval: null,
        status: t.status === "pending" ? (event.approved ? "running" : "rejected") : t.status,
      }));
    case "model_fallback":
      return notice(dropDraft(state), "warn", `Switched model from ${event.from} to ${event.to}: ${event.reason}`);
    case "model_retry":
      return notice(dropDraft(state), "info", `The model failed (${event.reason}); asking it again`);
    case "llm_failed": {
      const tried = event.tried.length > 0 ? ` (tried ${event.tried.join(", ")})` : "";
      const next = notice(state, "error", `The model could not be reached${tried}: ${event.last_error}`);
      return { ...next, running: false, items: endStreaming(next.items) };
    }
    case "turn_ended": {
      const said = turnEndNotice(event.outcome);
      const next = said ? notice(state, said.tone, said.text) : state;
      return { ...next, running: false, items: endStreaming(next.items) };
    }
    case "truncated":
      return notice(
        state,
        "warn",
        event.output_tokens !== null
          ? `The reply was cut off at the output limit (${event.output_tokens.toLocaleString()} tokens).`
          : "The reply was cut off at the output limit.",
      );
    case "compacting":
      return notice(state, "info", "Compacting the conversation…");
    case "compaction_done": {
      const next = notice(
        state,
        "info",
        `Conversation compacted: ${event.tokens_before.toLocaleString()} → ${event.tokens_after.toLocaleString()} tokens.`,
      );
      // The last reply's usage described the longer conversation; until the next reply, the
      // engine's estimate of the compacted one is the context.
      return { ...next, inputTokens: event.tokens_after, outputTokens: null };
    }
    case "file_changed":
      return updateTool(state, event.tool_call_id, (t) => ({ ...t, diff: event.diff }));
    case "new_session":
    case "sessions_changed":
    // The chat answers a resync by reloading from the engine (useChat), not event by event.
    case "resync":
    case "config_reloaded":
    // The chat's bypass strip reads its own query (see BypassList).
    case "bypasses_changed":
    // Clarification questions are answered from the Inbox; the chat has no card for them yet.
    case "agent_question":
    case "clarification_resolved":
    // An interrupted call's flag is read by its own query (useInterruptedCalls).
    case "interrupted_call":
      return state;
  }
}
