// Loading, empty and error placeholders with the roles assistive tech expects.
import type { ReactNode } from "react";
import type { ApiError } from "../backend";

export function Loading({ label }: { label: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <p className="state-title">{title}</p>
      {children ? <div className="state-body">{children}</div> : null}
    </div>
  );
}

const HINTS: Partial<Record<ApiError["code"], string>> = {
  unauthorized: "The access token is missing or was rejected. Open the link printed by `skald serve` again.",
  storage: "The database could not be read.",
  internal: "The engine could not be reached or failed unexpectedly.",
};

export function ErrorView({
  title,
  error,
  onRetry,
}: {
  title: string;
  error: ApiError | null;
  onRetry?: () => void;
}) {
  const hint = error ? HINTS[error.code] : undefined;
  return (
    <div className="state state-error" role="alert">
      <p className="state-title">{title}</p>
      {error ? (
        <p className="state-body">
          {error.message} <code className="error-code">{error.code}</code>
        </p>
      ) : null}
      {hint ? <p className="state-body muted">{hint}</p> : null}
      {onRetry ? (
        <button type="button" className="button" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function EmptyPage({ title, lead, children }: { title: string; lead: string; children?: ReactNode }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">{title}</h1>
      </header>
      <div className="placeholder">
        <p className="placeholder-lead">{lead}</p>
        {children}
      </div>
    </section>
  );
}
