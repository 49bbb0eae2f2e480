// A call a crash cut off while it ran (decision 3): the model was told it may have run; the user
// says what really happened — it ran, it did not run, or run it again — once.
import { useState } from "react";
import { toApiError, type ApiError, type InterruptedCall, type ReconcileChoice } from "../backend";
import { Visible, visibleString } from "./visible";

const CHOSEN: Record<ReconcileChoice, string> = {
  ran: "You said it ran; the model was told not to run it again.",
  did_not_run: "You said it did not run; the model was told it may run it again.",
  run_again: "You had it run again.",
};

const BUTTONS: Array<[ReconcileChoice, string]> = [
  ["ran", "It ran"],
  ["did_not_run", "It did not run"],
  ["run_again", "Run it again"],
];

const RERUN: Record<string, string> = {
  done: "It completed; the model got its result.",
  failed: "It failed; the model got the error.",
  rejected: "It was refused.",
  cancelled: "It was stopped.",
};

export function InterruptedCallBar({
  call,
  onReconcile,
}: {
  call: InterruptedCall;
  onReconcile: (toolCallId: number, choice: ReconcileChoice) => Promise<unknown>;
}) {
  const [busy, setBusy] = useState<ReconcileChoice | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const reconcile = async (choice: ReconcileChoice) => {
    setBusy(choice);
    setError(null);
    try {
      await onReconcile(call.tool_call_id, choice);
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setBusy(null);
    }
  };
  const choice = call.choice;
  return (
    <section className="tool-section interrupted-call" role="group" aria-label={`Interrupted call ${visibleString(call.label)}`}>
      {choice === null ? (
        <>
          <p>
            A restart cut this call off while it ran: it may have run partly or completely. Check its effects, then
            say what happened.
          </p>
          <div className="approval-actions">
            {BUTTONS.map(([c, label]) => (
              <button
                key={c}
                type="button"
                className={`button button-small${c === "run_again" ? " button-primary" : ""}`}
                disabled={busy !== null}
                onClick={() => void reconcile(c)}
              >
                {busy === c && c === "run_again" ? "Running…" : label}
              </button>
            ))}
          </div>
        </>
      ) : (
        <p className="muted">
          {CHOSEN[choice]}{" "}
          {choice === "run_again"
            ? call.rerun_status
              ? RERUN[call.rerun_status] ?? ""
              : "No outcome was recorded (the app stopped while it ran)."
            : ""}
        </p>
      )}
      {choice === "run_again" && call.rerun_result ? (
        <details>
          <summary>Result of the re-run</summary>
          <pre className="code-pre">
            <Visible text={call.rerun_result} />
          </pre>
        </details>
      ) : null}
      {error ? (
        <p className="tool-error" role="alert">
          {error.message}
        </p>
      ) : null}
    </section>
  );
}
