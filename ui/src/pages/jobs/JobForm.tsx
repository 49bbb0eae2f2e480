// The add/edit form of a scheduled job: what runs, when (with the engine's preview of the
// schedule in words and its next five fire times), where, and what a run does when it needs a
// person, overlaps the one before or comes after downtime. Every error shows under its field.
import { useEffect, useId, useMemo, useRef, useState, type FormEvent, type ReactNode } from "react";
import { FormFooter } from "../../components/FormFooter";
import { toApiError, useAgents, useSchedulePreview, type JobInfo, type JobInput, type JobSchedule } from "../../backend";
import {
  draftErrors,
  draftOf,
  errorText,
  fieldOfError,
  formatInZone,
  inputOf,
  newDraft,
  scheduleOf,
  type JobDraft,
  type JobField,
} from "./jobText";

/** How long the schedule must stay unchanged before the engine is asked for its preview. */
const PREVIEW_DELAY_MS = 350;

/** `value` once it has stayed the same for `delayMs` (compared with `Object.is`). */
function useSettled<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

/** Every zone the browser knows, for the time zone field's suggestions. */
function knownZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  try {
    return intl.supportedValuesOf?.("timeZone") ?? [];
  } catch {
    return [];
  }
}

type Errors = Partial<Record<JobField, string>>;

function FieldError({ id, message }: { id: string; message: string | undefined }) {
  return message ? (
    <span id={id} className="form-error field-error">
      {message}
    </span>
  ) : null;
}

function Choice<T extends string>({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: T;
  options: Array<{ value: T; label: string }>;
  onChange(value: T): void;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as T)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function JobForm({
  job,
  onSave,
  onCancel,
}: {
  /** The job edited; `null` adds one. */
  job: JobInfo | null;
  onSave(input: JobInput): Promise<void>;
  onCancel(): void;
}) {
  const fid = useId();
  const agents = useAgents();
  const taskAgents = (agents.data ?? []).filter((a) => a.type === "task" && !a.error);
  const [draft, setDraft] = useState<JobDraft>(() => (job ? draftOf(job) : newDraft("")));
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const titleRef = useRef<HTMLInputElement>(null);
  const [zones] = useState(knownZones);

  // A new job runs the first task agent (the built-in generalist) unless another is chosen.
  const firstAgent = taskAgents.find((a) => a.id === "generalist")?.id ?? taskAgents[0]?.id ?? "";
  if (draft.agentId === "" && firstAgent !== "") setDraft({ ...draft, agentId: firstAgent });

  useEffect(() => titleRef.current?.focus(), []);

  // Compared as text: a schedule object built anew at each render would never settle.
  const settledSchedule = useSettled(JSON.stringify(scheduleOf(draft)), PREVIEW_DELAY_MS);
  const schedule = useMemo(() => JSON.parse(settledSchedule) as JobSchedule | null, [settledSchedule]);
  const timezone = useSettled(draft.timezone, PREVIEW_DELAY_MS);
  const preview = useSchedulePreview(schedule, timezone);
  const previewMessage = preview.isError ? preview.error.message : null;
  const previewField = previewMessage ? (fieldOfError(previewMessage) ?? "schedule") : null;
  const previewError = previewMessage ? errorText(previewMessage) : null;

  function set<K extends keyof JobDraft>(key: K, value: JobDraft[K], field?: JobField) {
    setDraft((d) => ({ ...d, [key]: value }));
    if (field && errors[field]) setErrors(({ [field]: _fixed, ...rest }) => rest);
  }

  /** The message under a field: what the form or the engine said on saving, else the preview's. */
  const errorOf = (field: JobField) => errors[field] ?? (previewField === field ? (previewError ?? undefined) : undefined);
  const errorId = (field: JobField) => `${fid}-${field}-error`;
  /** The props that tie a control to its message and hint. */
  const described = (field: JobField, hint?: string) => {
    const ids = [errorOf(field) ? errorId(field) : null, hint ?? null].filter((x) => x !== null);
    return { "aria-invalid": errorOf(field) ? true : undefined, "aria-describedby": ids.length ? ids.join(" ") : undefined };
  };

  async function submit(event: FormEvent) {
    event.preventDefault();
    const found = draftErrors(draft);
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      await onSave(inputOf(draft, job));
    } catch (e) {
      const error = toApiError(e);
      const field = error.code === "invalid_input" ? fieldOfError(error.message) : null;
      if (field) setErrors({ [field]: errorText(error.message) });
      else setFormError(error.message);
    } finally {
      setBusy(false);
    }
  }

  const title = job === null ? "Add a job" : `Edit job “${job.title}”`;
  const kindHint = `${fid}-kind-hint`;
  let scheduleField: ReactNode;
  if (draft.kind === "cron") {
    scheduleField = (
      <div className="field field-wide">
        <label htmlFor={`${fid}-cron`}>Cron schedule</label>
        <input
          id={`${fid}-cron`}
          value={draft.cron}
          onChange={(e) => set("cron", e.target.value, "schedule")}
          spellCheck={false}
          placeholder="0 0 9 * * 1-5 *"
          {...described("schedule", kindHint)}
        />
        <span id={kindHint} className="field-hint">
          Seven fields: second, minute, hour, day of month, month, day of week (Sunday = 0), year. “0 0 9 * * 1-5 *” is
          every weekday at 09:00.
        </span>
        <FieldError id={errorId("schedule")} message={errorOf("schedule")} />
      </div>
    );
  } else if (draft.kind === "once") {
    scheduleField = (
      <div className="field">
        <label htmlFor={`${fid}-once`}>Date and time</label>
        <input
          id={`${fid}-once`}
          type="datetime-local"
          value={draft.once}
          onChange={(e) => set("once", e.target.value, "schedule")}
          {...described("schedule", kindHint)}
        />
        <span id={kindHint} className="field-hint">
          In the job’s time zone.
        </span>
        <FieldError id={errorId("schedule")} message={errorOf("schedule")} />
      </div>
    );
  } else {
    scheduleField = (
      <div className="field">
        <label htmlFor={`${fid}-every`}>Every</label>
        <span className="field-row">
          <input
            id={`${fid}-every`}
            type="number"
            min="1"
            step="any"
            value={draft.every}
            onChange={(e) => set("every", e.target.value, "schedule")}
            {...described("schedule", kindHint)}
          />
          <select aria-label="Interval unit" value={draft.unit} onChange={(e) => set("unit", e.target.value as JobDraft["unit"], "schedule")}>
            <option value="minutes">minutes</option>
            <option value="hours">hours</option>
            <option value="days">days</option>
          </select>
        </span>
        <span id={kindHint} className="field-hint">
          Counted from when the job is saved; at least one minute.
        </span>
        <FieldError id={errorId("schedule")} message={errorOf("schedule")} />
      </div>
    );
  }

  return (
    <form className="settings-form job-form" aria-label={title} onSubmit={(e) => void submit(e)} noValidate>
      <h2>{title}</h2>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${fid}-title`}>Title</label>
          <input
            id={`${fid}-title`}
            ref={titleRef}
            value={draft.title}
            onChange={(e) => set("title", e.target.value, "title")}
            placeholder="Morning summary"
            {...described("title")}
          />
          <FieldError id={errorId("title")} message={errorOf("title")} />
        </div>
        <div className="field">
          <label htmlFor={`${fid}-agent`}>Agent</label>
          <select id={`${fid}-agent`} value={draft.agentId} onChange={(e) => set("agentId", e.target.value, "agent")} {...described("agent")}>
            {draft.agentId !== "" && !taskAgents.some((a) => a.id === draft.agentId) ? (
              <option value={draft.agentId}>{draft.agentId}</option>
            ) : null}
            {draft.agentId === "" ? <option value="">{agents.isPending ? "Loading agents…" : "No task agent"}</option> : null}
            {taskAgents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} ({a.id})
              </option>
            ))}
          </select>
          <FieldError id={errorId("agent")} message={errorOf("agent")} />
        </div>
        <div className="field field-full">
          <label htmlFor={`${fid}-prompt`}>Prompt</label>
          <textarea
            id={`${fid}-prompt`}
            value={draft.prompt}
            onChange={(e) => set("prompt", e.target.value, "prompt")}
            rows={4}
            placeholder="What the agent does on each run"
            {...described("prompt")}
          />
          <FieldError id={errorId("prompt")} message={errorOf("prompt")} />
        </div>
        <Choice
          id={`${fid}-kind`}
          label="Runs"
          value={draft.kind}
          options={[
            { value: "cron", label: "On a cron schedule" },
            { value: "once", label: "Once, at a date and time" },
            { value: "every", label: "At a fixed interval" },
          ]}
          onChange={(v) => set("kind", v, "schedule")}
        />
        <div className="field">
          <label htmlFor={`${fid}-timezone`}>Time zone</label>
          <input
            id={`${fid}-timezone`}
            value={draft.timezone}
            onChange={(e) => set("timezone", e.target.value, "timezone")}
            list={`${fid}-zones`}
            spellCheck={false}
            placeholder="Europe/Berlin"
            {...described("timezone")}
          />
          <datalist id={`${fid}-zones`}>
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          <FieldError id={errorId("timezone")} message={errorOf("timezone")} />
        </div>
        {scheduleField}
        <div className="field field-full schedule-preview" aria-live="polite">
          {preview.data && !previewError ? (
            <>
              <span>
                Runs <strong>{preview.data.description}</strong>
              </span>
              {preview.data.next.length > 0 ? (
                <>
                  <span className="field-hint">Next {preview.data.next.length === 1 ? "run" : `${preview.data.next.length} runs`}:</span>
                  <ol className="preview-times" aria-label="Next runs">
                    {preview.data.next.map((t) => (
                      <li key={t}>
                        <time dateTime={t}>{formatInZone(t, preview.data.timezone)}</time>
                      </li>
                    ))}
                  </ol>
                </>
              ) : (
                <span className="field-hint">No run is left: the time has passed.</span>
              )}
            </>
          ) : null}
        </div>
        <div className="field field-wide">
          <label htmlFor={`${fid}-workdir`}>Working directory (optional)</label>
          <input
            id={`${fid}-workdir`}
            value={draft.workdir}
            onChange={(e) => set("workdir", e.target.value, "workdir")}
            spellCheck={false}
            placeholder="/home/me/project"
            {...described("workdir", `${fid}-workdir-hint`)}
          />
          <span id={`${fid}-workdir-hint`} className="field-hint">
            Where the run’s tools work. Empty: the directory Skald was started in.
          </span>
          <FieldError id={errorId("workdir")} message={errorOf("workdir")} />
        </div>
      </div>
      <fieldset className="job-policies">
        <legend>What a run does</legend>
        <div className="form-grid">
          <Choice
            id={`${fid}-approval`}
            label="When it needs a person’s approval"
            value={draft.onApproval}
            options={[
              { value: "wait", label: "Wait in the Inbox" },
              { value: "deny", label: "Deny at once and go on" },
            ]}
            onChange={(v) => set("onApproval", v, "timeout")}
          />
          {draft.onApproval === "wait" ? (
            <div className="field">
              <label htmlFor={`${fid}-timeout`}>Give up after (minutes, optional)</label>
              <input
                id={`${fid}-timeout`}
                type="number"
                min="1"
                step="any"
                value={draft.timeoutMinutes}
                onChange={(e) => set("timeoutMinutes", e.target.value, "timeout")}
                {...described("timeout", `${fid}-timeout-hint`)}
              />
              <span id={`${fid}-timeout-hint`} className="field-hint">
                The run ends “expired” when nobody answered by then. Empty: it waits as long as it takes.
              </span>
              <FieldError id={errorId("timeout")} message={errorOf("timeout")} />
            </div>
          ) : null}
          <Choice
            id={`${fid}-overlap`}
            label="When it is due while the previous run still goes on"
            value={draft.onOverlap}
            options={[
              { value: "skip", label: "Skip it" },
              { value: "queue_one", label: "Queue it to run after" },
            ]}
            onChange={(v) => set("onOverlap", v)}
          />
          <Choice
            id={`${fid}-downtime`}
            label="When runs were missed while Skald was closed"
            value={draft.onDowntime}
            options={[
              { value: "catch_up_once", label: "Run once to catch up" },
              { value: "skip", label: "Skip what was missed" },
            ]}
            onChange={(v) => set("onDowntime", v)}
          />
        </div>
      </fieldset>
      <div className="field field-check">
        <label>
          <input type="checkbox" checked={draft.enabled} onChange={(e) => set("enabled", e.target.checked)} />
          Enabled (runs on its schedule)
        </label>
      </div>
      <FormFooter error={formError} busy={busy} label={job === null ? "Add job" : "Save job"} onCancel={onCancel} />
    </form>
  );
}
