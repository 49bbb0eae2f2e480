// Deleting a job asks first, in the page: keep its run history (the job leaves this page, its
// runs' sessions stay in Sessions) or remove it too. A modal dialog: focus stays inside, Escape
// cancels, and focus goes back to where it was when it closes.
import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { toApiError, type JobInfo } from "../../backend";
import { FormFooter } from "../../components/FormFooter";

export function DeleteJobDialog({
  job,
  onDelete,
  onClose,
}: {
  job: JobInfo;
  /** Resolves once deleted; a rejection is shown in the dialog. */
  onDelete(removeHistory: boolean): Promise<void>;
  onClose(): void;
}) {
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  const [removeHistory, setRemoveHistory] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    ref.current?.querySelector<HTMLInputElement>("input:checked")?.focus();
    return () => before?.focus();
  }, []);

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === "Escape") {
      event.preventDefault();
      if (!busy) onClose();
      return;
    }
    if (event.key !== "Tab" || !ref.current) return;
    // Of a radio group only the chosen radio takes focus from Tab.
    const focusable = [...ref.current.querySelectorAll<HTMLElement>("input:checked, button:not(:disabled)")];
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last?.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first?.focus();
    }
  }

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await onDelete(removeHistory);
    } catch (e) {
      setError(toApiError(e).message);
      setBusy(false);
    }
  }

  return (
    <div className="dialog-backdrop">
      <div
        ref={ref}
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-body`}
        onKeyDown={onKeyDown}
      >
        <h2 id={`${id}-title`}>Delete job “{job.title}”?</h2>
        <p id={`${id}-body`}>It will not run again. What should happen to the runs it already had?</p>
        <fieldset className="dialog-choices">
          <legend className="visually-hidden">Run history</legend>
          <label>
            <input type="radio" name={`${id}-history`} checked={!removeHistory} onChange={() => setRemoveHistory(false)} />
            Keep the run history: each run’s session stays listed in Sessions (source “cron”)
          </label>
          <label>
            <input type="radio" name={`${id}-history`} checked={removeHistory} onChange={() => setRemoveHistory(true)} />
            Delete the run history too
          </label>
        </fieldset>
        <FormFooter error={error} busy={busy} label="Delete job" danger onAction={() => void confirm()} onCancel={onClose} />
      </div>
    </div>
  );
}
