// A decision a human owes a tool call: what it will do (diff, command or arguments), Approve / Reject,
// or Approve with a bypass of similar calls for a while.
import { useId, useState, type ReactNode } from "react";
import {
  toApiError,
  type ApiError,
  type BypassDuration,
  type BypassRequest,
  type BypassScopeKind,
  type DecisionInput,
  type FileDiff,
} from "../backend";
import { DiffViewer } from "./DiffViewer";
import { prettyJson } from "./json";
import { Visible, visibleString } from "./visible";

export type ApprovalView = {
  toolCallId: number;
  kind: "write" | "command" | "mcp" | "tool";
  toolName: string;
  arguments: unknown;
  path: string | null;
  diff: FileDiff | null;
  command: string | null;
  workdir: string | null;
  /** The MCP server and its tool, for an MCP call (absent where the inbox row is all there is). */
  mcp?: { server: string; tool: string } | null;
  /** The call's tool category and MCP server as the inbox reports them; `undefined` while they
   * are not known, and then no bypass is offered (so a scope that does not fit never is). */
  toolCategory?: string | null;
  mcpServer?: string | null;
};

export const BYPASS_DURATIONS: ReadonlyArray<{ value: BypassDuration; label: string }> = [
  { value: "fifteen_minutes", label: "15 minutes" },
  { value: "one_hour", label: "1 hour" },
  { value: "session", label: "This session (until /new, at most 24 h)" },
];

/** The bypass scopes that fit a call, narrowest first: its MCP server, its category, all tools. */
export function fittingScopes(
  toolCategory: string | null,
  mcpServer: string | null,
): Array<{ value: BypassScopeKind; label: string }> {
  const scopes: Array<{ value: BypassScopeKind; label: string }> = [];
  if (mcpServer) scopes.push({ value: "mcp_server", label: `MCP server ${mcpServer}` });
  if (toolCategory) scopes.push({ value: "category", label: `${toolCategory} tools` });
  scopes.push({ value: "all", label: "All tools" });
  return scopes;
}

/** "Approve + bypass": which similar calls (only scopes that fit this one) and for how long. */
export function BypassChoice({
  toolCategory,
  mcpServer,
  disabled,
  onApprove,
}: {
  toolCategory: string | null;
  mcpServer: string | null;
  disabled: boolean;
  onApprove: (bypass: BypassRequest) => void;
}) {
  const scopes = fittingScopes(toolCategory, mcpServer);
  const [scope, setScope] = useState<BypassScopeKind>(scopes[0]?.value ?? "all");
  const [duration, setDuration] = useState<BypassDuration>("fifteen_minutes");
  const scopeId = useId();
  const durationId = useId();
  return (
    <fieldset className="bypass">
      <legend>Approve and allow similar calls without asking</legend>
      <div className="field">
        <label htmlFor={scopeId}>Covers</label>
        <select id={scopeId} value={scope} onChange={(e) => setScope(e.target.value as BypassScopeKind)}>
          {scopes.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={durationId}>For</label>
        <select id={durationId} value={duration} onChange={(e) => setDuration(e.target.value as BypassDuration)}>
          {BYPASS_DURATIONS.map((d) => (
            <option key={d.value} value={d.value}>
              {d.label}
            </option>
          ))}
        </select>
      </div>
      <button type="button" className="button" disabled={disabled} onClick={() => onApprove({ duration, scope })}>
        Approve + bypass
      </button>
      <p className="muted bypass-note">Deny rules still apply; revoke it any time from the inbox or the chat.</p>
    </fieldset>
  );
}

function Path({ path }: { path: string }) {
  return (
    <code>
      <Visible text={path} mode="line" />
    </code>
  );
}

function Arguments({ value }: { value: unknown }) {
  return (
    <pre className="code-pre" aria-label="Arguments">
      <Visible text={prettyJson(value)} />
    </pre>
  );
}

/** The arguments of `execute_task` mode `cron` (an agent asks to schedule a job), else null. */
function jobToSchedule(approval: ApprovalView): Record<string, unknown> | null {
  const args = approval.arguments;
  if (approval.toolName !== "execute_task" || typeof args !== "object" || args === null) return null;
  const record = args as Record<string, unknown>;
  return record.mode === "cron" ? record : null;
}

/** A job an agent asks to schedule. It runs later with nobody watching, so what and when come
 * first: title, agent, schedule in words, next runs, where and on which client, the prompt whole. */
function JobToSchedule({ args }: { args: Record<string, unknown> }) {
  const text = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : "?");
  const next = Array.isArray(args.next_runs)
    ? args.next_runs.filter((t): t is string => typeof t === "string")
    : [];
  return (
    <div className="approval-job">
      <p>
        Schedules the job <strong><Visible text={text("title")} mode="line" /></strong> for agent{" "}
        <code><Visible text={text("agent_id")} mode="line" /></code>:{" "}
        <Visible text={text("schedule_in_words")} mode="line" />
      </p>
      <p className="muted">
        Next runs: <Visible text={next.length ? next.join(", ") : "none"} mode="line" />
      </p>
      <p className="muted">
        In <code><Visible text={text("working_directory")} mode="line" /></code> on client{" "}
        <code><Visible text={text("client")} mode="line" /></code>
      </p>
      {args.run_context ? (
        <p className="muted">
          Run context (what its runs may do unasked): <code><Visible text={JSON.stringify(args.run_context)} mode="line" /></code>
        </p>
      ) : null}
      <pre className="code-pre" aria-label="Prompt">
        <Visible text={text("prompt")} />
      </pre>
    </div>
  );
}

/** The body of an approval: the reviewed diff for writes, the command line, or the raw arguments. */
export function ApprovalSubject({ approval }: { approval: ApprovalView }): ReactNode {
  const job = jobToSchedule(approval);
  if (job) return <JobToSchedule args={job} />;
  if (approval.kind === "command") {
    return (
      <div className="approval-command">
        <pre className="code-pre command-line" aria-label="Command line">
          <span aria-hidden="true">$ </span>
          <Visible text={approval.command ?? prettyJson(approval.arguments)} />
        </pre>
        <p className="muted">
          in <code>{approval.workdir ? <Visible text={approval.workdir} mode="line" /> : "the working directory"}</code>
        </p>
      </div>
    );
  }
  if (approval.diff) return <DiffViewer diff={approval.diff} />;
  if (approval.kind === "mcp" && approval.mcp) {
    return (
      <>
        <p>
          Calls{" "}
          <code>
            <Visible text={approval.mcp.tool} mode="line" />
          </code>{" "}
          on MCP server{" "}
          <code>
            <Visible text={approval.mcp.server} mode="line" />
          </code>
        </p>
        <Arguments value={approval.arguments} />
      </>
    );
  }
  return (
    <>
      {approval.kind === "write" && approval.path ? (
        <p>
          Writes <Path path={approval.path} /> <span className="muted">(diff not available)</span>
        </p>
      ) : null}
      {approval.kind === "tool" && approval.path ? (
        <p>
          On <Path path={approval.path} />
        </p>
      ) : null}
      <Arguments value={approval.arguments} />
    </>
  );
}

/** Which sub-agent asks (its origin label); nothing for the session's own agent. */
export function AskedBy({ origin }: { origin: string | null }) {
  if (!origin) return null;
  return (
    <p className="asked-by">
      Asked by sub-agent{" "}
      <code>
        <Visible text={origin} mode="line" />
      </code>
    </p>
  );
}

export function ApprovalCard({
  approval,
  origin = null,
  onDecide,
}: {
  approval: ApprovalView;
  /** The origin label of the sub-agent that asks; null for the session's own agent. */
  origin?: string | null;
  onDecide: (toolCallId: number, input: DecisionInput) => Promise<unknown>;
}) {
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState<"approve" | "reject" | null>(null);
  const [sent, setSent] = useState<boolean | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const noteId = useId();

  const decide = async (approved: boolean, bypass: BypassRequest | null = null) => {
    setBusy(approved ? "approve" : "reject");
    setError(null);
    try {
      await onDecide(approval.toolCallId, {
        approved,
        note: !approved && note.trim() ? note.trim() : null,
        bypass,
      });
      // The card itself goes away when the engine reports approval_resolved.
      setSent(approved);
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setBusy(null);
    }
  };

  const shown = (text: string) => <Visible text={text} mode="line" />;
  const title =
    approval.kind === "write" ? (
      <>Approve writing {approval.path ? shown(approval.path) : "a file"}?</>
    ) : approval.kind === "command" ? (
      "Approve running this command?"
    ) : approval.kind === "mcp" && approval.mcp ? (
      <>
        Approve {shown(approval.mcp.tool)} on MCP server {shown(approval.mcp.server)}?
      </>
    ) : (
      <>Approve {shown(approval.toolName)}?</>
    );

  return (
    <section
      className="approval-card"
      aria-label={`Approval for ${visibleString(approval.toolName)}${origin ? `, asked by ${visibleString(origin)}` : ""}`}
      data-tool-call-id={approval.toolCallId}
      data-origin={origin ?? undefined}
    >
      <h3 className="approval-title">{title}</h3>
      <AskedBy origin={origin} />
      <ApprovalSubject approval={approval} />
      <div className="field">
        <label htmlFor={noteId}>Note for the agent if you reject (optional)</label>
        <textarea id={noteId} rows={2} value={note} onChange={(e) => setNote(e.target.value)} disabled={sent !== null} />
      </div>
      <div className="approval-actions">
        <button type="button" className="button button-primary" disabled={busy !== null || sent !== null} onClick={() => void decide(true)}>
          {busy === "approve" ? "Approving…" : "Approve"}
        </button>
        <button type="button" className="button button-danger" disabled={busy !== null || sent !== null} onClick={() => void decide(false)}>
          {busy === "reject" ? "Rejecting…" : "Reject"}
        </button>
        {sent !== null ? (
          <span className="muted" role="status">
            {sent ? "Approved" : "Rejected"}, waiting for the agent…
          </span>
        ) : null}
      </div>
      {approval.toolCategory !== undefined && sent === null ? (
        <BypassChoice
          toolCategory={approval.toolCategory}
          mcpServer={approval.mcpServer ?? null}
          disabled={busy !== null}
          onApprove={(bypass) => void decide(true, bypass)}
        />
      ) : null}
      {error ? (
        <p className="form-error" role="alert">
          Could not send the decision: {error.message}
        </p>
      ) : null}
    </section>
  );
}
