// Scheduled jobs for the mock backend: an in-memory list with the engine's checks that the Jobs
// page shows (a seven-field cron, an interval of at least 60 s, a known zone, a task agent).
import type { ApiError, JobDeleted, JobInfo, JobInput, JobRunInfo, JobSchedule, SchedulePreview } from "../backend";
import type {
  AddJobParams,
  DeleteJobParams,
  EditJobParams,
  GetJobParams,
  KillJobRunParams,
  ListJobRunsParams,
  PreviewScheduleParams,
  RunJobNowParams,
  SetJobEnabledParams,
} from "../backend/api";

const invalid = (message: string): ApiError => ({ code: "invalid_input", message });
const notFound = (message: string): ApiError => ({ code: "not_found", message });

/** Where the mock's clock stands: every "next run" is counted from here. */
export const MOCK_NOW = Date.parse("2026-12-01T08:00:00Z");

export function jobRun(id: number, over: Partial<JobRunInfo> = {}): JobRunInfo {
  return {
    id,
    job_id: 1,
    scheduled_for: "2026-12-01T08:00:00Z",
    state: "done",
    catch_up: false,
    manual: false,
    session_id: 40 + id,
    started_at: "2026-12-01T08:00:01Z",
    ended_at: "2026-12-01T08:00:09Z",
    input_tokens: 1200,
    output_tokens: 300,
    cost_usd: 0.0042,
    reason: null,
    ...over,
  };
}

export function jobInfo(id: number, over: Partial<JobInfo> = {}): JobInfo {
  return {
    id,
    title: `Job ${id}`,
    schedule: { kind: "cron", expr: "0 0 9 * * 1-5 *" },
    timezone: "Europe/Berlin",
    agent_id: "generalist",
    prompt: "Summarise the open issues.",
    run_context: null,
    client: null,
    policies: { on_approval: "wait", approval_timeout_secs: null, on_overlap: "skip", on_downtime: "catch_up_once" },
    enabled: true,
    description: "every weekday at 09:00, Europe/Berlin",
    next_run_at: "2026-12-02T08:00:00Z",
    last_run: null,
    created_at: "2026-11-30T10:00:00Z",
    ...over,
  };
}

/** The schedule checked as the engine does for what the page shows; the words and times are plain. */
function preview(schedule: JobSchedule, timezone: string | undefined): SchedulePreview {
  const zone = timezone?.trim() || "UTC";
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
  } catch {
    throw invalid(`unknown time zone "${zone}": give an IANA name such as Europe/Berlin or UTC`);
  }
  const at = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
  switch (schedule.kind) {
    case "cron": {
      const fields = schedule.expr.trim().split(/\s+/).filter((f) => f !== "");
      if (fields.length !== 7) {
        throw invalid(
          `a cron schedule has seven fields \`sec min hour day-of-month month day-of-week year\` (e.g. \`0 0 9 * * 1-5 *\`); got ${fields.length} in "${schedule.expr}"`,
        );
      }
      const day = 86_400_000;
      return {
        description: `cron ${fields.join(" ")}, ${zone}`,
        timezone: zone,
        next: [1, 2, 3, 4, 5].map((n) => at(MOCK_NOW + n * day)),
      };
    }
    case "every": {
      if (schedule.seconds < 60) {
        throw invalid(`an interval must be between 60 seconds and 31536000 seconds (a year); got ${schedule.seconds}`);
      }
      return {
        description: `every ${schedule.seconds} seconds, ${zone}`,
        timezone: zone,
        next: [1, 2, 3, 4, 5].map((n) => at(MOCK_NOW + n * schedule.seconds * 1000)),
      };
    }
    case "once": {
      const ms = Date.parse(schedule.at);
      if (Number.isNaN(ms)) {
        throw invalid(`cannot read the time "${schedule.at}": give \`2026-12-24T09:00\` (in the job's zone) or an RFC 3339 instant`);
      }
      return { description: `once, at ${schedule.at}, ${zone}`, timezone: zone, next: ms > MOCK_NOW ? [at(ms)] : [] };
    }
  }
}

export class MockJobs {
  jobs: JobInfo[] = [];
  runs: JobRunInfo[] = [];
  /** The task agents a job may run (the engine's `dispatchable`). */
  taskAgents = ["generalist"];
  nextJobId = 1;
  nextRunId = 1;
  added: JobInput[] = [];
  edited: EditJobParams[] = [];
  deleted: DeleteJobParams[] = [];
  killed: number[] = [];
  ranNow: number[] = [];
  previews: PreviewScheduleParams[] = [];

  private find(id: number): JobInfo {
    const job = this.jobs.find((j) => j.id === id);
    if (!job) throw notFound(`no job ${id}`);
    return job;
  }

  private checked(input: JobInput): SchedulePreview {
    if (input.title.trim() === "") throw invalid("a job's title is 1 to 200 characters");
    if (input.prompt.trim() === "") throw invalid("a job's prompt is 1 to 100000 characters");
    if (!this.taskAgents.includes(input.agent_id)) {
      throw invalid(`no task agent \`${input.agent_id}\` (a job runs a task agent). Available: ${this.taskAgents.join(", ")}`);
    }
    return preview(input.schedule, input.timezone);
  }

  private stored(id: number, input: JobInput, p: SchedulePreview, created: string): JobInfo {
    const enabled = input.enabled ?? true;
    return jobInfo(id, {
      title: input.title.trim(),
      schedule: input.schedule,
      timezone: p.timezone,
      agent_id: input.agent_id,
      prompt: input.prompt,
      run_context: input.run_context ?? null,
      client: input.client ?? null,
      policies: input.policies ?? jobInfo(id).policies,
      enabled,
      description: p.description,
      next_run_at: enabled ? (p.next[0] ?? null) : null,
      last_run: this.runs.find((r) => r.job_id === id) ?? null,
      created_at: created,
    });
  }

  /** Runs `f` as an operation: what it throws is the promise's rejection, as over the wire. */
  private settle<T>(f: () => T): Promise<T> {
    try {
      return Promise.resolve(f());
    } catch (e) {
      return Promise.reject(e as ApiError);
    }
  }

  list_jobs(): Promise<JobInfo[]> {
    return this.settle(() => this.jobs.map((j) => ({ ...j, last_run: this.runs.find((r) => r.job_id === j.id) ?? null })));
  }

  get_job({ job_id }: GetJobParams): Promise<JobInfo> {
    return this.settle(() => this.find(job_id));
  }

  preview_schedule(params: PreviewScheduleParams): Promise<SchedulePreview> {
    this.previews.push(params);
    return this.settle(() => preview(params.schedule, params.timezone));
  }

  add_job({ job }: AddJobParams): Promise<JobInfo> {
    return this.settle(() => {
      const p = this.checked(job);
      this.added.push(job);
      const info = this.stored(this.nextJobId++, job, p, new Date(MOCK_NOW).toISOString());
      this.jobs.push(info);
      return info;
    });
  }

  edit_job(params: EditJobParams): Promise<JobInfo> {
    return this.settle(() => {
      const old = this.find(params.job_id);
      const p = this.checked(params.job);
      this.edited.push(params);
      const info = this.stored(old.id, params.job, p, old.created_at);
      this.jobs = this.jobs.map((j) => (j.id === old.id ? info : j));
      return info;
    });
  }

  delete_job(params: DeleteJobParams): Promise<JobDeleted> {
    return this.settle(() => {
      this.find(params.job_id);
      if (this.runs.some((r) => r.job_id === params.job_id && ["queued", "running", "waiting"].includes(r.state))) {
        throw { code: "conflict", message: `job ${params.job_id} has a run that has not ended: kill it first` } satisfies ApiError;
      }
      this.deleted.push(params);
      this.jobs = this.jobs.filter((j) => j.id !== params.job_id);
      const before = this.runs.length;
      if (params.remove_history) this.runs = this.runs.filter((r) => r.job_id !== params.job_id);
      return { runs_removed: before - this.runs.length };
    });
  }

  set_job_enabled({ job_id, enabled }: SetJobEnabledParams): Promise<JobInfo> {
    return this.settle(() => {
      const job = this.find(job_id);
      const info = { ...job, enabled, next_run_at: enabled ? "2026-12-02T08:00:00Z" : null };
      this.jobs = this.jobs.map((j) => (j.id === job_id ? info : j));
      return info;
    });
  }

  run_job_now({ job_id }: RunJobNowParams): Promise<JobRunInfo> {
    return this.settle(() => {
      this.find(job_id);
      this.ranNow.push(job_id);
      const run = jobRun(this.nextRunId++, {
        job_id,
        state: "queued",
        manual: true,
        started_at: null,
        ended_at: null,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: null,
      });
      this.runs.unshift(run);
      return run;
    });
  }

  list_job_runs({ job_id, limit }: ListJobRunsParams): Promise<JobRunInfo[]> {
    return this.settle(() => {
      this.find(job_id);
      return this.runs.filter((r) => r.job_id === job_id).slice(0, limit ?? 50);
    });
  }

  kill_job_run({ run_id }: KillJobRunParams): Promise<JobRunInfo> {
    return this.settle(() => {
      const run = this.runs.find((r) => r.id === run_id);
      if (!run) throw notFound(`no run ${run_id}`);
      if (!["queued", "running", "waiting"].includes(run.state)) {
        throw { code: "conflict", message: `run ${run_id} has ended already (${run.state})` } satisfies ApiError;
      }
      this.killed.push(run_id);
      const ended: JobRunInfo = { ...run, state: "killed", reason: "killed", ended_at: "2026-12-01T08:01:00Z" };
      this.runs = this.runs.map((r) => (r.id === run_id ? ended : r));
      return ended;
    });
  }
}
