// Scheduled jobs in the browser against a real `skald serve` and the strict fake provider: a job is
// added on the Jobs page through its form (the engine's preview of the schedule shown as it is
// typed, a wrong cron schedule refused under its field), Run now starts a run, the run history
// shows it done with its tokens, and its link opens the run's session with the job's prompt and
// the agent's answer; the home chat shows the run's notice with that answer and a link to the
// session, until it is dismissed, and the home agent's briefing of the run's end. A job added by another client shows up by itself (its
// `job_changed` event, no poll); its run, which the model never answers, is killed from the
// history and the job deleted with its history. axe-core finds no serious violation on the page,
// its form, its run history, the notice or the delete dialog, in either theme.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertAxeBothThemes } from "../lib/axe.mjs";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { firstMessage, offeredTools, textReply } from "../lib/fake_llm.mjs";

const TITLE = "Morning file count";
const PROMPT = "JOB-COUNT: count the files in the project and say how many";
const ANSWER = "The project holds 17 files.";
const BRIEFING = "BRIEFING-E2E: your morning file count ran fine (17 files).";

describe("scheduled jobs: add on the Jobs page, run now, open the run's session", () => {
  const chat = chatFixture({
    workdir: "jobs",
    chunkDelayMs: 5,
    byPrompt: {
      // The run's requests start with the job's prompt, whatever else asks the provider.
      "JOB-COUNT": textReply(ANSWER),
      // Each run's end is reported home, where the home agent writes a briefing (the killed
      // run's too, later).
      "[briefing]": [textReply(BRIEFING), textReply("BRIEFING-E2E: the slow job was stopped.")],
    },
    hash: "#jobs",
  });
  const { pageErrors, shoot, waitForHash } = chat;
  let fake, server, page, workdir;
  let sessionHref;

  const form = () => page.getByRole("form", { name: "Add a job" });
  const runs = () => page.getByRole("table", { name: `Runs of ${TITLE}` });
  const axeBothThemes = (what) => assertAxeBothThemes(page, what);

  before(async () => {
    ({ fake, server, page, workdir } = await chat.start());
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
  });

  after(() => chat.stop());

  test("the sidebar leads to the Jobs page, which has no job yet", async () => {
    const link = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" });
    assert.equal(await link.getAttribute("aria-current"), "page");
    await page.getByText("No jobs yet").waitFor();
  });

  test("the form previews the schedule, refuses a wrong one under its field, and adds the job", async () => {
    await page.getByRole("button", { name: "Add job" }).click();
    await form().waitFor();
    await form().getByLabel("Title").fill(TITLE);
    await form().getByLabel("Prompt").fill(PROMPT);
    // The form picks the default agent once the agent list has loaded: wait for it, not a race.
    const agent = await form().getByLabel("Agent").elementHandle();
    await page.waitForFunction((el) => el.value !== "", agent, { timeout: 10_000 });
    assert.equal(await agent.inputValue(), "generalist");
    await form().getByLabel("Time zone").fill("Europe/Berlin");

    // Five fields, as most cron tools take: the engine says it wants seven, under the field.
    const cron = form().getByLabel("Cron schedule");
    await cron.fill("0 9 * * 1-5");
    const error = form().locator(".field", { has: page.getByLabel("Cron schedule") }).locator(".field-error");
    await error.waitFor();
    assert.match(await error.innerText(), /seven fields/);
    assert.equal(await cron.getAttribute("aria-invalid"), "true");

    await cron.fill("0 0 9 * * 1-5 *");
    await form().getByText("every weekday at 09:00, Europe/Berlin").waitFor();
    const times = form().getByRole("list", { name: "Next runs" }).getByRole("listitem");
    await page.waitForFunction(() => document.querySelectorAll(".preview-times li").length === 5);
    assert.equal(await times.count(), 5);
    assert.equal(await cron.getAttribute("aria-invalid"), null);
    await form().getByLabel("Working directory (optional)").fill(workdir);
    await shoot("60-job-form");
    await axeBothThemes("the add form");

    await form().getByRole("button", { name: "Add job" }).click();
    await form().waitFor({ state: "detached" });
    const row = page.locator("tr", { has: page.getByRole("button", { name: `Run now: ${TITLE}` }) });
    await row.getByText("every weekday at 09:00, Europe/Berlin").waitFor();
    await row.getByText("never run").waitFor();
    assert.ok(await row.locator("time").getAttribute("datetime"), "a next run is shown");

    const [job] = await server.call("list_jobs");
    assert.equal(job.title, TITLE);
    assert.equal(job.timezone, "Europe/Berlin");
    assert.deepEqual(job.schedule, { kind: "cron", expr: "0 0 9 * * 1-5 *" });
    assert.equal(job.run_context?.working_directory, workdir);
    assert.equal(job.enabled, true);
  });

  test("Run now starts a run that the history shows done, with its session", async () => {
    await page.getByRole("button", { name: `Run now: ${TITLE}` }).click();
    await runs().waitFor();
    const run = runs().locator("tbody tr").first();
    await page.waitForFunction(
      () => document.querySelector(".runs-table tbody tr")?.getAttribute("data-state") === "done",
      null,
      { timeout: 30_000 },
    );
    assert.match(await run.innerText(), /done/);
    assert.match(await run.innerText(), /run now/);
    assert.match(await run.innerText(), /\d+ in \/ \d+ out/, "the run's tokens are shown");
    assert.equal(await run.getByRole("button", { name: /Kill/ }).count(), 0, "an ended run offers no Kill");
    const jobRow = page.locator("tr", { has: page.getByRole("button", { name: `Run now: ${TITLE}` }) });
    await jobRow.getByText("done").waitFor();

    const link = run.getByRole("link", { name: /^Session #\d+$/ });
    sessionHref = await link.getAttribute("href");
    assert.match(sessionHref, /^#session\/\d+$/);
    await shoot("61-job-run-done");
    await axeBothThemes("the run history");
  });

  test("the run's link opens its session with the job's prompt and the answer", async () => {
    await runs().locator("tbody tr").first().getByRole("link", { name: /^Session #\d+$/ }).click();
    await waitForHash(sessionHref);
    const tree = page.getByRole("list", { name: "Session messages" });
    await tree.getByText(ANSWER).first().waitFor();
    const rows = await tree.innerText();
    assert.match(rows, /JOB-COUNT: count the files in the project/, "the session starts with the job's prompt");
    assert.match(rows, /The project holds 17 files\./, "and holds the agent's answer");
    await shoot("62-job-run-session");
  });

  test("the home chat shows the run's notice with its answer and session, until dismissed", async () => {
    await page.goto(`${server.url}#chat/web`);
    const notices = page.getByRole("region", { name: "Notices from scheduled jobs" });
    const notice = notices.getByRole("listitem").first();
    await notice.waitFor();
    const text = await notice.innerText();
    assert.match(text, new RegExp(`Job: ${TITLE} — done`));
    assert.match(text, /The project holds 17 files\./);
    assert.equal(await notice.getByRole("link", { name: /^Open its session #\d+$/ }).getAttribute("href"), sessionHref);
    await shoot("64-job-home-notice");
    await axeBothThemes("the home chat's notice");
    await notice.getByRole("button", { name: `Dismiss: Job ${TITLE} done` }).click();
    await notices.waitFor({ state: "detached" });
    assert.deepEqual(await server.call("home_notices", {}), []);

    // The run's end also reached home as a briefing: a line saying what arrived (never the
    // reported facts themselves), then the home agent's briefing.
    const log = page.getByRole("list", { name: "Conversation" });
    await log.getByText("Briefing: Background work reported 1 thing while you were away.").waitFor({ timeout: 15_000 });
    await log.getByText(BRIEFING).waitFor({ timeout: 15_000 });
    assert.equal(await log.getByText(/"fact":/).count(), 0, "the raw facts stay out of the chat");
    const [note] = await server.call("list_notifications", {});
    assert.equal(note.event_type, "job_run_done");
    assert.match(note.summary, new RegExp(`${TITLE}.*finished: The project holds 17 files`));
    assert.notEqual(note.delivered_session_id, null);
    await shoot("65-job-briefing-at-home");
    await axeBothThemes("the home chat's briefing");
  });

  test("the delete dialog asks about the history; cancelled, the job stays", async () => {
    await page.goto(`${server.url}#jobs`);
    await page.waitForFunction(() => window.location.hash.startsWith("#jobs"));
    await page.getByRole("button", { name: `Delete: ${TITLE}` }).click();
    const dialog = page.getByRole("dialog", { name: `Delete job “${TITLE}”?` });
    await dialog.waitFor();
    assert.equal(await dialog.getByRole("radio", { name: /Keep the run history/ }).isChecked(), true);
    await axeBothThemes("the delete dialog");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.equal((await server.call("list_jobs")).length, 1);
  });

  test("a running run is killed from its history, then its job is deleted with its history", async () => {
    const SLOW = "Slow job";
    // The model never answers this run: it runs until it is killed.
    await fake.push({ type: "stall", ms: 600_000, then_hang: true }, { prompt: "JOB-SLOW" });
    const job = await server.call("add_job", {
      job: {
        title: SLOW,
        schedule: { kind: "every", seconds: 86_400 },
        timezone: "UTC",
        agent_id: "generalist",
        prompt: "JOB-SLOW: take your time",
      },
    });
    // Added by another client: its job_changed event reaches the open page (nothing polls).
    await page.getByRole("button", { name: `Run now: ${SLOW}` }).click({ timeout: 5_000 });
    const history = page.getByRole("table", { name: `Runs of ${SLOW}` });
    await history.waitFor();
    const stateOfFirst = (want) =>
      page.waitForFunction(
        (state) => document.querySelector(".runs-table tbody tr")?.getAttribute("data-state") === state,
        want,
        { timeout: 30_000 },
      );
    await stateOfFirst("running");
    const run = history.locator("tbody tr").first();
    const runId = await run.getAttribute("data-run-id");
    await shoot("63-job-run-running");
    await run.getByRole("button", { name: `Kill run ${runId}` }).click();
    await stateOfFirst("killed");
    assert.match(await run.innerText(), /killed/);
    assert.equal(await run.getByRole("button", { name: /Kill/ }).count(), 0);
    const [stored] = await server.call("list_job_runs", { job_id: job.id });
    assert.equal(stored.state, "killed");

    await page.getByRole("button", { name: `Delete: ${SLOW}` }).click();
    const dialog = page.getByRole("dialog", { name: `Delete job “${SLOW}”?` });
    await dialog.getByRole("radio", { name: "Delete the run history too" }).check();
    await dialog.getByRole("button", { name: "Delete job" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByRole("button", { name: `Run now: ${SLOW}` }).waitFor({ state: "detached" });
    assert.deepEqual((await server.call("list_jobs")).map((j) => j.title), [TITLE]);
    await assert.rejects(server.call("list_job_runs", { job_id: job.id }), /404|not_found/);
  });

  test("the run's request was scripted and valid, and a run is never offered execute_task", async () => {
    const requests = (await fake.requests()).filter((r) => /JOB-COUNT/.test(firstMessage(r.body)));
    assert.equal(requests.length, 1, JSON.stringify((await fake.requests()).map((r) => firstMessage(r.body))));
    for (const r of requests) {
      assert.equal(r.validation_error ?? null, null);
      assert.equal(r.unscripted, false);
      assert.equal(offeredTools(r.body).includes("execute_task"), false);
    }
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
