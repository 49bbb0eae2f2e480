// The end of a form or a dialog: the error that stopped it (read out as it appears), then its
// main action and Cancel, both held while the action runs, then any further action.
import type { ReactNode } from "react";

export function FormFooter({
  error,
  busy,
  label,
  onAction,
  danger = false,
  onCancel,
  children,
}: {
  error: string | null;
  busy: boolean;
  label: string;
  /** Without it the main action submits the form it stands in. */
  onAction?: () => void;
  danger?: boolean;
  onCancel(): void;
  children?: ReactNode;
}) {
  return (
    <>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions">
        <button
          type={onAction ? "button" : "submit"}
          className={`button ${danger ? "button-danger" : "button-primary"}`}
          onClick={onAction}
          disabled={busy}
        >
          {label}
        </button>
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        {children}
      </div>
    </>
  );
}
