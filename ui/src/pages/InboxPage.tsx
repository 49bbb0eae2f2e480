// #inbox: every approval and question waiting for a human, oldest first, keyboard-first review
// with diffs, and the calls a restart cut off that wait for the user's word.
import { useEffect, useEffectEvent, useId, useMemo, useRef, useState, type RefObject } from "react";
import {
  useAnswer,
  useAnswerElicitation,
  useCallOrigin,
  useDecide,
  useInbox,
  useOpenInterruptedCalls,
  useReconcileCall,
  toApiError,
  type ApiError,
  type BypassRequest,
  type InboxItem,
  type InterruptedCall,
  type QuestionItem,
} from "../backend";
import type { ElicitationItem } from "../backend/bindings";
import { ElicitationCard } from "../components/ElicitationCard";
import { useNavigate } from "../app/route";
import { ApprovalSubject, BYPASS_DURATIONS, BypassChoice } from "../components/ApprovalCard";
import { BypassList } from "../components/BypassList";
import { formatSpan, formatTimestamp } from "../components/format";
import { InterruptedCallBar } from "../components/InterruptedCallBar";
import { QuestionCard } from "../components/QuestionCard";
import { Empty, ErrorView, Loading } from "../components/StatusViews";
import { Visible, visibleString } from "../components/visible";

function oldestFirst(items: InboxItem[]): InboxItem[] {
  return [...items].sort((a, b) => a.created_at.localeCompare(b.created_at) || b.age_secs - a.age_secs);
}

/** Keys typed into a field belong to the field, not to the inbox shortcuts. */
function typingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLInputElement) return target.type !== "checkbox";
  return target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement;
}

/** Where an item comes from: its session, source and agent, and the sub-agent when known. */
function originLine(item: InboxItem | QuestionItem, subAgent: string | null): string {
  return visibleString(
    `session #${item.session_id} · ${item.source} · ${item.agent_id}` +
      (item.context_label ? ` · ${item.context_label}` : "") +
      (subAgent ? ` · asked by ${subAgent}` : ""),
  );
}

/** The sub-agent that asks, on a line of its own in a row: the origin line is cut to fit, and
 * which child asks is what tells two waiting writes of one session apart. */
function Asker({ label }: { label: string | null }) {
  return label ? (
    <span className="inbox-asker">
      asked by <Visible text={label} mode="line" />
    </span>
  ) : null;
}

/** The questions agents wait on an answer to, oldest first, each answerable here. */
function Questions({ questions }: { questions: QuestionItem[] }) {
  const answer = useAnswer();
  const originOf = useCallOrigin();
  if (questions.length === 0) return null;
  return (
    <section className="inbox-questions" aria-labelledby="inbox-questions-title">
      <h2 id="inbox-questions-title">Questions</h2>
      <ul className="inbox-question-list" aria-label="Waiting questions">
        {questions.map((q) => (
          <li key={q.tool_call_id} data-tool-call-id={q.tool_call_id}>
            <p className="muted inbox-origin">
              <a href={`#session/${q.session_id}`}>{originLine(q, null)}</a> · waiting {formatSpan(q.age_secs)}
            </p>
            <QuestionCard
              question={{ toolCallId: q.tool_call_id, title: q.title, question: q.question, suggestedAnswers: q.suggested_answers }}
              origin={q.frame_label ?? originOf(q.tool_call_id)}
              onAnswer={answer}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The questions MCP servers ask during calls, oldest first, each a form answerable here. */
function ServerQuestions({ elicitations }: { elicitations: ElicitationItem[] }) {
  const answer = useAnswerElicitation();
  if (elicitations.length === 0) return null;
  return (
    <section className="inbox-questions" aria-labelledby="inbox-elicitations-title">
      <h2 id="inbox-elicitations-title">Server questions</h2>
      <ul className="inbox-question-list" aria-label="Questions from MCP servers">
        {elicitations.map((e) => (
          <li key={e.elicitation_id} data-tool-call-id={e.tool_call_id}>
            <p className="muted inbox-origin">
              <a href={`#session/${e.session_id}`}>
                session {e.session_id} · {visibleString(e.source)}
              </a>{" "}
              · waiting {formatSpan(e.age_secs)}
            </p>
            <ElicitationCard item={e} onAnswer={answer} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** What waits, in a few words: "3 waiting, oldest first · 1 interrupted call to check". */
function subtitle(waiting: number, interrupted: number): string {
  const parts = [];
  if (waiting > 0) parts.push(`${waiting} waiting, oldest first`);
  if (interrupted > 0) parts.push(`${interrupted} interrupted ${interrupted === 1 ? "call" : "calls"} to check`);
  return parts.length > 0 ? parts.join(" · ") : "Approvals, questions and interrupted calls from every session";
}

/** Calls a restart cut off while they ran, in any session: the user says what happened. A call
 *  stays listed until the refetch after the user's word drops it. */
function InterruptedCalls({ calls }: { calls: InterruptedCall[] }) {
  const reconcile = useReconcileCall();
  if (calls.length === 0) return null;
  return (
    <section className="inbox-questions" aria-labelledby="inbox-interrupted-title">
      <h2 id="inbox-interrupted-title">Interrupted calls</h2>
      <ul className="inbox-question-list" aria-label="Interrupted calls">
        {calls.map((c) => (
          <li key={c.tool_call_id} data-tool-call-id={c.tool_call_id}>
            <p className="muted inbox-origin">
              <a href={`#session/${c.session_id}`}>
                session #{c.session_id} · call #{c.tool_call_id}
              </a>{" "}
              · cut off {formatTimestamp(c.flagged_at)}
            </p>
            <p>
              <code>
                <Visible text={c.label} mode="line" />
              </code>
            </p>
            <InterruptedCallBar call={c} onReconcile={reconcile} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function Detail({
  item,
  noteRef,
  note,
  setNote,
  busy,
  onApprove,
  onReject,
  onBypass,
}: {
  item: InboxItem;
  noteRef: RefObject<HTMLTextAreaElement | null>;
  note: string;
  setNote: (v: string) => void;
  busy: boolean;
  onApprove: () => void;
  onReject: () => void;
  onBypass: (bypass: BypassRequest) => void;
}) {
  const noteId = useId();
  const liveOrigin = useCallOrigin();
  // The engine names the asking frame; the live stream's label covers an engine without it.
  const subAgent = item.frame_label ?? liveOrigin(item.tool_call_id);

  return (
    <section className="inbox-detail" aria-label={`Details of ${visibleString(item.tool_name)} call #${item.tool_call_id}`}>
      <h2 className="inbox-detail-title">
        <code>
          <Visible text={item.tool_name} mode="line" />
        </code>{" "}
        <span className="muted">call #{item.tool_call_id}</span>
      </h2>
      <p>
        <Visible text={item.summary} mode="line" />
      </p>
      <dl className="meta">
        <div>
          <dt>Session</dt>
          <dd>
            <a href={`#session/${item.session_id}`}>#{item.session_id}</a>
          </dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>{item.source}</dd>
        </div>
        <div>
          <dt>Agent</dt>
          <dd>{item.agent_id}</dd>
        </div>
        {item.context_label ? (
          <div>
            <dt>Origin</dt>
            <dd>
              <Visible text={item.context_label} mode="line" />
            </dd>
          </div>
        ) : null}
        {subAgent ? (
          <div>
            <dt>Asked by sub-agent</dt>
            <dd>
              <code>
                <Visible text={subAgent} mode="line" />
              </code>
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Waiting</dt>
          <dd>{formatSpan(item.age_secs)}</dd>
        </div>
      </dl>
      <ApprovalSubject approval={{ ...item, toolCallId: item.tool_call_id, toolName: item.tool_name }} />
      <div className="field">
        <label htmlFor={noteId}>Rejection note (reaches the agent)</label>
        <textarea id={noteId} ref={noteRef} rows={2} value={note} onChange={(e) => setNote(e.target.value)} />
      </div>
      <div className="approval-actions">
        <button type="button" className="button button-primary" disabled={busy} onClick={onApprove}>
          Approve <kbd>a</kbd>
        </button>
        <button type="button" className="button button-danger" disabled={busy} onClick={onReject}>
          Reject <kbd>r</kbd>
        </button>
      </div>
      <BypassChoice
        key={item.tool_call_id}
        toolCategory={item.tool_category}
        mcpServer={item.mcp_server}
        disabled={busy}
        onApprove={onBypass}
      />
    </section>
  );
}

export function InboxPage() {
  const inbox = useInbox();
  const interrupted = useOpenInterruptedCalls();
  const decide = useDecide();
  const navigate = useNavigate();
  const items = useMemo(() => oldestFirst(inbox.data?.items ?? []), [inbox.data]);
  const questions = useMemo(
    () => [...(inbox.data?.questions ?? [])].sort((a, b) => a.created_at.localeCompare(b.created_at)),
    [inbox.data],
  );
  const elicitations = inbox.data?.elicitations ?? [];
  const originOf = useCallOrigin();
  // The selected call, and the row it was last seen at (where a decided item's successor is).
  const [selection, setSelection] = useState<{ id: number | null; index: number }>({ id: null, index: 0 });
  const setSelectedId = (id: number) => setSelection((s) => ({ ...s, id }));
  const [checkedIds, setChecked] = useState<Set<number>>(new Set());
  // The rejection note, and the call it was written for.
  const [draft, setDraft] = useState<{ id: number | null; text: string }>({ id: null, text: "" });
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiError | null>(null);
  const [flash, setFlash] = useState<string | null>(null);
  const noteRef = useRef<HTMLTextAreaElement>(null);

  // Keep a selection; when the selected item goes away, take the one now in its place.
  let index = items.findIndex((i) => i.tool_call_id === selection.id);
  if (index < 0 && items.length > 0) index = Math.min(selection.index, items.length - 1);
  const selected = index >= 0 ? (items[index] as InboxItem) : null;
  if (selected && (selected.tool_call_id !== selection.id || index !== selection.index)) {
    setSelection({ id: selected.tool_call_id, index });
  }
  // A note belongs to the call it was written for; another selected call starts blank.
  const note = selected && draft.id === selected.tool_call_id ? draft.text : "";
  const setNote = (text: string) => setDraft({ id: selected?.tool_call_id ?? null, text });
  // Checks of items decided elsewhere no longer count.
  const checked = useMemo(() => {
    const live = new Set(items.map((i) => i.tool_call_id));
    return new Set([...checkedIds].filter((id) => live.has(id)));
  }, [checkedIds, items]);

  const run = async (label: string, calls: Array<() => Promise<unknown>>) => {
    setBusy(true);
    setFailure(null);
    setFlash(null);
    let failed = 0;
    for (const call of calls) {
      try {
        await call();
      } catch (e) {
        failed += 1;
        setFailure(toApiError(e));
      }
    }
    setBusy(false);
    if (failed === 0) setFlash(label);
  };

  const approve = (item: InboxItem) =>
    run(`Approved ${visibleString(item.tool_name)} #${item.tool_call_id}`, [
      () => decide(item.tool_call_id, { approved: true, note: null, bypass: null }),
    ]);
  const reject = (item: InboxItem) =>
    run(`Rejected ${visibleString(item.tool_name)} #${item.tool_call_id}`, [
      () =>
        decide(item.tool_call_id, {
          approved: false,
          note: note.trim() ? note.trim() : null,
          bypass: null,
        }),
    ]);
  const bypass = (item: InboxItem, request: BypassRequest) => {
    const span = BYPASS_DURATIONS.find((d) => d.value === request.duration)?.label.toLowerCase() ?? request.duration;
    return run(`Approved ${visibleString(item.tool_name)} #${item.tool_call_id}; similar calls run without asking for ${span}`, [
      () => decide(item.tool_call_id, { approved: true, note: null, bypass: request }),
    ]);
  };
  const batch = () => {
    const ids = items.filter((i) => checked.has(i.tool_call_id)).map((i) => i.tool_call_id);
    void run(
      `Approved ${ids.length} ${ids.length === 1 ? "call" : "calls"}`,
      ids.map((id) => () => decide(id, { approved: true, note: null, bypass: null })),
    );
  };
  const toggle = (id: number) =>
    setChecked((c) => {
      const next = new Set(c);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const onKey = useEffectEvent((e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey || typingTarget(e.target) || items.length === 0) return;
    const move = (to: number) => {
      const next = items[Math.max(0, Math.min(items.length - 1, to))] as InboxItem;
      setSelectedId(next.tool_call_id);
      document.getElementById(`inbox-row-${next.tool_call_id}`)?.scrollIntoView?.({ block: "nearest" });
    };
    switch (e.key) {
      case "j":
        e.preventDefault();
        move(index + 1);
        break;
      case "k":
        e.preventDefault();
        move(index - 1);
        break;
      case "a":
        if (selected && !busy) {
          e.preventDefault();
          void approve(selected);
        }
        break;
      case "r":
        e.preventDefault();
        noteRef.current?.focus();
        break;
      case "x":
        if (selected) {
          e.preventDefault();
          toggle(selected.tool_call_id);
        }
        break;
      case "Enter":
        if (selected && !(e.target instanceof HTMLButtonElement || e.target instanceof HTMLAnchorElement || e.target instanceof HTMLInputElement)) {
          e.preventDefault();
          navigate(`#session/${selected.session_id}`);
        }
        break;
    }
  });
  useEffect(() => {
    const handler = (e: KeyboardEvent) => onKey(e);
    document.addEventListener("keydown", handler);
    return () => document.removeEventListener("keydown", handler);
  }, []);

  let body;
  if (inbox.isPending) {
    body = <Loading label="Loading the inbox…" />;
  } else if (inbox.isError) {
    body = <ErrorView title="Could not load the inbox" error={inbox.error} onRetry={() => void inbox.refetch()} />;
  } else if (items.length === 0 && questions.length === 0 && elicitations.length === 0 && interrupted.length === 0) {
    body = (
      <Empty title="Nothing is waiting for you">
        Approvals appear here when an agent wants to do something that needs your OK.
      </Empty>
    );
  } else if (items.length === 0) {
    body = (
      <>
        <ServerQuestions elicitations={elicitations} />
        <Questions questions={questions} />
        <InterruptedCalls calls={interrupted} />
      </>
    );
  } else {
    const checkedCount = items.filter((i) => checked.has(i.tool_call_id)).length;
    body = (
      <>
        <div className="inbox-toolbar">
          <button type="button" className="button" disabled={busy || checkedCount === 0} onClick={batch}>
            Approve selected ({checkedCount})
          </button>
          <span className="muted">
            <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>x</kbd> select · <kbd>a</kbd> approve · <kbd>r</kbd> reject ·{" "}
            <kbd>Enter</kbd> open session
          </span>
        </div>
        <div className="inbox-layout">
          <ul className="inbox-list" aria-label="Waiting approvals">
            {items.map((item) => {
              const isSelected = item.tool_call_id === selected?.tool_call_id;
              return (
                <li
                  key={item.tool_call_id}
                  id={`inbox-row-${item.tool_call_id}`}
                  className={`inbox-row${isSelected ? " is-selected" : ""}`}
                  aria-current={isSelected ? "true" : undefined}
                  data-tool-call-id={item.tool_call_id}
                >
                  <input
                    type="checkbox"
                    aria-label={`Select ${visibleString(item.tool_name)} call #${item.tool_call_id}`}
                    checked={checked.has(item.tool_call_id)}
                    onChange={() => toggle(item.tool_call_id)}
                  />
                  <button type="button" className="inbox-row-main" onClick={() => setSelectedId(item.tool_call_id)}>
                    <span className="inbox-row-top">
                      <code>
                        <Visible text={item.tool_name} mode="line" />
                      </code>
                      <span className="muted">{formatSpan(item.age_secs)} ago</span>
                    </span>
                    <span className="inbox-summary">
                      <Visible text={item.summary} mode="line" />
                    </span>
                    <span className="muted inbox-origin">{originLine(item, null)}</span>
                    <Asker label={item.frame_label ?? originOf(item.tool_call_id)} />
                  </button>
                </li>
              );
            })}
          </ul>
          {selected ? (
            <Detail
              key={selected.tool_call_id}
              item={selected}
              noteRef={noteRef}
              note={note}
              setNote={setNote}
              busy={busy}
              onApprove={() => void approve(selected)}
              onReject={() => void reject(selected)}
              onBypass={(request) => void bypass(selected, request)}
            />
          ) : null}
        </div>
        <ServerQuestions elicitations={elicitations} />
        <Questions questions={questions} />
        <InterruptedCalls calls={interrupted} />
      </>
    );
  }

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">Agent Inbox</h1>
        <p className="muted">{subtitle(inbox.count ?? 0, interrupted.length)}</p>
      </header>
      <div aria-live="polite" className="inbox-flash">
        {flash ? <p className="muted">{flash}</p> : null}
        {failure ? (
          <p className="form-error" role="alert">
            Could not send the decision: {failure.message}
          </p>
        ) : null}
      </div>
      {body}
      <BypassList />
    </section>
  );
}
