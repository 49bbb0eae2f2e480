// #tic: TIC ticks. Every `tic.interval_secs` a tick reads what MCP servers kept connected pushed
// (only when something did) and the hidden `tic` agent looks at it in its own session. Each row
// says when, how many events from which servers, how it ended, and links to its session's debug
// tree; "Events" shows what the servers sent (as text: a server's params are never markup).
import { Fragment, useState } from "react";
import { toApiError, useRunTic, useTicStatus, useTicTick, type TicTickInfo, type TickState } from "../backend";
import { formatTimestamp } from "../components/format";
import { Empty, ErrorView, Loading } from "../components/StatusViews";
import { HeadRow } from "./jobs/JobRuns";

const TICK_STATES: Record<TickState, { label: string; className: string }> = {
  running: { label: "running", className: "status-running" },
  done: { label: "done", className: "status-done" },
  failed: { label: "failed", className: "status-failed" },
  cancelled: { label: "stopped", className: "status-cancelled" },
  empty: { label: "nothing new", className: "status-cancelled" },
};

function every(secs: number): string {
  if (secs % 3600 === 0) return secs === 3600 ? "every hour" : `every ${secs / 3600} hours`;
  if (secs % 60 === 0) return secs === 60 ? "every minute" : `every ${secs / 60} minutes`;
  return `every ${secs} seconds`;
}

function TickEvents({ tick }: { tick: TicTickInfo }) {
  const { data, error, isPending, isError, refetch } = useTicTick(tick.id);
  if (isPending) return <Loading label="Loading events…" />;
  if (isError) return <ErrorView title="Could not load the events" error={error} onRetry={() => void refetch()} />;
  if (data.events.length === 0) {
    return <p className="muted">Its events are no longer stored (only the newest are kept).</p>;
  }
  return (
    <ol className="tic-events" aria-label={`Events of tick ${tick.id}`}>
      {data.events.map((e) => (
        <li key={e.id} className="tic-event">
          <span className="tic-event-head">
            <strong>{e.server}</strong> <code>{e.method}</code>{" "}
            <span className="muted small">{formatTimestamp(e.received_at)}</span>
          </span>
          {e.params ? <pre className="tic-event-params">{e.params}</pre> : null}
        </li>
      ))}
    </ol>
  );
}

function TickRow({ tick, open, onToggle }: { tick: TicTickInfo; open: boolean; onToggle: () => void }) {
  const state = TICK_STATES[tick.state];
  return (
    <Fragment>
      <tr data-tick-id={tick.id} data-state={tick.state}>
        <td>{formatTimestamp(tick.started_at)}</td>
        <td className="col-num">{tick.events}</td>
        <td>{tick.servers.length ? tick.servers.join(", ") : <span className="muted">none</span>}</td>
        <td>
          <span className="run-state">
            <span className={`status ${state.className}`}>{state.label}</span>
            {tick.manual ? <span className="badge">run now</span> : null}
          </span>
          {tick.reason ? <span className="run-reason">{tick.reason}</span> : null}
        </td>
        <td>
          {tick.session_id !== null ? (
            <a href={`#session/${tick.session_id}`}>Session #{tick.session_id}</a>
          ) : (
            <span className="muted">none</span>
          )}
        </td>
        <td className="rule-actions">
          {tick.events > 0 ? (
            <button
              type="button"
              className="button button-small"
              aria-expanded={open}
              aria-label={open ? `Hide events of tick ${tick.id}` : `Events of tick ${tick.id}`}
              onClick={onToggle}
            >
              {open ? "Hide events" : "Events"}
            </button>
          ) : null}
        </td>
      </tr>
      {open ? (
        <tr className="tic-events-row">
          <td colSpan={6}>
            <TickEvents tick={tick} />
          </td>
        </tr>
      ) : null}
    </Fragment>
  );
}

export function TicPage(_props: { page: number }) {
  const { data, error, isPending, isError, refetch } = useTicStatus();
  const runTic = useRunTic();
  const [open, setOpen] = useState<number | null>(null);
  const [note, setNote] = useState<{ text: string; error: boolean } | null>(null);
  const [busy, setBusy] = useState(false);

  async function runNow() {
    setBusy(true);
    setNote(null);
    try {
      const tick = await runTic();
      setNote({
        text:
          tick.state === "empty"
            ? "Nothing new: no tick was needed and no model was asked."
            : `Tick ${tick.id} started on ${tick.events} event(s).`,
        error: false,
      });
    } catch (e) {
      setNote({ text: toApiError(e).message, error: true });
    } finally {
      setBusy(false);
    }
  }

  let body;
  if (isPending) {
    body = <Loading label="Loading ticks…" />;
  } else if (isError) {
    body = <ErrorView title="Could not load the ticks" error={error} onRetry={() => void refetch()} />;
  } else {
    const kept = data.kept_connected;
    body = (
      <>
        <p className="tic-summary" data-testid="tic-summary">
          Ticks run {every(data.interval_secs)}
          {data.active_hours ? `, between ${data.active_hours.replace("-", " and ")}` : ""}, reading up to{" "}
          {data.batch_size} events each. {data.pending_events} event(s) waiting.{" "}
          {kept.length
            ? `Servers kept connected: ${kept.join(", ")}.`
            : "No MCP server is kept connected yet: mark one in Settings → MCP servers so what it pushes is read here."}
        </p>
        {data.ticks.length === 0 ? (
          <Empty title="No ticks yet">
            A tick shows here once a server kept connected has pushed something and the interval has come (or you
            press Run a tick now).
          </Empty>
        ) : (
          <div className="table-wrap">
            <table className="table runs-table" aria-label="TIC ticks">
              <HeadRow columns={["Started", "#Events", "Servers", "How it ended", "Session"]} />
              <tbody>
                {data.ticks.map((t) => (
                  <TickRow key={t.id} tick={t} open={open === t.id} onToggle={() => setOpen(open === t.id ? null : t.id)} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </>
    );
  }

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">TIC</h1>
        <p className="muted">
          What your MCP servers push is read in batches by the TIC agent, each tick in its own session.
        </p>
        <div className="page-actions">
          <button type="button" className="button" onClick={() => void runNow()} disabled={busy}>
            Run a tick now
          </button>
        </div>
        {note ? (
          <p className={note.error ? "form-error" : "muted"} role={note.error ? "alert" : "status"}>
            {note.text}
          </p>
        ) : null}
      </header>
      {body}
    </section>
  );
}
