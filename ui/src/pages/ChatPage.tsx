// #chat/{source}: the live conversation of a source — echoed messages, streamed replies, tool cards.
import { useQuery } from "@tanstack/react-query";
import { memo, useCallback, useMemo, useState } from "react";
import {
  HOME_SOURCE,
  queuedReason,
  type ItemRef,
  type QueuedItem,
  toApiError,
  useBackend,
  useChat,
  useAnswer,
  useDecide,
  useInbox,
  useInterruptedCalls,
  useReconcileCall,
  type ApprovalInfo,
  type Backend,
  type ChatItem,
  type InboxItem,
  type InterruptedCall,
  type SessionUsage,
} from "../backend";
import { ApprovalCard, type ApprovalView } from "../components/ApprovalCard";
import { BypassList } from "../components/BypassList";
import { Markdown } from "../components/Markdown";
import { ErrorView, Loading } from "../components/StatusViews";
import { QuestionCard } from "../components/QuestionCard";
import { InterruptedCallBar } from "../components/InterruptedCallBar";
import { ToolCard } from "../components/ToolCard";
import { Visible } from "../components/visible";
import { laneViews, visibleItems, type LaneItem, type LaneView, type SpendSum } from "../backend/lanes";
import type { TaskItem } from "../backend/chat";
import { AgentPicker } from "./chat/AgentPicker";
import { HomeNotices } from "./chat/HomeNotices";
import { Composer } from "./chat/Composer";
import { LaneHead, LaneRow, tokenPair, usd } from "./chat/Lane";
import { parseSlash, SLASH_COMMANDS } from "./chat/slash";
import { VirtualLog } from "./chat/VirtualLog";

/** A card rebuilt from history has no diff of its own; the inbox holds the reviewed one, the
 * path the call really acts on (`../x` or a link resolved by the engine, which the model's own
 * argument may hide), and the call's category and MCP server (which bypass scopes fit it). */
function withInbox(a: ApprovalInfo, item: InboxItem | undefined): ApprovalView {
  if (!item) return a;
  return {
    ...a,
    // A live request said its kind; a card rebuilt from history takes the stored one.
    kind: a.requestId !== null ? a.kind : item.mcp_server ? "mcp" : item.kind,
    mcp: a.mcp ?? (item.mcp_server ? { server: item.mcp_server, tool: item.tool_name } : null),
    // The stored path is the resolved one (what the call really touches).
    path: item.path ?? a.path,
    diff: a.diff ?? item.diff,
    command: a.command ?? item.command,
    workdir: a.workdir ?? item.workdir,
    toolCategory: item.tool_category,
    mcpServer: item.mcp_server,
  };
}

/** A message a window cut to a preview: the rest is fetched on demand. */
function MoreText({ onLoad }: { onLoad: () => Promise<void> }) {
  return (
    <button type="button" className="button button-small button-ghost" onClick={() => void onLoad()}>
      Show the whole message
    </button>
  );
}

/** How a row sits in the sub-agent lanes: its depth, the lane's label and state. */
type LaneProps = {
  /** 0 for the root frame's rows. */
  depth: number;
  /** The origin label of the lane the row is in; null for the root frame. */
  origin: string | null;
  /** For a lane head: how the lane stands. */
  view: LaneView | undefined;
  /** For a lane head: whether its rows are shown. */
  open: boolean;
  onToggle: (lane: number) => void;
  /** For a call that spawned sub-agents: the tokens they spent, rolled up. */
  spend: SpendSum | undefined;
};

/** One conversation row; only rows on screen are rendered, and only when they change. */
const Item = memo(function Item(props: { item: ChatItem; approval: InboxItem | undefined; interrupted: InterruptedCall | undefined; onExpand: (ref: ItemRef) => Promise<void> } & LaneProps) {
  const { item } = props;
  return (
    <LaneRow depth={props.depth}>
      {item.kind === "lane" ? (
        <LaneHead head={item} view={props.view} open={props.open} onToggle={props.onToggle} />
      ) : (
        <ItemBody {...props} item={item} />
      )}
    </LaneRow>
  );
});

function ItemBody({
  item,
  approval,
  interrupted,
  onExpand,
  origin,
  spend,
}: {
  item: Exclude<ChatItem, LaneItem>;
  /** The inbox's record of this call when it waits for a decision. */
  approval: InboxItem | undefined;
  /** The call's flag when a restart cut it off while it ran. */
  interrupted: InterruptedCall | undefined;
  onExpand: (ref: ItemRef) => Promise<void>;
} & LaneProps) {
  // Refreshes the inbox and the bypass list too, so a bypass granted here shows at once.
  const decide = useDecide();
  const answer = useAnswer();
  const reconcile = useReconcileCall();
  switch (item.kind) {
    case "user":
      // In a lane the "user" row is the task the calling agent gave, not something the reader
      // typed: it says so and does not look like the reader's own bubble.
      if (origin !== null) {
        return (
          <div className="bubble bubble-task">
            <p className="bubble-caption">Task from the calling agent</p>
            <p className="bubble-text">{item.content}</p>
            {item.truncated ? <MoreText onLoad={() => onExpand({ type: "message", id: item.messageId })} /> : null}
          </div>
        );
      }
      return (
        <div className="bubble bubble-user">
          <p className="bubble-text">{item.content}</p>
          {item.truncated ? <MoreText onLoad={() => onExpand({ type: "message", id: item.messageId })} /> : null}
        </div>
      );
    case "assistant":
      return (
        <div className={`bubble bubble-assistant${item.streaming ? " is-streaming" : ""}`} aria-busy={item.streaming}>
          {item.reasoning ? (
            <details className="reasoning">
              <summary>Reasoning</summary>
              <pre className="prose-pre">{item.reasoning}</pre>
            </details>
          ) : null}
          {item.content ? <Markdown text={item.content} /> : null}
          {item.truncated && item.messageId !== null ? (
            <MoreText onLoad={() => onExpand({ type: "message", id: item.messageId as number })} />
          ) : null}
        </div>
      );
    case "tool":
      return (
        <div className="chat-tool">
          <ToolCard tool={item} onLoadAll={() => onExpand({ type: "tool", id: item.toolCallId })}>
            {spend ? <p className="tokens tool-spend">Sub-agent tokens: {tokenPair(spend.input, spend.output)}{usd(spend.cost)}</p> : null}
            {item.approval ? (
              <ApprovalCard approval={withInbox(item.approval, approval)} origin={origin} onDecide={decide} />
            ) : null}
            {interrupted ? <InterruptedCallBar call={interrupted} onReconcile={reconcile} /> : null}
            {item.question ? <QuestionCard question={item.question} origin={origin} onAnswer={answer} /> : null}
          </ToolCard>
        </div>
      );
    case "notice":
      return (
        <div className={`notice notice-${item.tone}`} role={item.tone === "error" ? "alert" : "status"}>
          {item.text}
        </div>
      );
    case "task":
      return <TaskCard task={item} />;
  }
}

/** What a task card says about each state. */
const TASK_STATES: Record<TaskItem["state"], string> = {
  queued: "waiting for a slot",
  running: "running",
  done: "finished",
  failed: "failed",
  cancelled: "stopped",
  delivered: "reported",
  delivery_dropped: "reported",
};

/** An async task's card: its label (opening its session), where it is, its report once it
 *  ended, and what the user can do: stop it while it runs, continue it once it failed or was
 *  stopped (its updates arrive as task events and move the card). */
function TaskCard({ task }: { task: TaskItem }) {
  const backend = useBackend();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const bad = task.ended === "failed" || task.ended === "cancelled";
  const where = task.state === "delivered" && task.ended ? `${TASK_STATES[task.ended]}, reported` : TASK_STATES[task.state];
  const act = (what: "stop" | "continue") => {
    setError(null);
    setBusy(true);
    const done =
      what === "stop"
        ? backend.stop_turn({ session_id: task.childSessionId }).then(({ stopped }) => {
            if (!stopped) setError("The task was not running any more.");
          })
        : backend.continue_task({ session_id: task.childSessionId }).then(() => undefined);
    done
      .catch((e: unknown) => setError(`Could not ${what} task ${task.label}: ${toApiError(e).message}`))
      .finally(() => setBusy(false));
  };
  return (
    <div className={`notice task-card${bad ? " notice-warn" : ""}`} role="status" data-task={task.taskId}>
      <a className="badge" href={`#session/${task.childSessionId}`} title="Open the task's session">
        task <Visible text={task.label} mode="line" />
      </a>{" "}
      {where}
      {task.state === "running" ? (
        <button type="button" className="button button-ghost task-action" disabled={busy} onClick={() => act("stop")}>
          Stop task {task.label}
        </button>
      ) : null}
      {bad ? (
        <button type="button" className="button button-ghost task-action" disabled={busy} onClick={() => act("continue")}>
          Continue task {task.label}
        </button>
      ) : null}
      {task.report ? <p className="task-report">{task.report}</p> : null}
      {error ? <p role="alert">{error}</p> : null}
    </div>
  );
}

/** A message waiting to be folded into the conversation, and why it waits. */
function QueuedBubble({ content, reason }: { content: string; reason: string }) {
  return (
    <div className="bubble bubble-user is-queued">
      <p className="bubble-text">{content}</p>
      <span className="badge bubble-queued">{reason}</span>
    </div>
  );
}

/** A row of the log: a conversation item, or a message queued below it. */
type Entry = { key: string; kind: string; item: ChatItem | null; queued: QueuedItem | null };

const entryKey = (e: Entry) => e.key;
const entryKind = (e: Entry) => e.kind;

/** Calls of the session waiting for a decision, oldest first, loaded or not. */
function pendingCalls(items: ChatItem[], awaiting: number[]): number[] {
  const loaded = items.flatMap((i) => (i.kind === "tool" && i.status === "pending" ? [i.toolCallId] : []));
  return [...new Set([...awaiting, ...loaded])].sort((a, b) => a - b);
}

function ContextMeter({
  input,
  output,
  window,
}: {
  input: number | null;
  output: number | null;
  window: number | null;
}) {
  if (input === null) return null;
  const share = window ? Math.min(100, Math.round((input / window) * 100)) : null;
  return (
    <span
      className="context-meter"
      title={
        window
          ? `The conversation fills ${input.toLocaleString()} of the model's ${window.toLocaleString()}-token window`
          : "Tokens of the conversation the model receives with the next request, and of the last reply"
      }
    >
      Context {input.toLocaleString()}
      {window ? ` / ${window.toLocaleString()}` : ""} tok
      {share !== null ? (
        <span className={`meter${share >= 80 ? " meter-high" : ""}`} aria-hidden="true">
          <span className="meter-fill" style={{ width: `${share}%` }} />
        </span>
      ) : null}
      {output !== null ? <span className="muted"> · ↓{output.toLocaleString()}</span> : null}
    </span>
  );
}

const tok = (n: number) => `${n.toLocaleString()} tok`;

/** What the session's model replies spent, sub-agents included, as the engine counts it. */
function SessionSpend({ usage }: { usage: SessionUsage | undefined }) {
  if (!usage || usage.replies === 0) return null;
  return (
    <span className="tokens session-spend" title="Tokens of every model reply of this session, sub-agents included">
      Session {tokenPair(usage.input_tokens_total, usage.output_tokens_total)} tok
      {usage.cost_usd !== null ? ` · $${usage.cost_usd.toFixed(4)}` : ""}
    </span>
  );
}

/** `/context`: the conversation the next request carries against the model's window. */
export function describeContext(u: SessionUsage): string {
  if (u.context_tokens === null) return "No model reply in this session yet.";
  let text = `Context: ${u.context_estimated ? "about " : ""}${tok(u.context_tokens)}`;
  if (u.context_window) {
    const share = Math.round((u.context_tokens / u.context_window) * 100);
    text += ` — ${share}% of the ${tok(u.context_window)} window`;
  }
  if (u.context_estimated) return `${text} (estimated: no model reply since the last compaction).`;
  if (u.last_input_tokens !== null) {
    text += `. Last request: ↑${tok(u.last_input_tokens)}`;
    if (u.last_output_tokens !== null) text += ` · ↓${tok(u.last_output_tokens)}`;
    if (u.model) text += ` (${u.model})`;
  }
  return `${text}.`;
}

/** `/cost`: what the provider reported for this session's replies. */
export function describeCost(u: SessionUsage): string {
  const totals = `${u.replies} model ${u.replies === 1 ? "reply" : "replies"}, ↑${tok(u.input_tokens_total)} · ↓${tok(u.output_tokens_total)}`;
  if (u.cost_usd === null) return `No cost recorded: the provider reported no prices (${totals}).`;
  const unpriced = u.replies - u.priced_replies;
  const note = unpriced > 0 ? `; ${unpriced} without a reported price` : "";
  return `This session cost $${u.cost_usd.toFixed(4)} (${totals}${note}).`;
}

async function runSlash(
  backend: Backend,
  chat: ReturnType<typeof useChat>,
  source: string,
  name: string,
  args: string,
): Promise<void> {
  if (name === "new") return void (await chat.newSession());
  if (name === "stop") return void (await chat.stop());
  if (name === "sethome") {
    try {
      const home = await backend.set_home_source({ source });
      chat.notice("info", `Briefings from jobs and ticks now come to this chat (source “${home.source}”).`);
    } catch (e) {
      chat.notice("error", `/sethome failed: ${toApiError(e).message}`);
    }
    return;
  }
  const sessionId = chat.state.sessionId;
  if (sessionId === null) return chat.notice("warn", "There is no session yet: send a message first.");
  try {
    if (name === "compact") {
      chat.notice("info", args ? `Compacting, focused on: ${args}` : "Compacting the conversation…");
      const r = await backend.compact_session({ session_id: sessionId, focus: args || null });
      // A compaction that happened is announced by its own event (with the token counts).
      if (!r.compacted) chat.notice("info", "Nothing to compact yet: the conversation is still short.");
    } else if (name === "context") {
      chat.notice("info", describeContext(await backend.session_usage({ session_id: sessionId })));
    } else if (name === "resettools") {
      const { revoked: n } = await backend.reset_tool_groups({ session_id: sessionId });
      chat.notice(
        "info",
        n === 0
          ? "No tool groups were active in this session."
          : `Revoked ${n} tool ${n === 1 ? "group" : "groups"}; the agent must activate them again to use them.`,
      );
    } else if (name === "cost") {
      chat.notice("info", describeCost(await backend.session_usage({ session_id: sessionId })));
    } else {
      chat.notice("info", `/${name} is not available yet in this build.`);
    }
  } catch (e) {
    chat.notice("error", `/${name} failed: ${toApiError(e).message}`);
  }
}

export function ChatPage({ source, focus = null }: { source: string; focus?: ItemRef | null }) {
  const backend = useBackend();
  const chat = useChat(source, focus);
  const inbox = useInbox();
  const { state } = chat;
  // Lanes the reader folded (by frame); a new lane starts open.
  const [folded, setFolded] = useState<ReadonlySet<number>>(() => new Set());
  const toggleLane = useCallback(
    (lane: number) =>
      setFolded((f) => {
        const next = new Set(f);
        if (!next.delete(lane)) next.add(lane);
        return next;
      }),
    [],
  );
  const lanes = useMemo(() => laneViews(state.items, state.spend), [state.items, state.spend]);
  const heads = useMemo(
    () => new Map(state.items.flatMap((i) => (i.kind === "lane" ? [[i.lane, i] as const] : []))),
    [state.items],
  );
  // Read after each answer and compaction: the window, and the context as the engine counts it
  // (usage reported before a compaction no longer describes what the model receives).
  // Sub-agent replies change the session's totals, not the root's context: count them too.
  const childReplies = Object.keys(state.spend).length;
  const usage = useQuery({
    queryKey: ["session_usage", state.sessionId, state.inputTokens, childReplies],
    queryFn: () => backend.session_usage({ session_id: state.sessionId as number }),
    enabled: state.sessionId !== null,
    placeholderData: (previous) => previous,
  });
  const entries = useMemo<Entry[]>(
    () => [
      ...visibleItems(state.items, folded).map((item) => ({ key: item.key, kind: item.kind, item, queued: null })),
      // Below the conversation until the engine folds them in, in the order they were sent.
      ...state.queued.map((q) => ({ key: q.key, kind: "user", item: null, queued: q })),
    ],
    [state.items, state.queued, folded],
  );
  const inboxItems = inbox.data?.items;
  const interrupted = useInterruptedCalls(state.sessionId);
  const waitingReason = queuedReason(state);
  const renderRow = useCallback(
    (e: Entry) => {
      if (!e.item) return <QueuedBubble content={e.queued?.content ?? ""} reason={waitingReason} />;
      const item = e.item;
      const head = item.lane === undefined ? undefined : heads.get(item.lane);
      return (
        <Item
          item={item}
          approval={item.kind === "tool" && item.approval ? inboxItems?.find((i) => i.tool_call_id === item.toolCallId) : undefined}
          interrupted={item.kind === "tool" ? interrupted.get(item.toolCallId) : undefined}
          onExpand={chat.expand}
          depth={head?.depth ?? 0}
          origin={head?.label ?? null}
          view={item.kind === "lane" ? lanes.lanes.get(item.lane) : undefined}
          open={item.kind === "lane" && !folded.has(item.lane)}
          onToggle={toggleLane}
          spend={item.kind === "tool" ? lanes.calls.get(item.toolCallId) : undefined}
        />
      );
    },
    [inboxItems, interrupted, chat.expand, waitingReason, heads, lanes, folded, toggleLane],
  );
  const pending = pendingCalls(state.items, state.awaiting);

  const runCommand = async (text: string): Promise<boolean> => {
    const cmd = parseSlash(text);
    if (!cmd) return true;
    const known = SLASH_COMMANDS.find((c) => c.name === cmd.name);
    if (!known) {
      chat.notice("warn", `Unknown command /${cmd.name}. Commands: ${SLASH_COMMANDS.map((c) => `/${c.name}`).join(" ")}`);
      return true;
    }
    await runSlash(backend, chat, source, cmd.name, cmd.args);
    return true;
  };

  const submit = async (text: string): Promise<boolean> => {
    if (text.startsWith("/")) return runCommand(text);
    try {
      await chat.send(text);
      return true;
    } catch (e) {
      chat.notice("error", `Not sent: ${(e as { message?: string }).message ?? "unknown error"}`);
      return false;
    }
  };

  let body;
  if (chat.status === "loading") {
    body = <Loading label="Loading the conversation…" />;
  } else if (chat.status === "error") {
    body = <ErrorView title="Could not open the chat" error={chat.error} onRetry={chat.retry} />;
  } else if (state.items.length === 0 && state.queued.length === 0) {
    body = (
      <div className="chat-empty state state-empty">
        <p className="state-title">No messages yet</p>
        <p className="state-body">Write below to start. Type / for commands.</p>
      </div>
    );
  } else {
    body = null;
  }

  return (
    <section className="page page-chat" aria-labelledby="page-title">
      <header className="page-header page-header-row chat-header">
        <h1 id="page-title">Chat</h1>
        <span className="muted">
          Conversation of the “{source}” source
          {state.sessionId !== null ? (
            <>
              {" · "}
              <a href={`#session/${state.sessionId}`}>session #{state.sessionId}</a>
            </>
          ) : null}
        </span>
        <span className="chat-header-end">
          <AgentPicker sessionId={state.sessionId} agentId={chat.agentId} disabled={chat.status !== "ready"} onChoose={chat.newSession} />
          {state.running ? (
            <span className="status status-running" role="status">
              working…
            </span>
          ) : null}
          <ContextMeter
            input={usage.data && !usage.isPlaceholderData ? (usage.data.context_tokens ?? state.inputTokens) : state.inputTokens}
            output={state.outputTokens}
            window={usage.data?.context_window ?? null}
          />
          <SessionSpend usage={usage.data} />
        </span>
      </header>
      {source === HOME_SOURCE ? <HomeNotices /> : null}
      <div className="chat-scroll">
        {body}
        <VirtualLog
          rows={entries}
          rowKey={entryKey}
          rowKind={entryKind}
          renderRow={renderRow}
          hasMoreBefore={state.hasMoreBefore}
          hasMoreAfter={state.hasMoreAfter}
          onReachTop={() => void chat.loadEarlier()}
          onReachBottom={() => void chat.loadLater()}
          focus={state.highlight}
          generation={state.generation}
          paging={chat.paging}
          pendingApproval={pending.length > 0 ? { type: "tool", id: pending[0] as number } : null}
          onJump={(target) => (target ? chat.jumpTo(target) : chat.jumpToLatest())}
          label="Conversation"
          className="chat-log"
        />
      </div>
      <BypassList sessionId={state.sessionId} />
      <Composer
        running={state.running}
        waiting={!state.running && pending.length > 0}
        disabled={chat.status !== "ready"}
        onSubmit={submit}
        onStop={() => void chat.stop()}
      />
    </section>
  );
}
