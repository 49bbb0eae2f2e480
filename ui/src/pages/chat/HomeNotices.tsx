// What background work left for the home chat, above the conversation: "Job: <title> — done: …"
// with the first lines of the run's answer (or why it did not finish) and a link to its session.
// The title and text are the job's and the model's: shown as text, hidden characters marked.
import { useState } from "react";
import { toApiError, useDismissNotice, useHomeNotices, type HomeNotice } from "../../backend";
import { formatTimestamp } from "../../components/format";
import { Visible } from "../../components/visible";
import { RUN_STATES } from "../jobs/jobText";

function Notice({ notice, onDismiss }: { notice: HomeNotice; onDismiss: (id: number) => Promise<void> }) {
  const [error, setError] = useState<string | null>(null);
  const state = RUN_STATES[notice.state];
  const dismiss = async () => {
    setError(null);
    try {
      await onDismiss(notice.id);
    } catch (e) {
      setError(toApiError(e).message);
    }
  };
  return (
    <li className="home-notice" data-notice-id={notice.id} data-state={notice.state}>
      <p className="home-notice-head">
        <strong>
          Job: <Visible text={notice.job_title} mode="line" />
        </strong>
        {" — "}
        <span className={`status ${state.className}`}>{state.label}</span>
        <span className="muted small"> · {formatTimestamp(notice.created_at)}</span>
      </p>
      <p className="home-notice-summary">
        <Visible text={notice.summary} />
      </p>
      <p className="home-notice-actions">
        {notice.session_id !== null ? <a href={`#session/${notice.session_id}`}>Open its session #{notice.session_id}</a> : null}
        <button
          type="button"
          className="button button-small"
          aria-label={`Dismiss: Job ${notice.job_title} ${state.label}`}
          onClick={() => void dismiss()}
        >
          Dismiss
        </button>
        {error ? (
          <span className="form-error" role="alert">
            {error}
          </span>
        ) : null}
      </p>
    </li>
  );
}

/** The home chat's notices; nothing at all while there are none. */
export function HomeNotices() {
  const notices = useHomeNotices();
  const dismiss = useDismissNotice();
  if (!notices.data || notices.data.length === 0) return null;
  return (
    <section className="home-notices" aria-label="Notices from scheduled jobs">
      <ul>
        {notices.data.map((n) => (
          <Notice key={n.id} notice={n} onDismiss={dismiss} />
        ))}
      </ul>
    </section>
  );
}
