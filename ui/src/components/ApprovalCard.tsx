// A decision a human owes a tool call: what it will do (diff, command or arguments), Approve / Reject.
import { useId, useState, type ReactNode } from "react";
import { toApiError, type ApiError, type DecisionInput, type FileDiff } from "../backend";
import { DiffViewer } from "./DiffViewer";
import { prettyJson } from "./json";

export type ApprovalView = {
  toolCallId: number;
  kind: "write" | "command" | "tool";
  toolName: string;
  arguments: unknown;
  path: string | null;
  diff: FileDiff | null;
  command: string | null;
  workdir: string | null;
};

/** The body of an approval: the reviewed diff for writes, the command line, or the raw arguments. */
export function ApprovalSubject({ approval }: { approval: ApprovalView }): ReactNode {
  if (approval.kind === "command") {
    return (
      <div className="approval-command">
        <pre className="code-pre command-line" aria-label="Command line">
          <span aria-hidden="true">$ </span>
          {approval.command ?? prettyJson(approval.arguments)}
        </pre>
        <p className="muted">
          in <code>{approval.workdir ?? "the working directory"}</code>
        </p>
      </div>
    );
  }
  if (approval.diff) return <DiffViewer diff={approval.diff} />;
  return (
    <>
      {approval.kind === "write" && approval.path ? (
        <p>
          Writes <code>{approval.path}</code> <span className="muted">(diff not available)</span>
        </p>
      ) : null}
      <pre className="code-pre" aria-label="Arguments">
        {prettyJson(approval.arguments)}
      </pre>
    </>
  );
}

export function ApprovalCard({
  approval,
  onDecide,
}: {
  approval: ApprovalView;
  onDecide: (toolCallId: number, input: DecisionInput) => Promise<unknown>;
}) {
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState<"approve" | "reject" | null>(null);
  const [sent, setSent] = useState<boolean | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const noteId = useId();

  const decide = async (approved: boolean) => {
    setBusy(approved ? "approve" : "reject");
    setError(null);
    try {
      await onDecide(approval.toolCallId, {
        approved,
        note: !approved && note.trim() ? note.trim() : null,
        bypass_secs: null,
        bypass_scope: null,
      });
      // The card itself goes away when the engine reports approval_resolved.
      setSent(approved);
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setBusy(null);
    }
  };

  const title =
    approval.kind === "write"
      ? `Approve writing ${approval.path ?? "a file"}?`
      : approval.kind === "command"
        ? "Approve running this command?"
        : `Approve ${approval.toolName}?`;

  return (
    <section className="approval-card" aria-label={`Approval for ${approval.toolName}`} data-tool-call-id={approval.toolCallId}>
      <h3 className="approval-title">{title}</h3>
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
      {error ? (
        <p className="form-error" role="alert">
          Could not send the decision: {error.message}
        </p>
      ) : null}
    </section>
  );
}
