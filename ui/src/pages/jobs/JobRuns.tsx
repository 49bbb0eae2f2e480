// A job's run history: each run's state, times, tokens and cost, why it did not finish, its
// session, and Kill while it has not ended.
import { useState } from "react";
import { toApiError, useJobActions, useJobRuns, type JobInfo, type JobRunInfo } from "../../backend";
import { formatCount, formatTimestamp } from "../../components/format";
import { Empty, ErrorView, Loading } from "../../components/StatusViews";
import { RUN_STATES, formatCost, runActive } from "./jobText";

/** A table's column heads, then one for the row's actions (named for assistive tech only); a
 * name starting with `#` is a number column. */
export function HeadRow({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col" className={c.startsWith("#") ? "col-num" : undefined}>
            {c.replace(/^#/, "")}
          </th>
        ))}
        <th scope="col">
          <span className="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  );
}

export function RunState({ run }: { run: JobRunInfo }) {
  const state = RUN_STATES[run.state];
  return (
    <span className="run-state">
      <span className={`status ${state.className}`}>{state.label}</span>
      {run.catch_up ? <span className="badge">catch-up</span> : null}
      {run.manual ? <span className="badge">run now</span> : null}
    </span>
  );
}

function RunRow({ run }: { run: JobRunInfo }) {
  const actions = useJobActions();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function kill() {
    setBusy(true);
    setError(null);
    try {
      await actions.kill(run.id);
    } catch (e) {
      setError(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <tr data-run-id={run.id} data-state={run.state}>
      <td>{formatTimestamp(run.scheduled_for)}</td>
      <td>
        <RunState run={run} />
        {run.reason ? <span className="run-reason">{run.reason}</span> : null}
        {run.state === "waiting" ? (
          <span className="run-reason">
            <a href="#inbox">Answer it in the Inbox</a>
          </span>
        ) : null}
        {error ? (
          <span className="form-error run-reason" role="alert">
            {error}
          </span>
        ) : null}
      </td>
      <td>{formatTimestamp(run.started_at)}</td>
      <td>{formatTimestamp(run.ended_at)}</td>
      <td className="col-num">
        {run.input_tokens || run.output_tokens
          ? `${formatCount(run.input_tokens)} in / ${formatCount(run.output_tokens)} out`
          : "—"}
      </td>
      <td className="col-num">{formatCost(run.cost_usd)}</td>
      <td>
        {run.session_id !== null ? (
          <a href={`#session/${run.session_id}`}>Session #{run.session_id}</a>
        ) : (
          <span className="muted">none</span>
        )}
      </td>
      <td className="rule-actions">
        {runActive(run.state) ? (
          <button
            type="button"
            className="button button-small button-danger"
            aria-label={`Kill run ${run.id}`}
            onClick={() => void kill()}
            disabled={busy}
          >
            Kill
          </button>
        ) : null}
      </td>
    </tr>
  );
}

export function JobRuns({ job }: { job: JobInfo }) {
  const { data, error, isPending, isError, refetch } = useJobRuns(job.id);
  if (isPending) return <Loading label="Loading runs…" />;
  if (isError) return <ErrorView title="Could not load the runs" error={error} onRetry={() => void refetch()} />;
  if (data.length === 0) {
    return <Empty title="No runs yet">Runs show here once the schedule fires or you press Run now.</Empty>;
  }
  return (
    <div className="table-wrap">
      <table className="table runs-table" aria-label={`Runs of ${job.title}`}>
        <HeadRow columns={["Scheduled for", "State", "Started", "Ended", "#Tokens", "#Cost", "Session"]} />
        <tbody>
          {data.map((run) => (
            <RunRow key={run.id} run={run} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
