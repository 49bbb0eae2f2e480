// #session/{id}: the read-only debug tree of one session, synthetic rows and sub-agents included,
// read as a window of the newest rows and earlier pages as the user scrolls up (#session/{id}?
// message=ID opens it at one row).
import { memo, useCallback, useId, useMemo, useState, type CSSProperties, type ReactNode } from "react";
import {
  describeTurnEnd,
  toApiError,
  useInterruptedCalls,
  useLlmRequest,
  useReconcileCall,
  useRenameSession,
  useContinueTask,
  useTasks,
  type ApiError,
  type DebugMessage,
  type InterruptedCall,
  type ItemRef,
  type SessionMeta,
  type TaskInfo,
  type ToolStatus,
} from "../backend";
import { frameStatuses, originLabels, type LaneStatus } from "../backend/lanes";
import { useTreeWindow } from "../backend/useTreeWindow";
import { itemRef, rowKey } from "../backend/window";
import { FindInSession } from "../components/FindInSession";
import { InterruptedCallBar } from "../components/InterruptedCallBar";
import { DiffViewer } from "../components/DiffViewer";
import { ToolMediaView } from "../components/ToolMedia";
import { formatTimestamp } from "../components/format";
import { ErrorView, Loading } from "../components/StatusViews";
import { Visible, visibleString } from "../components/visible";
import { VirtualLog } from "./chat/VirtualLog";

/** The session's async tasks: each links to its child session; a failed or stopped one can be
 *  continued from where it stopped. */
function TaskList({ sessionId }: { sessionId: number }) {
  const tasks = useTasks(sessionId);
  const continueTask = useContinueTask();
  const [error, setError] = useState<string | null>(null);
  if (tasks.length === 0) return null;
  const onContinue = (task: TaskInfo) => {
    setError(null);
    continueTask(task).catch((e: unknown) => setError(toApiError(e).message));
  };
  return (
    <section className="turn-ends-section" aria-label="Background tasks">
      <h2>Background tasks</h2>
      <ol className="turn-ends">
        {tasks.map((t) => (
          <li key={t.task_id}>
            <a href={`#session/${t.child_session_id}`}>task {t.label}</a> {t.state}
            {t.delivered ? ", reported" : ""}
            {t.report ? <span className="muted"> — {t.report.split("\n")[0]}</span> : null}
            {t.state === "failed" || t.state === "cancelled" ? (
              <button type="button" className="button button-ghost" onClick={() => onContinue(t)}>
                Continue
              </button>
            ) : null}
          </li>
        ))}
      </ol>
      {error ? <p role="alert">{error}</p> : null}
    </section>
  );
}

const STATUS_LABEL: Record<ToolStatus, string> = {
  pending: "pending",
  running: "running",
  done: "done",
  failed: "failed",
  rejected: "rejected",
  cancelled: "cancelled",
};

function depthStyle(depth: number): CSSProperties {
  return { "--depth": Math.max(0, depth) } as CSSProperties;
}

function Tokens({ input, output }: { input: number | null; output: number | null }) {
  if (input === null && output === null) return null;
  return (
    <span className="tokens" title="Tokens reported by the provider">
      {input !== null ? `${input.toLocaleString()} in` : null}
      {input !== null && output !== null ? " · " : null}
      {output !== null ? `${output.toLocaleString()} out` : null}
    </span>
  );
}

function Reasoning({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <details className="reasoning">
      <summary>Reasoning</summary>
      <pre className="prose-pre">{text}</pre>
    </details>
  );
}

function prettyArguments(args: unknown): string {
  if (typeof args === "string") {
    try {
      return JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      return args;
    }
  }
  return JSON.stringify(args, null, 2) ?? String(args);
}

/** The request body the model received for this round, fetched the first time it is opened. */
function RawRequest({ messageId }: { messageId: number }) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const { data, error, isPending, isError } = useLlmRequest(messageId, open);
  let body: ReactNode = null;
  if (open) {
    if (isError) {
      body = (
        <p className={error.code === "not_found" ? "muted" : "form-error"} role={error.code === "not_found" ? undefined : "alert"}>
          {error.message}
        </p>
      );
    } else if (isPending) {
      body = <Loading label="Loading request…" />;
    } else {
      body = <pre className="code-pre raw-request">{JSON.stringify(data, null, 2)}</pre>;
    }
  }
  return (
    <div className="raw-request-wrap">
      <button
        type="button"
        className="button button-small button-ghost"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen((o) => !o)}
      >
        {open ? "Hide request" : "Show request"}
      </button>
      <div id={panelId} hidden={!open}>
        {body}
      </div>
    </div>
  );
}

function RowHead({
  label,
  kind,
  origin = null,
  children,
}: {
  label: string;
  kind: string;
  /** The origin label of the sub-agent the row belongs to; null for the root frame. */
  origin?: string | null;
  children?: ReactNode;
}) {
  return (
    <div className="row-head">
      <span className={`kind kind-${kind}`}>{label}</span>
      {origin ? (
        <code className="origin" title="The sub-agent this row belongs to">
          <Visible text={origin} mode="line" />
        </code>
      ) : null}
      {children}
    </div>
  );
}

const FRAME_STATUS_CLASS: Record<LaneStatus, string> = {
  running: "status-running",
  done: "status-done",
  failed: "status-failed",
  stopped: "status-cancelled",
};

function Synthetic({ on }: { on: boolean }) {
  return on ? (
    <span className="badge badge-synthetic" title="Generated by the system, not typed by a person">
      synthetic
    </span>
  ) : null;
}

/** "Show the whole …" for a row the window cut to a preview. */
function Whole({ m, chars, onExpand }: { m: DebugMessage; chars: number; onExpand: (ref: ItemRef) => Promise<void> }) {
  return (
    <button type="button" className="button button-small button-ghost" onClick={() => void onExpand(itemRef(m))}>
      {m.kind === "tool" ? "Load the whole call" : `Show the whole text (${chars.toLocaleString()} chars)`}
    </button>
  );
}

const Message = memo(function Message({
  m,
  origin,
  frameStatus,
  interrupted,
  onExpand,
}: {
  m: DebugMessage;
  /** The origin label of the row's sub-agent frame (of the frame itself for its own rows). */
  origin: string | null;
  /** For a frame's opening row: how the frame stands, from its spawning call. */
  frameStatus: LaneStatus | undefined;
  /** The call's flag when a restart cut it off while it ran. */
  interrupted?: InterruptedCall;
  onExpand: (ref: ItemRef) => Promise<void>;
}) {
  const reconcile = useReconcileCall();
  switch (m.kind) {
    case "user":
      return (
        <div className={`tree-row row-user${m.is_synthetic ? " is-synthetic" : ""}`} style={depthStyle(m.depth)}>
          <RowHead label="User" kind="user" origin={origin}>
            <Synthetic on={m.is_synthetic} />
            {m.failed ? <span className="badge badge-failed">failed</span> : null}
            <time className="muted when">{formatTimestamp(m.created_at)}</time>
          </RowHead>
          <pre className="prose-pre">{m.content}</pre>
          {m.truncated ? <Whole m={m} chars={m.content_chars} onExpand={onExpand} /> : null}
        </div>
      );
    case "thinking":
    case "assistant":
      return (
        <div className={`tree-row row-${m.kind}${m.is_synthetic ? " is-synthetic" : ""}`} style={depthStyle(m.depth)}>
          <RowHead label={m.kind === "thinking" ? "Thinking" : "Assistant"} kind={m.kind} origin={origin}>
            <Synthetic on={m.is_synthetic} />
            <Tokens input={m.input_tokens} output={m.output_tokens} />
            <time className="muted when">{formatTimestamp(m.created_at)}</time>
          </RowHead>
          <Reasoning text={m.reasoning} />
          {m.content ? <pre className="prose-pre">{m.content}</pre> : <p className="muted">(no text)</p>}
          {m.truncated ? <Whole m={m} chars={m.content_chars} onExpand={onExpand} /> : null}
          <RawRequest messageId={m.message_id} />
        </div>
      );
    case "tool":
      return (
        <div className="tree-row row-tool" style={depthStyle(m.depth)}>
          <RowHead label="Tool" kind="tool" origin={origin}>
            <code className="tool-name" title={visibleString(m.name)}>
              <Visible text={m.label} mode="line" />
            </code>
            <span className={`status status-${m.status}`}>{STATUS_LABEL[m.status]}</span>
            <span className="muted">call #{m.tool_call_id}</span>
            <time className="muted when">{formatTimestamp(m.created_at)}</time>
          </RowHead>
          {m.diff ? <DiffViewer diff={m.diff} /> : null}
          <ToolMediaView toolCallId={m.tool_call_id} name={m.name} media={m.media} />
          <details className="tool-section" open>
            <summary>Arguments</summary>
            <pre className="code-pre">
              <Visible text={prettyArguments(m.arguments)} />
            </pre>
          </details>
          {m.result !== null ? (
            <details className="tool-section">
              <summary>Result ({Math.max(m.result_chars, m.result.length).toLocaleString()} chars)</summary>
              <pre className="code-pre">
                <Visible text={m.result} />
              </pre>
            </details>
          ) : (
            <p className="muted">No result yet</p>
          )}
          {m.truncated ? <Whole m={m} chars={m.result_chars} onExpand={onExpand} /> : null}
          {interrupted ? <InterruptedCallBar call={interrupted} onReconcile={reconcile} /> : null}
        </div>
      );
    case "agent":
      return (
        <div className="tree-row row-agent" style={depthStyle(m.depth)}>
          <RowHead label="Sub-agent" kind="agent">
            <code className="lane-label">{origin ?? m.agent_id}</code>
            {frameStatus ? <span className={`status ${FRAME_STATUS_CLASS[frameStatus]}`}>{frameStatus}</span> : null}
            <span className="muted">
              started at depth {m.depth}
              {m.parent_tool_call_id !== null ? ` by call #${m.parent_tool_call_id}` : ""}
            </span>
          </RowHead>
          {m.prompt ? (
            <details className="tool-section">
              <summary>Prompt</summary>
              <pre className="prose-pre">{m.prompt}</pre>
            </details>
          ) : null}
        </div>
      );
    case "agent_end":
      return (
        <div className="tree-row row-agent-end" style={depthStyle(m.depth)}>
          <RowHead label="Sub-agent end" kind="agent">
            <code>{origin ?? m.agent_id}</code>
            <span className="muted">finished at depth {m.depth}</span>
          </RowHead>
        </div>
      );
  }
});

function Meta({ s }: { s: SessionMeta }) {
  return (
    <dl className="meta">
      <div>
        <dt>Source</dt>
        <dd>{s.source}</dd>
      </div>
      <div>
        <dt>Agent</dt>
        <dd>{s.agent_id}</dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>{formatTimestamp(s.created_at)}</dd>
      </div>
      <div>
        <dt>Kind</dt>
        <dd>
          {s.is_interactive ? "interactive" : "background"}
          {s.is_ephemeral ? ", ephemeral" : ""}
        </dd>
      </div>
    </dl>
  );
}

/** The session's name as the page title, and a form to rename it. */
function SessionTitle({
  id,
  title,
  onRenamed,
}: {
  id: number;
  title: string | null | undefined;
  onRenamed: (meta: SessionMeta) => void;
}) {
  const rename = useRenameSession();
  const [draft, setDraft] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const inputId = useId();
  const heading = (
    <h1 id="page-title">
      {title ? <Visible text={title} mode="line" /> : `Session #${id}`}
      {title ? <span className="muted title-id"> #{id}</span> : null}
    </h1>
  );
  if (draft === null) {
    return (
      <>
        {heading}
        {title !== undefined ? (
          <button type="button" className="button button-small button-ghost" onClick={() => setDraft(title ?? "")}>
            Rename
          </button>
        ) : null}
      </>
    );
  }
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      onRenamed(await rename(id, draft.trim() || null));
      setDraft(null);
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {heading}
      <form
        className="rename-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label htmlFor={inputId}>Session name</label>
        <input
          id={inputId}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder="Leave empty to remove the name"
          autoFocus
        />
        <button type="submit" className="button button-small" disabled={busy}>
          Save
        </button>
        <button type="button" className="button button-small button-ghost" onClick={() => setDraft(null)}>
          Cancel
        </button>
        {error ? (
          <p className="form-error" role="alert">
            {error.message}
          </p>
        ) : null}
      </form>
    </>
  );
}

const treeKind = (m: DebugMessage) => m.kind;

export function SessionDetailPage({ id, focus = null }: { id: number; focus?: ItemRef | null }) {
  const tree = useTreeWindow(id, focus);
  const { window: win, error } = tree;
  const labels = useMemo(() => originLabels(win.rows), [win.rows]);
  const frames = useMemo(() => frameStatuses(win.rows), [win.rows]);
  const interrupted = useInterruptedCalls(id);
  const renderRow = useCallback(
    (m: DebugMessage) => (
      <Message
        m={m}
        origin={m.depth > 0 ? (labels.get(m.stack_id) ?? null) : null}
        frameStatus={m.kind === "agent" ? frames.get(m.stack_id) : undefined}
        interrupted={m.kind === "tool" ? interrupted.get(m.tool_call_id) : undefined}
        onExpand={tree.expand}
      />
    ),
    [tree.expand, labels, frames, interrupted],
  );

  let body;
  if (tree.status === "loading") {
    body = <Loading label="Loading session…" />;
  } else if (tree.status === "error" || !tree.session) {
    body =
      error?.code === "not_found" ? (
        <ErrorView title={focus ? `Session ${id} has no such row` : `Session ${id} does not exist`} error={null} />
      ) : (
        <ErrorView title="Could not load this session" error={error} onRetry={tree.retry} />
      );
  } else {
    body = (
      <>
        <Meta s={tree.session} />
        {win.rows.length === 0 ? (
          <p className="muted">This session has no messages.</p>
        ) : (
          <div className="tree-scroll">
            <VirtualLog
              rows={win.rows}
              rowKey={rowKey}
              rowKind={treeKind}
              renderRow={renderRow}
              hasMoreBefore={win.hasMoreBefore}
              hasMoreAfter={win.hasMoreAfter}
              onReachTop={() => void tree.loadEarlier()}
              onReachBottom={() => void tree.loadLater()}
              focus={win.focus}
              generation={tree.generation}
              paging={tree.paging}
              pendingApproval={tree.awaiting.length > 0 ? { type: "tool", id: tree.awaiting[0] as number } : null}
              onJump={(target) => (target ? tree.jumpTo(target) : tree.jumpToLatest())}
              label="Session messages"
              className="tree"
            />
          </div>
        )}
        <TaskList sessionId={id} />
        {tree.turnEnds.length > 0 ? (
          <section className="turn-ends-section" aria-label="How the turns ended">
            <h2>How the turns ended</h2>
            <ol className="turn-ends" aria-label="Turn ends">
              {tree.turnEnds.map((t) => (
                <li key={t.id}>
                  <time className="muted when">{formatTimestamp(t.ended_at)}</time> {describeTurnEnd(t.outcome)}
                </li>
              ))}
            </ol>
          </section>
        ) : null}
      </>
    );
  }

  return (
    <section className="page page-session" aria-labelledby="page-title">
      <header className="page-header page-header-row">
        <button type="button" className="button button-ghost" onClick={() => window.history.back()}>
          ← Back
        </button>
        <SessionTitle id={id} title={tree.session?.title} onRenamed={tree.showMeta} />
        <FindInSession sessionId={id} />
      </header>
      {body}
    </section>
  );
}
