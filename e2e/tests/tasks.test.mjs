// Async tasks in the browser against a real `skald serve` and the strict fake provider: the chat
// agent starts the built-in `generalist` in the background (`execute_task` mode async) and its
// turn ends while the task runs. The task's card follows it to its report, the idle chat answers
// the report by itself; a second task is stopped from its card, the chat answers that it stopped,
// and Continue runs it again from where it stopped to a report. A reload rebuilds both cards and a
// card opens the task's own session.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call, firstMessage, offeredTools, textReply as text } from "../lib/fake_llm.mjs";

const TASK_A = "TASK-A: count the files in the project";
const TASK_B = "TASK-B: count the files again, slowly";
/** A task's label: its agent and its session id. */
const LABEL = /^generalist#(\d+)$/;

const startTask = (prompt) => call("execute_task", { mode: "async", agent_id: "generalist", prompt });

describe("async tasks in the chat: cards, reports, stop and continue", () => {
  const chat = chatFixture({
    workdir: "tasks",
    chunkDelayMs: 10,
    // The chat's own rounds come from the shared queue in order; each task's rounds are keyed by
    // its task, since they run beside the chat's.
    script: [startTask(TASK_A), text("Started the generalist."), text("The generalist counted 42 files.")],
    // The task is still working when the chat's turn ends.
    byPrompt: { "TASK-A": [{ type: "stall", ms: 2500 }, text("There are 42 files.")] },
  });
  const { pageErrors, shoot, send, sendButton, waitForHash } = chat;
  let fake, page;
  const labels = [];

  const cards = () => page.locator(".task-card");
  const card = (label) => page.locator(".task-card", { has: page.getByRole("link", { name: `task ${label}`, exact: true }) });
  const answer = (content) => page.locator(".bubble-assistant:not(.is-streaming)", { hasText: content });

  /** Waits until `locator`'s text matches `pattern`. */
  async function waitForText(locator, pattern, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = (await locator.innerText().catch(() => "")) ?? "";
      if (pattern.test(last)) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`never matched ${pattern}: ${JSON.stringify(last)}`);
  }

  before(async () => {
    ({ fake, page } = await chat.start());
  });

  after(() => chat.stop());

  test("a task's card runs after the turn ended, then its report is answered by the idle chat", async () => {
    await send("Count the files in the background");

    await cards().first().waitFor();
    const label = await cards().first().getByRole("link").innerText();
    const [, childId] = LABEL.exec(label.replace(/^task /, "")) ?? [];
    assert.ok(childId, `a task label: ${label}`);
    labels.push(label.replace(/^task /, ""));
    const taskCard = card(labels[0]);
    assert.equal(await taskCard.getByRole("link").getAttribute("href"), `#session/${childId}`);

    // The turn ended with the task still running: the composer is free and the card can stop it.
    await answer("Started the generalist.").waitFor();
    await sendButton().waitFor();
    await waitForText(taskCard, /running/);
    await taskCard.getByRole("button", { name: `Stop task ${labels[0]}` }).waitFor();
    await shoot("50-task-running");

    await answer("The generalist counted 42 files.").waitFor({ timeout: 15_000 });
    await waitForText(taskCard, /finished, reported/);
    assert.match(await taskCard.locator(".task-report").innerText(), /There are 42 files\./);
    assert.equal(await taskCard.getByRole("button").count(), 0, "a finished task offers no action");
    await sendButton().waitFor();
    await shoot("51-task-reported");
  });

  test("a running task is stopped from its card, the chat answers that, and Continue runs it to a report", async () => {
    await fake.push([startTask(TASK_B), text("Started another count."), text("The second count was stopped.")]);
    // It never answers until it is stopped; continued, it answers at once.
    await fake.push({ type: "stall", ms: 600_000, then_hang: true }, { prompt: "TASK-B" });
    await send("Count them again in the background");

    await answer("Started another count.").waitFor();
    await page.waitForFunction(() => document.querySelectorAll(".task-card").length === 2);
    const label = (await cards().nth(1).getByRole("link").innerText()).replace(/^task /, "");
    assert.match(label, LABEL);
    labels.push(label);
    const taskCard = card(label);
    const stop = taskCard.getByRole("button", { name: `Stop task ${label}` });
    await stop.waitFor();
    await stop.click();

    await waitForText(taskCard, /stopped, reported/);
    await answer("The second count was stopped.").waitFor({ timeout: 15_000 });
    const again = taskCard.getByRole("button", { name: `Continue task ${label}` });
    await again.waitFor();
    await shoot("52-task-stopped");

    await fake.push(text("The second count found 43 files."));
    await fake.push(text("There are 43 files."), { prompt: "TASK-B" });
    await again.click();
    await answer("The second count found 43 files.").waitFor({ timeout: 15_000 });
    await waitForText(taskCard, /finished, reported/);
    assert.match(await taskCard.locator(".task-report").innerText(), /There are 43 files\./);
    assert.equal(await taskCard.getByRole("button").count(), 0);
    await shoot("53-task-continued");
  });

  test("a reload rebuilds both cards, and a card opens the task's session", async () => {
    await page.reload();
    await answer("The second count found 43 files.").waitFor();
    for (const label of labels) {
      await waitForText(card(label), /finished, reported/);
    }
    const [, childId] = LABEL.exec(labels[0]);
    await card(labels[0]).getByRole("link").click();
    await waitForHash(`#session/${childId}`);
    const tree = page.getByRole("list", { name: "Session messages" });
    await tree.locator("li[data-kind]").first().waitFor();
    const rows = await tree.innerText();
    assert.match(rows, /TASK-A: count the files in the project/, "the task's session opens with its task");
    assert.match(rows, /There are 42 files\./, "and ends with its report");
    await shoot("54-task-session");
  });

  test("every request was scripted and valid; no tool was offered twice; tasks never get execute_task", async () => {
    const requests = await fake.requests();
    // Chat: start, started, answer; start, started, answer; answer. Tasks: A once, B twice.
    assert.equal(requests.length, 10, JSON.stringify(requests.map((r) => firstMessage(r.body))));
    for (const r of requests) {
      assert.equal(r.validation_error ?? null, null, `request ${r.seq} was valid`);
      assert.equal(r.unscripted, false, `request ${r.seq} was scripted`);
      const names = offeredTools(r.body);
      assert.equal(new Set(names).size, names.length, `no tool offered twice: ${names}`);
      const task = /^TASK-/.test(firstMessage(r.body));
      assert.equal(names.includes("execute_task"), !task, `execute_task only in the chat (request ${r.seq})`);
    }
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
