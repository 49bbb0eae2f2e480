import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { MockBackend } from "../test/mockBackend";
import { jobInfo, jobRun } from "../test/mockJobs";
import { renderApp } from "../test/renderApp";

function backendWithJobs() {
  const backend = new MockBackend();
  backend.jobs.jobs = [
    jobInfo(1, { title: "Morning summary" }),
    jobInfo(2, {
      title: "Nightly backup check",
      schedule: { kind: "every", seconds: 3600 },
      description: "every hour, UTC",
      timezone: "UTC",
      enabled: false,
      next_run_at: null,
    }),
  ];
  backend.jobs.nextJobId = 3;
  backend.jobs.runs = [
    jobRun(4, { job_id: 1, state: "waiting", ended_at: null, reason: null, session_id: 54 }),
    jobRun(3, { job_id: 1, state: "running", ended_at: null, reason: null, session_id: 53 }),
    jobRun(2, { job_id: 1, state: "failed", reason: "the model refused the request", session_id: 52 }),
    jobRun(1, { job_id: 1, state: "missed", session_id: null, started_at: null, ended_at: null, input_tokens: 0, output_tokens: 0, cost_usd: null }),
  ];
  backend.jobs.nextRunId = 5;
  return backend;
}

const row = (title: string) => screen.getByRole("button", { name: `Run now: ${title}` }).closest("tr") as HTMLElement;

describe("Jobs page", () => {
  it("lists each job with its schedule in words, next run, enabled state and last run", async () => {
    renderApp(backendWithJobs(), "#jobs");
    const table = await screen.findByRole("table", { name: "Jobs" });
    const headers = within(table).getAllByRole("columnheader").map((h) => h.textContent);
    expect(headers).toEqual(["Job", "Schedule", "Next run", "Last run", "Actions"]);

    const morning = row("Morning summary");
    expect(within(morning).getByText("every weekday at 09:00, Europe/Berlin")).toBeTruthy();
    expect(morning.querySelector("time")?.getAttribute("dateTime")).toBe("2026-12-02T08:00:00Z");
    expect(within(morning).getByText("waiting for a person")).toBeTruthy();
    expect(within(morning).getByRole("button", { name: "Disable: Morning summary" })).toBeTruthy();

    const nightly = row("Nightly backup check");
    expect(within(nightly).getByText("every hour, UTC")).toBeTruthy();
    expect(within(nightly).getAllByText("disabled")).toHaveLength(2);
    expect(within(nightly).getByText("never run")).toBeTruthy();
    expect(within(nightly).getByRole("button", { name: "Enable: Nightly backup check" })).toBeTruthy();
  });

  it("says what to do when there is no job", async () => {
    renderApp(new MockBackend(), "#jobs");
    expect(await screen.findByText("No jobs yet")).toBeTruthy();
  });

  it("enables a disabled job", async () => {
    const user = userEvent.setup();
    const backend = backendWithJobs();
    renderApp(backend, "#jobs");
    await user.click(await screen.findByRole("button", { name: "Enable: Nightly backup check" }));
    expect(await screen.findByRole("button", { name: "Disable: Nightly backup check" })).toBeTruthy();
    expect(backend.jobs.jobs.find((j) => j.id === 2)?.enabled).toBe(true);
  });

  it("adds a job through the form with the preview of its schedule and its policies", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    renderApp(backend, "#jobs");
    await user.click(await screen.findByRole("button", { name: "Add job" }));
    const form = screen.getByRole("form", { name: "Add a job" });
    expect(document.activeElement).toBe(within(form).getByLabelText("Title"));

    await user.type(within(form).getByLabelText("Title"), "Weekly report");
    await user.type(within(form).getByLabelText("Prompt"), "Write the weekly report.");
    await waitFor(() => expect((within(form).getByLabelText("Agent") as HTMLSelectElement).value).toBe("generalist"));
    const zone = within(form).getByLabelText("Time zone") as HTMLInputElement;
    expect(zone.value).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    await user.clear(zone);
    await user.type(zone, "Europe/Berlin");
    const cron = within(form).getByLabelText("Cron schedule");
    await user.clear(cron);
    await user.type(cron, "0 30 8 * * 1 *");

    // The engine's words for what was typed (after the previous preview), and its next five times.
    expect(await within(form).findByText("cron 0 30 8 * * 1 *, Europe/Berlin")).toBeTruthy();
    const times = within(form).getByRole("list", { name: "Next runs" });
    expect(within(times).getAllByRole("listitem")).toHaveLength(5);

    await user.selectOptions(within(form).getByLabelText("When it needs a person’s approval"), "wait");
    await user.type(within(form).getByLabelText("Give up after (minutes, optional)"), "90");
    await user.selectOptions(within(form).getByLabelText("When it is due while the previous run still goes on"), "queue_one");
    await user.selectOptions(within(form).getByLabelText("When runs were missed while Skald was closed"), "skip");
    await user.type(within(form).getByLabelText("Working directory (optional)"), "/srv/reports");
    await user.click(within(form).getByRole("button", { name: "Add job" }));

    await waitFor(() => expect(screen.queryByRole("form", { name: "Add a job" })).toBeNull());
    expect(backend.jobs.added).toEqual([
      {
        title: "Weekly report",
        schedule: { kind: "cron", expr: "0 30 8 * * 1 *" },
        timezone: "Europe/Berlin",
        agent_id: "generalist",
        prompt: "Write the weekly report.",
        run_context: {
          working_directory: "/srv/reports",
          system_prompt: [],
          allow_fs_reads: [],
          allow_fs_writes: [],
          security_group: null,
        },
        client: undefined,
        policies: { on_approval: "wait", approval_timeout_secs: 5400, on_overlap: "queue_one", on_downtime: "skip" },
        enabled: true,
      },
    ]);
    expect(await screen.findByRole("button", { name: "Run now: Weekly report" })).toBeTruthy();
  }, 20_000);

  it("shows the engine's schedule error under the schedule field, and the form's own under empty fields", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    renderApp(backend, "#jobs");
    await user.click(await screen.findByRole("button", { name: "Add job" }));
    const form = screen.getByRole("form", { name: "Add a job" });

    await user.click(within(form).getByRole("button", { name: "Add job" }));
    const title = within(form).getByLabelText("Title");
    expect(title.getAttribute("aria-invalid")).toBe("true");
    expect(title.getAttribute("aria-describedby")).toBeTruthy();
    const titleError = document.getElementById(title.getAttribute("aria-describedby") ?? "");
    expect(titleError?.textContent).toBe("Give the job a title.");
    expect(within(form).getByText("Write what the agent should do on each run.")).toBeTruthy();

    const cron = within(form).getByLabelText("Cron schedule");
    await user.clear(cron);
    await user.type(cron, "0 9 * * *");
    const message = await within(form).findByText(/a cron schedule has seven fields/);
    // Under the field it is about, and named by it for assistive tech.
    expect(cron.getAttribute("aria-invalid")).toBe("true");
    expect(cron.getAttribute("aria-describedby")?.split(" ")).toContain(message.id);
    expect(message.closest(".field")).toBe(cron.closest(".field"));

    // A zone the engine does not know is shown under the time zone field.
    await user.clear(cron);
    await user.type(cron, "0 0 9 * * * *");
    const zone = within(form).getByLabelText("Time zone");
    await user.clear(zone);
    await user.type(zone, "Mars/Olympus");
    const zoneError = await within(form).findByText(/unknown time zone "Mars\/Olympus"/);
    expect(zoneError.closest(".field")).toBe(zone.closest(".field"));
    expect(cron.getAttribute("aria-invalid")).toBeNull();
    expect(backend.jobs.added).toEqual([]);
  }, 20_000);

  it("shows an error the engine gives on saving under its field", async () => {
    const user = userEvent.setup();
    const backend = backendWithJobs();
    renderApp(backend, "#jobs");
    await user.click(await screen.findByRole("button", { name: "Edit: Morning summary" }));
    const form = screen.getByRole("form", { name: "Edit job “Morning summary”" });
    expect((within(form).getByLabelText("Title") as HTMLInputElement).value).toBe("Morning summary");
    // The agent was removed since the job was made: the engine refuses it by name.
    backend.jobs.taskAgents = ["researcher"];
    await user.click(within(form).getByRole("button", { name: "Save job" }));
    const agent = within(form).getByLabelText("Agent");
    const message = await within(form).findByText(/no task agent `generalist`/);
    expect(message.closest(".field")).toBe(agent.closest(".field"));
    expect(agent.getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByRole("form", { name: "Edit job “Morning summary”" })).toBeTruthy();
  });

  it("keeps a disabled job disabled and its run context when it is edited", async () => {
    const user = userEvent.setup();
    const backend = backendWithJobs();
    const context = { working_directory: "/srv", system_prompt: ["Be brief."], allow_fs_reads: [], allow_fs_writes: [], security_group: null };
    backend.jobs.jobs[1] = { ...backend.jobs.jobs[1]!, run_context: context, client: "local" };
    renderApp(backend, "#jobs");
    await user.click(await screen.findByRole("button", { name: "Edit: Nightly backup check" }));
    const form = screen.getByRole("form", { name: "Edit job “Nightly backup check”" });
    expect((within(form).getByLabelText("Every") as HTMLInputElement).value).toBe("1");
    expect((within(form).getByLabelText("Interval unit") as HTMLSelectElement).value).toBe("hours");
    await user.click(within(form).getByRole("button", { name: "Save job" }));
    await waitFor(() => expect(backend.jobs.edited).toHaveLength(1));
    const { job } = backend.jobs.edited[0]!;
    expect(job.enabled).toBe(false);
    expect(job.schedule).toEqual({ kind: "every", seconds: 3600 });
    expect(job.run_context).toEqual(context);
    expect(job.client).toBe("local");
  });

  it("asks in a dialog whether to keep the run history before deleting", async () => {
    const user = userEvent.setup();
    const backend = backendWithJobs();
    backend.jobs.runs = backend.jobs.runs.filter((r) => r.state !== "running" && r.state !== "waiting");
    renderApp(backend, "#jobs");
    const remove = await screen.findByRole("button", { name: "Delete: Morning summary" });
    await user.click(remove);
    const dialog = screen.getByRole("dialog", { name: "Delete job “Morning summary”?" });
    expect(dialog.getAttribute("aria-modal")).toBe("true");
    const keep = within(dialog).getByRole("radio", { name: /Keep the run history/ }) as HTMLInputElement;
    expect(keep.checked).toBe(true);
    expect(document.activeElement).toBe(keep);
    // Tab goes round inside the dialog: the chosen radio, Delete job, Cancel, and back.
    await user.tab();
    expect(document.activeElement).toBe(within(dialog).getByRole("button", { name: "Delete job" }));
    await user.tab();
    expect(document.activeElement).toBe(within(dialog).getByRole("button", { name: "Cancel" }));
    await user.tab();
    expect(document.activeElement).toBe(keep);
    await user.tab({ shift: true });
    expect(document.activeElement).toBe(within(dialog).getByRole("button", { name: "Cancel" }));

    // Escape cancels, nothing deleted, focus back on the button.
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(document.activeElement).toBe(remove);
    expect(backend.jobs.deleted).toEqual([]);

    await user.click(remove);
    const again = screen.getByRole("dialog");
    await user.click(within(again).getByRole("radio", { name: "Delete the run history too" }));
    await user.click(within(again).getByRole("button", { name: "Delete job" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(backend.jobs.deleted).toEqual([{ job_id: 1, remove_history: true }]);
    expect(backend.jobs.runs.filter((r) => r.job_id === 1)).toEqual([]);
    await waitFor(() => expect(screen.queryByRole("button", { name: "Run now: Morning summary" })).toBeNull());
  });

  it("keeps the history when asked to, and shows a refusal in the dialog", async () => {
    const user = userEvent.setup();
    const backend = backendWithJobs();
    renderApp(backend, "#jobs");
    await user.click(await screen.findByRole("button", { name: "Delete: Morning summary" }));
    const dialog = screen.getByRole("dialog");
    // Run 3 is still running: the engine refuses until it is killed.
    await user.click(within(dialog).getByRole("button", { name: "Delete job" }));
    expect((await within(dialog).findByRole("alert")).textContent).toMatch(/has a run that has not ended/);
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));

    backend.jobs.runs = backend.jobs.runs.filter((r) => r.state !== "running" && r.state !== "waiting");
    await user.click(screen.getByRole("button", { name: "Delete: Morning summary" }));
    await user.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete job" }));
    await waitFor(() => expect(backend.jobs.deleted).toEqual([{ job_id: 1, remove_history: false }]));
    expect(backend.jobs.runs.filter((r) => r.job_id === 1)).toHaveLength(2);
  });

  it("opens a job's run history with each run's state, reason, session link and Kill", async () => {
    const user = userEvent.setup();
    const backend = backendWithJobs();
    renderApp(backend, "#jobs");
    const toggle = await screen.findByRole("button", { name: "Runs: Morning summary" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    await user.click(toggle);
    expect(window.location.hash).toBe("#jobs/1");
    const runs = await screen.findByRole("table", { name: "Runs of Morning summary" });
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    const rows = within(runs).getAllByRole("row").slice(1);
    expect(rows.map((r) => r.getAttribute("data-state"))).toEqual(["waiting", "running", "failed", "missed"]);

    const [waiting, running, failed, missed] = rows as [HTMLElement, HTMLElement, HTMLElement, HTMLElement];
    expect(within(waiting).getByText("waiting for a person")).toBeTruthy();
    expect(within(waiting).getByRole("link", { name: "Answer it in the Inbox" }).getAttribute("href")).toBe("#inbox");
    expect(within(waiting).getByRole("button", { name: "Kill run 4" })).toBeTruthy();
    expect(within(running).getByRole("link", { name: "Session #53" }).getAttribute("href")).toBe("#session/53");
    expect(within(failed).getByText("the model refused the request")).toBeTruthy();
    expect(within(failed).getByText("1,200 in / 300 out")).toBeTruthy();
    expect(within(failed).getByText("$0.0042")).toBeTruthy();
    expect(within(failed).queryByRole("button")).toBeNull();
    expect(within(missed).queryByRole("link")).toBeNull();

    await user.click(within(running).getByRole("button", { name: "Kill run 3" }));
    expect(backend.jobs.killed).toEqual([3]);
    await waitFor(() => expect(within(runs).getAllByRole("row")[2]?.getAttribute("data-state")).toBe("killed"));
    expect(within(within(runs).getAllByRole("row")[2]!).queryByRole("button", { name: "Kill run 3" })).toBeNull();

    await user.click(within(screen.getByRole("table", { name: "Runs of Morning summary" })).getByRole("link", { name: "Session #52" }));
    expect(window.location.hash).toBe("#session/52");
  });

  it("opens the history named in the address, and Run now opens it with the new run", async () => {
    const user = userEvent.setup();
    const backend = backendWithJobs();
    renderApp(backend, "#jobs/2");
    expect(await screen.findByText("No runs yet")).toBeTruthy();
    await user.click(screen.getByRole("button", { name: "Run now: Morning summary" }));
    expect(backend.jobs.ranNow).toEqual([1]);
    expect(await screen.findByText("Run 5 started.")).toBeTruthy();
    expect(window.location.hash).toBe("#jobs/1");
    const runs = await screen.findByRole("table", { name: "Runs of Morning summary" });
    const first = within(runs).getAllByRole("row")[1]!;
    expect(first.getAttribute("data-state")).toBe("queued");
    expect(within(first).getByText("run now")).toBeTruthy();

    // Once that run has ended, the line saying it started goes.
    const started = backend.jobs.runs.find((r) => r.id === 5)!;
    const done = { ...started, state: "done" as const, ended_at: "2026-12-01T08:00:09Z" };
    backend.jobs.runs[backend.jobs.runs.indexOf(started)] = done;
    act(() => backend.emit({ session_id: null, source: null, frame: null, seq: 1, event: { type: "job_run_update", run: done } }));
    await waitFor(() => expect(within(row("Morning summary")).getByText("done")).toBeTruthy());
    expect(screen.queryByText("Run 5 started.")).toBeNull();
  });

  it("follows a run's state as the engine announces it, in the list and the open history", async () => {
    const backend = backendWithJobs();
    renderApp(backend, "#jobs/2");
    await screen.findByText("No runs yet");
    const run = jobRun(9, { job_id: 2, state: "running", ended_at: null, session_id: 70 });
    backend.jobs.runs.unshift(run);
    act(() => backend.emit({ session_id: null, source: null, frame: null, seq: 1, event: { type: "job_run_update", run } }));
    const history = await screen.findByRole("table", { name: "Runs of Nightly backup check" });
    expect(within(row("Nightly backup check")).getByText("running")).toBeTruthy();

    const done = { ...run, state: "done" as const, ended_at: "2026-12-01T08:00:09Z" };
    backend.jobs.runs[0] = done;
    act(() => backend.emit({ session_id: null, source: null, frame: null, seq: 2, event: { type: "job_run_update", run: done } }));
    await waitFor(() => expect(within(history).getAllByRole("row")[1]?.getAttribute("data-state")).toBe("done"));
    expect(within(row("Nightly backup check")).getByText("done")).toBeTruthy();
  });
});

describe("Jobs page without polling", () => {
  it("shows a job added, edited or deleted in another process when the engine says so", async () => {
    const backend = backendWithJobs();
    renderApp(backend, "#jobs");
    await screen.findByRole("table", { name: "Jobs" });
    const listed = () => screen.getAllByRole("button", { name: /^Run now: / }).map((b) => b.getAttribute("aria-label"));
    expect(listed()).toEqual(["Run now: Morning summary", "Run now: Nightly backup check"]);
    const changed = (job_id: number, deleted: boolean, seq: number) =>
      act(() => backend.emit({ session_id: null, source: null, frame: null, seq, event: { type: "job_changed", job_id, deleted } }));

    // `skald jobs add` in a terminal: only its event tells the page.
    backend.jobs.jobs.push(jobInfo(3, { title: "Added elsewhere" }));
    changed(3, false, 1);
    await waitFor(() => expect(listed()).toContain("Run now: Added elsewhere"));

    backend.jobs.jobs[0] = { ...backend.jobs.jobs[0]!, title: "Renamed elsewhere" };
    changed(1, false, 2);
    await waitFor(() => expect(listed()[0]).toBe("Run now: Renamed elsewhere"));

    backend.jobs.jobs = backend.jobs.jobs.filter((j) => j.id !== 2);
    changed(2, true, 3);
    await waitFor(() => expect(listed()).toEqual(["Run now: Renamed elsewhere", "Run now: Added elsewhere"]));
  });

  it("reads the jobs only when something happened: no timer reads them again", async () => {
    const backend = backendWithJobs();
    let reads = 0;
    const list = backend.list_jobs;
    backend.list_jobs = () => {
      reads += 1;
      return list();
    };
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      renderApp(backend, "#jobs");
      await screen.findByRole("table", { name: "Jobs" });
      const before = reads;
      await act(async () => {
        await vi.advanceTimersByTimeAsync(60_000);
      });
      expect(reads).toBe(before);
    } finally {
      vi.useRealTimers();
    }
  });
});
