// #jobs: scheduled jobs, each with its schedule in words, next run (in this browser's time zone),
// the state of its last run and its actions; #jobs/ID opens that job's run history. Live through
// `job_run_update` (see backend/jobs.ts).
import { Fragment, useState } from "react";
import { formatRoute, useNavigate } from "../app/route";
import { toApiError, useJobActions, useJobs, useJobsLive, type JobInfo, type JobRunInfo } from "../backend";
import { formatTimestamp } from "../components/format";
import { Empty, ErrorView, Loading } from "../components/StatusViews";
import { DeleteJobDialog } from "./jobs/DeleteJobDialog";
import { JobForm } from "./jobs/JobForm";
import { HeadRow, JobRuns, RunState } from "./jobs/JobRuns";

type Editing = { mode: "add" } | { mode: "edit"; job: JobInfo } | null;
/** A line under a job saying what an action did; `runId` when it tells of a run starting. */
type Note = { text: string; error: boolean; runId?: number };

const UNDERWAY: readonly JobRunInfo["state"][] = ["queued", "running", "waiting"];

/** A "Run N started." line says nothing once that run is the job's last and has ended. */
function outlived(n: Note, job: JobInfo): boolean {
  const last = job.last_run;
  return n.runId !== undefined && last !== null && last.id === n.runId && !UNDERWAY.includes(last.state);
}

/** What pressing Run now did, in words. */
function runNowNote(run: JobRunInfo): Note {
  if (run.state === "skipped") {
    return { text: `Not started: ${run.reason ?? "the previous run has not ended"}.`, error: true };
  }
  if (run.state === "queued" && run.session_id === null) {
    return { text: "Queued: it starts when the run going on ends.", error: false };
  }
  return { text: `Run ${run.id} started.`, error: false, runId: run.id };
}

function LastRun({ run }: { run: JobRunInfo | null }) {
  if (!run) return <span className="muted">never run</span>;
  return (
    <span className="last-run">
      <RunState run={run} />
      <span className="muted small">{formatTimestamp(run.started_at ?? run.scheduled_for)}</span>
    </span>
  );
}

export function JobsPage({ openJob }: { openJob: number | null }) {
  useJobsLive();
  const { data, error, isPending, isError, refetch } = useJobs();
  const actions = useJobActions();
  const navigate = useNavigate();
  const [editing, setEditing] = useState<Editing>(null);
  const [deleting, setDeleting] = useState<JobInfo | null>(null);
  const [notes, setNotes] = useState<Record<number, Note>>({});

  const note = (jobId: number, n: Note | null) =>
    setNotes(({ [jobId]: _old, ...rest }) => (n ? { ...rest, [jobId]: n } : rest));
  const showRuns = (jobId: number | null) => navigate(formatRoute({ name: "jobs", job: jobId }), { replace: true });

  async function act(job: JobInfo, op: () => Promise<Note | null>) {
    note(job.id, null);
    try {
      note(job.id, await op());
    } catch (e) {
      note(job.id, { text: toApiError(e).message, error: true });
    }
  }

  const runNow = (job: JobInfo) =>
    act(job, async () => {
      const run = await actions.runNow(job.id);
      showRuns(job.id);
      return runNowNote(run);
    });
  const toggle = (job: JobInfo) =>
    act(job, async () => {
      await actions.setEnabled(job.id, !job.enabled);
      return null;
    });

  let body;
  if (isPending) body = <Loading label="Loading jobs…" />;
  else if (isError) body = <ErrorView title="Could not load the jobs" error={error} onRetry={() => void refetch()} />;
  else if (data.length === 0)
    body = (
      <Empty title="No jobs yet">
        Add a job to have an agent run a prompt on a schedule, for example every weekday at 09:00.
      </Empty>
    );
  else
    body = (
      <div className="table-wrap">
        <table className="table jobs-table" aria-label="Jobs">
          <HeadRow columns={["Job", "Schedule", "Next run", "Last run"]} />
          <tbody>
            {data.map((job) => {
              const open = openJob === job.id;
              const runsId = `job-${job.id}-runs`;
              const shown = notes[job.id];
              const n = shown && !outlived(shown, job) ? shown : undefined;
              return (
                <Fragment key={job.id}>
                  <tr data-job-id={job.id} className={job.enabled ? undefined : "is-disabled"}>
                    <td>
                      <span className="job-title">{job.title}</span>{" "}
                      <span className="badges">
                        <span className="badge badge-source">{job.agent_id}</span>
                        {job.enabled ? null : <span className="badge">disabled</span>}
                      </span>
                      {n ? (
                        <span className={n.error ? "form-error job-note" : "job-note"} role={n.error ? "alert" : "status"}>
                          {n.text}
                        </span>
                      ) : null}
                    </td>
                    <td>{job.description}</td>
                    <td>
                      {job.next_run_at ? (
                        <time dateTime={job.next_run_at}>{formatTimestamp(job.next_run_at)}</time>
                      ) : (
                        <span className="muted">{job.enabled ? "none left" : "disabled"}</span>
                      )}
                    </td>
                    <td>
                      <LastRun run={job.last_run} />
                    </td>
                    <td className="rule-actions">
                      <div className="job-actions">
                        <button type="button" className="button button-small" aria-label={`Run now: ${job.title}`} onClick={() => void runNow(job)}>
                          Run now
                        </button>
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`${job.enabled ? "Disable" : "Enable"}: ${job.title}`}
                          onClick={() => void toggle(job)}
                        >
                          {job.enabled ? "Disable" : "Enable"}
                        </button>
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`Edit: ${job.title}`}
                          onClick={() => setEditing({ mode: "edit", job })}
                        >
                          Edit
                        </button>
                        <button type="button" className="button button-small" aria-label={`Delete: ${job.title}`} onClick={() => setDeleting(job)}>
                          Delete
                        </button>
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`Runs: ${job.title}`}
                          aria-expanded={open}
                          aria-controls={open ? runsId : undefined}
                          onClick={() => showRuns(open ? null : job.id)}
                        >
                          Runs
                        </button>
                      </div>
                    </td>
                  </tr>
                  {open ? (
                    <tr className="job-runs-row">
                      <td colSpan={5}>
                        <section id={runsId} aria-label={`Run history of ${job.title}`}>
                          <JobRuns job={job} />
                        </section>
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
    );

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header page-header-row">
        <div>
          <h1 id="page-title">Jobs</h1>
          <p className="muted">
            An agent runs a prompt on a schedule, each run in its own session. Times are in your time zone (
            {Intl.DateTimeFormat().resolvedOptions().timeZone}).
          </p>
        </div>
        <button type="button" className="button button-primary" onClick={() => setEditing({ mode: "add" })} disabled={editing?.mode === "add"}>
          Add job
        </button>
      </header>
      {editing ? (
        <JobForm
          key={editing.mode === "edit" ? editing.job.id : "new"}
          job={editing.mode === "edit" ? editing.job : null}
          onSave={async (input) => {
            if (editing.mode === "edit") await actions.edit(editing.job.id, input);
            else await actions.add(input);
            setEditing(null);
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      {body}
      {deleting ? (
        <DeleteJobDialog
          job={deleting}
          onDelete={async (removeHistory) => {
            await actions.remove(deleting.id, removeHistory);
            setDeleting(null);
            if (openJob === deleting.id) showRuns(null);
          }}
          onClose={() => setDeleting(null)}
        />
      ) : null}
    </section>
  );
}
