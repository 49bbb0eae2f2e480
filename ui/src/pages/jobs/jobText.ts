// What the Jobs page says about runs and schedules, and how the form's fields map to a JobInput.
import type { JobInfo, JobInput, JobRunState, JobSchedule, OnApproval, OnDowntime, OnOverlap, RunContext } from "../../backend";

/** Each run state in words, with the status colour it shows in. */
export const RUN_STATES: Record<JobRunState, { label: string; className: string }> = {
  queued: { label: "queued", className: "status-pending" },
  running: { label: "running", className: "status-running" },
  waiting: { label: "waiting for a person", className: "status-pending" },
  done: { label: "done", className: "status-done" },
  failed: { label: "failed", className: "status-failed" },
  killed: { label: "killed", className: "status-cancelled" },
  expired: { label: "expired", className: "status-failed" },
  skipped: { label: "skipped", className: "status-cancelled" },
  missed: { label: "missed", className: "status-cancelled" },
};

/** A run that has not ended yet: it can be killed, and it keeps its job from being deleted. */
export function runActive(state: JobRunState): boolean {
  return state === "queued" || state === "running" || state === "waiting";
}

export function formatCost(usd: number | null): string {
  if (usd === null) return "—";
  return usd < 0.01 && usd > 0 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export type ScheduleKind = JobSchedule["kind"];
export type IntervalUnit = "minutes" | "hours" | "days";

export const UNIT_SECONDS: Record<IntervalUnit, number> = { minutes: 60, hours: 3600, days: 86_400 };

/** What the form holds, as the user typed it. */
export interface JobDraft {
  title: string;
  agentId: string;
  prompt: string;
  kind: ScheduleKind;
  cron: string;
  /** `YYYY-MM-DDTHH:MM`, local to the job's zone. */
  once: string;
  every: string;
  unit: IntervalUnit;
  timezone: string;
  workdir: string;
  onApproval: OnApproval;
  /** Minutes; empty: wait as long as it takes. */
  timeoutMinutes: string;
  onOverlap: OnOverlap;
  onDowntime: OnDowntime;
  enabled: boolean;
}

/** The browser's zone, which a new job starts with. */
export function browserTimezone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

export function newDraft(agentId: string): JobDraft {
  return {
    title: "",
    agentId,
    prompt: "",
    kind: "cron",
    cron: "0 0 9 * * 1-5 *",
    once: "",
    every: "60",
    unit: "minutes",
    timezone: browserTimezone(),
    workdir: "",
    onApproval: "wait",
    timeoutMinutes: "",
    onOverlap: "skip",
    onDowntime: "catch_up_once",
    enabled: true,
  };
}

function intervalOf(seconds: number): { every: string; unit: IntervalUnit } {
  for (const unit of ["days", "hours"] as const) {
    if (seconds % UNIT_SECONDS[unit] === 0) return { every: String(seconds / UNIT_SECONDS[unit]), unit };
  }
  return { every: String(Math.round((seconds / 60) * 100) / 100), unit: "minutes" };
}

/** A one-shot time as the date-time field holds it, in the job's zone: a stored local time as it
 * is, an instant with an offset (as `skald jobs add` may give it) turned into the zone's clock. */
export function localInZone(at: string, timezone: string): string {
  const trimmed = at.trim().replace(" ", "T");
  if (!/(Z|[+-]\d\d:?\d\d)$/i.test(trimmed)) return trimmed.slice(0, 16);
  const instant = new Date(trimmed);
  if (Number.isNaN(instant.getTime())) return trimmed.slice(0, 16);
  try {
    const parts = new Intl.DateTimeFormat("en-CA", {
      timeZone: timezone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    }).formatToParts(instant);
    const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "00";
    return `${part("year")}-${part("month")}-${part("day")}T${part("hour")}:${part("minute")}`;
  } catch {
    return trimmed.slice(0, 16);
  }
}

export function draftOf(job: JobInfo): JobDraft {
  const s = job.schedule;
  const timeout = job.policies.approval_timeout_secs;
  return {
    ...newDraft(job.agent_id),
    title: job.title,
    prompt: job.prompt,
    kind: s.kind,
    cron: s.kind === "cron" ? s.expr : "",
    once: s.kind === "once" ? localInZone(s.at, job.timezone) : "",
    ...(s.kind === "every" ? intervalOf(s.seconds) : { every: "60", unit: "minutes" as const }),
    timezone: job.timezone,
    workdir: job.run_context?.working_directory ?? "",
    onApproval: job.policies.on_approval,
    timeoutMinutes: timeout === null ? "" : String(Math.round((timeout / 60) * 100) / 100),
    onOverlap: job.policies.on_overlap,
    onDowntime: job.policies.on_downtime,
    enabled: job.enabled,
  };
}

/** The schedule the draft describes, or `null` while its value is empty or not a number. */
export function scheduleOf(d: JobDraft): JobSchedule | null {
  switch (d.kind) {
    case "cron":
      return d.cron.trim() === "" ? null : { kind: "cron", expr: d.cron.trim() };
    case "once":
      return d.once.trim() === "" ? null : { kind: "once", at: d.once.trim() };
    case "every": {
      const n = Number(d.every);
      return d.every.trim() === "" || !Number.isFinite(n) || n <= 0
        ? null
        : { kind: "every", seconds: Math.round(n * UNIT_SECONDS[d.unit]) };
    }
  }
}

/** The fields a message can be shown under. */
export type JobField = "title" | "agent" | "prompt" | "schedule" | "timezone" | "workdir" | "timeout";

/** The input fields the engine names at the start of an `invalid_input` message (`timezone: …`). */
const NAMED_FIELDS: Record<string, JobField | null> = {
  title: "title",
  prompt: "prompt",
  agent_id: "agent",
  schedule: "schedule",
  timezone: "timezone",
  "policies.approval_timeout_secs": "timeout",
  "run_context.working_directory": "workdir",
  run_context: "workdir",
  // The form has no client field: the message shows above its buttons.
  client: null,
};

/** Splits `field: text` as the engine writes it; `null` field when the message names none. */
function namedField(message: string): { name: string; text: string } | null {
  const m = /^([a-z_.]+): (.*)$/s.exec(message);
  return m && m[1] !== undefined && m[2] !== undefined && m[1] in NAMED_FIELDS ? { name: m[1], text: m[2] } : null;
}

/** An engine message without the field name it starts with (shown under that field). */
export function errorText(message: string): string {
  return namedField(message)?.text ?? message;
}

/** The field an engine `invalid_input` message is about; `null` when it names none. */
export function fieldOfError(message: string): JobField | null {
  const named = namedField(message);
  if (named) return NAMED_FIELDS[named.name] ?? null;
  const m = message.toLowerCase();
  if (m.includes("time zone")) return "timezone";
  if (m.includes("title")) return "title";
  if (m.includes("prompt")) return "prompt";
  if (m.includes("task agent")) return "agent";
  if (m.includes("approval timeout")) return "timeout";
  if (m.includes("working directory") || m.includes("workdir")) return "workdir";
  if (/cron|interval|schedule|the time|does not exist|fire time/.test(m)) return "schedule";
  return null;
}

/** What the form checks before the engine does: the fields that cannot be left empty. */
export function draftErrors(d: JobDraft): Partial<Record<JobField, string>> {
  const errors: Partial<Record<JobField, string>> = {};
  if (d.title.trim() === "") errors.title = "Give the job a title.";
  if (d.agentId === "") errors.agent = "Choose the task agent that runs the job.";
  if (d.prompt.trim() === "") errors.prompt = "Write what the agent should do on each run.";
  if (scheduleOf(d) === null) {
    errors.schedule =
      d.kind === "cron"
        ? "Give a cron schedule of seven fields."
        : d.kind === "once"
          ? "Give the date and time of the run."
          : "Give the interval as a number above zero.";
  }
  const timeout = d.timeoutMinutes.trim();
  if (d.onApproval === "wait" && timeout !== "" && !(Number(timeout) > 0)) {
    errors.timeout = "Give the minutes as a number above zero, or leave it empty to wait as long as it takes.";
  }
  return errors;
}

/** The JobInput a draft stands for; `base` (the job edited) keeps what the form does not show. */
export function inputOf(d: JobDraft, base: JobInfo | null): JobInput {
  const context: RunContext | null = base?.run_context ?? null;
  const workdir = d.workdir.trim() || null;
  const runContext: RunContext | undefined =
    context || workdir
      ? {
          working_directory: workdir,
          system_prompt: context?.system_prompt ?? [],
          allow_fs_reads: context?.allow_fs_reads ?? [],
          allow_fs_writes: context?.allow_fs_writes ?? [],
          security_group: context?.security_group ?? null,
        }
      : undefined;
  const timeout = d.timeoutMinutes.trim();
  return {
    title: d.title.trim(),
    schedule: scheduleOf(d) ?? { kind: "cron", expr: "" },
    timezone: d.timezone.trim() || undefined,
    agent_id: d.agentId,
    prompt: d.prompt,
    run_context: runContext,
    client: base?.client ?? undefined,
    policies: {
      on_approval: d.onApproval,
      approval_timeout_secs: d.onApproval === "wait" && timeout !== "" ? Math.max(1, Math.round(Number(timeout) * 60)) : null,
      on_overlap: d.onOverlap,
      on_downtime: d.onDowntime,
    },
    enabled: d.enabled,
  };
}

const IN_ZONE: Intl.DateTimeFormatOptions = {
  weekday: "short",
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
};

/** A fire time in the job's zone: "Wed, Dec 2, 2026, 09:00". */
export function formatInZone(iso: string, timezone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  try {
    return new Intl.DateTimeFormat(undefined, { ...IN_ZONE, timeZone: timezone }).format(d);
  } catch {
    return iso;
  }
}
