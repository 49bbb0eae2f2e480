// A sync sub-agent in the browser against a real `skald serve` and the strict fake provider: the
// model delegates with `execute_task` to the built-in `generalist`, whose write waits for
// approval. The chat shows the child's lane under its origin label with the child's approval card
// in it, the Inbox names the child, an approval writes the file, the child's answer ends the lane
// (not the turn), the parent answers; a reload rebuilds the lane from history, and the session's
// debug tree nests the child's rows under the spawning call.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call, firstMessage, offeredTools } from "../lib/fake_llm.mjs";

const CHILD_TASK = "CHILD-TASK: write report.md with a one-line summary";
const REPORT = "# Report\nThe harbour is calm today.\n";
const CHILD_ANSWER = "The sub-agent wrote report.md with the summary.";
const PARENT_ANSWER = "Done: your generalist sub-agent wrote report.md.";
/** An origin label of a child of the root: `agent#` and the frame id in eight hex digits. */
const CHILD_LABEL = /^generalist#[1-9][0-9]*$/;

describe("a sync sub-agent in the chat, the inbox and the debug tree", () => {
  const chat = chatFixture({
    workdir: "sub",
    chunkDelayMs: 10,
    // One queue, served in order: a sync child runs inside the parent's turn, so its requests
    // come between the parent's delegation and the parent's final answer.
    script: [
      call("execute_task", { mode: "sync", agent_id: "generalist", prompt: CHILD_TASK }),
      call("write_file", { path: "report.md", content: REPORT }),
      { type: "text", content: CHILD_ANSWER },
      // The parent's last round is held a moment, so the lane is seen ended while the turn runs.
      { type: "stall", ms: 4000 },
      { type: "text", content: PARENT_ANSWER },
    ],
  });
  const { pageErrors, shoot, send, sendButton, stopButton, waitForHash } = chat;
  let fake, server, page, workdir;
  let label;

  const laneHead = () => page.locator('[data-testid="lane-head"]');

  /** The chat as [kind, lane depth, text] rows: what a reader sees, and how it is nested. */
  async function conversation() {
    return page.locator("ol.chat-log > li[data-kind]").evaluateAll((lis) =>
      lis.map((li) => {
        const lane = li.querySelector(".lane-row");
        const depth = lane ? Number(lane.dataset.laneDepth) : 0;
        const head = li.querySelector('[data-testid="lane-head"]');
        if (head) return [li.dataset.kind, depth, head.dataset.laneLabel];
        const card = li.querySelector("article");
        const text = card ? card.getAttribute("aria-label") : (li.querySelector(".bubble-text") ?? li.querySelector(".bubble") ?? li).innerText;
        return [li.dataset.kind, depth, text.trim()];
      }),
    );
  }

  before(async () => {
    ({ fake, server, page, workdir } = await chat.start());
  });

  after(() => chat.stop());

  test("the child's lane shows under its origin label with the child's approval card; the Inbox names the child", async () => {
    await send("Have a sub-agent write the report");

    await laneHead().waitFor();
    label = await laneHead().getAttribute("data-lane-label");
    assert.match(label, CHILD_LABEL);
    assert.equal(await laneHead().locator(".lane-label").innerText(), label, "the head shows the origin label");
    assert.equal(await laneHead().getAttribute("data-status"), "running");

    // The child's write waits inside the lane, and its card says which child asks.
    const card = page.locator(`section.approval-card[data-origin="${label}"]`);
    await card.waitFor();
    assert.equal(await card.locator("xpath=ancestor::div[contains(@class,'lane-row')]").count(), 1, "the card sits in the lane");
    assert.match(await card.locator(".asked-by").innerText(), new RegExp(`Asked by sub-agent ${label}`));
    assert.match(await card.innerText(), /report\.md/);
    assert.match(await laneHead().locator(".lane-step").innerText(), /waiting for approval/);
    await stopButton().waitFor();
    assert.equal(existsSync(join(workdir, "report.md")), false, "nothing is written before the approval");
    await shoot("40-subagent-lane-approval");

    const rows = await conversation();
    const headAt = rows.findIndex(([kind]) => kind === "lane");
    assert.deepEqual(
      rows.slice(headAt - 1).map(([kind, depth]) => [kind, depth]),
      [
        ["tool", 0],
        ["lane", 1],
        ["user", 1],
        ["tool", 1],
      ],
      `the lane follows its spawning call: ${JSON.stringify(rows)}`,
    );
    assert.equal(rows[headAt + 1][2], CHILD_TASK, "the lane opens with the child's task");
    assert.match(rows[headAt - 1][2], /execute_task|generalist/);

    await page.locator('nav a[href="#inbox"]').click();
    await waitForHash("#inbox");
    const row = page.locator("ul.inbox-list li.inbox-row");
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    assert.equal(await row.first().locator(".inbox-asker").innerText(), `asked by ${label}`, "the row names the child, whole");
    const detail = page.locator("section.inbox-detail");
    await detail.waitFor();
    assert.match(await detail.innerText(), new RegExp(`Asked by sub-agent\\s+${label}`, "i"));
    assert.match(await detail.innerText(), /report\.md/);
    await shoot("41-subagent-inbox");
  });

  test("approving in the lane writes the file; the child's answer ends the lane, then the parent answers", async () => {
    await page.locator('nav a[href="#chat/web"]').click();
    const card = page.locator(`section.approval-card[data-origin="${label}"]`);
    await card.getByRole("button", { name: /^Approve/ }).first().click();

    const deadline = Date.now() + 10_000;
    while (!existsSync(join(workdir, "report.md")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(readFileSync(join(workdir, "report.md"), "utf8"), REPORT, "the approved write is on disk");

    // The child's final answer closes its lane while the parent's turn still runs.
    const childAnswer = page.locator(".lane-row .bubble-assistant", { hasText: CHILD_ANSWER });
    await childAnswer.waitFor();
    await page.locator('[data-testid="lane-head"][data-status="done"]').waitFor();
    assert.equal(await stopButton().count(), 1, "the turn still runs after the lane ended");
    assert.equal(await page.locator(".bubble-assistant", { hasText: PARENT_ANSWER }).count(), 0);
    await shoot("42-subagent-lane-done");

    const parent = page.locator(".bubble-assistant:not(.is-streaming)", { hasText: PARENT_ANSWER });
    await parent.waitFor();
    await sendButton().waitFor();
    assert.equal(await parent.locator("xpath=ancestor::div[contains(@class,'lane-row')]").count(), 0, "the parent answers at the root");
    await shoot("43-subagent-turn-done");

    // Four rounds, each answered from the script: parent, child, child, parent.
    const requests = await fake.requests();
    assert.equal(requests.length, 4, JSON.stringify(requests.map((r) => firstMessage(r.body))));
    for (const r of requests) {
      assert.equal(r.status, 200, `request ${r.seq} was answered 200`);
      assert.equal(r.validation_error ?? null, null, `request ${r.seq} was valid`);
      assert.equal(r.unscripted, false, `request ${r.seq} was scripted`);
      const names = offeredTools(r.body);
      assert.equal(new Set(names).size, names.length, `no tool offered twice: ${names}`);
      const child = firstMessage(r.body).includes("CHILD-TASK");
      assert.equal(names.includes("execute_task"), !child, `execute_task only at the root (request ${r.seq})`);
    }
    assert.deepEqual(
      requests.map((r) => firstMessage(r.body).includes("CHILD-TASK")),
      [false, true, true, false],
    );
  });

  test("a reload rebuilds the lane from history", async () => {
    const live = await conversation();
    await page.reload();
    await page.locator(".bubble-assistant", { hasText: PARENT_ANSWER }).waitFor();
    const head = page.locator(`[data-testid="lane-head"][data-lane-label="${label}"]`);
    await head.waitFor();
    assert.equal(await head.getAttribute("data-status"), "done");
    const rebuilt = await conversation();
    const from = (rows) => rows.slice(rows.findIndex(([kind, , text]) => kind === "user" && text.startsWith("Have a sub-agent")));
    assert.deepEqual(
      from(rebuilt).map(([kind, depth]) => [kind, depth]),
      from(live).map(([kind, depth]) => [kind, depth]),
      `live: ${JSON.stringify(live)}\nrebuilt: ${JSON.stringify(rebuilt)}`,
    );
    const childRows = from(rebuilt).filter(([kind, depth]) => depth === 1 && kind !== "lane");
    assert.ok(childRows.some(([kind]) => kind === "tool"), "the child's write is in the lane");
    assert.ok(childRows.some(([kind, , text]) => kind === "assistant" && text.includes(CHILD_ANSWER)), "the child's answer is in the lane");
    await shoot("44-subagent-lane-reloaded");
  });

  test("the debug tree nests the child's rows under its spawning call, with the origin label", async () => {
    const { session_id: id } = await server.call("active_session", { source: "web" });
    await page.goto(`${server.base}#session/${id}`);
    const tree = page.getByRole("list", { name: "Session messages" });
    await tree.locator('li[data-kind="agent"]').waitFor();
    // The window paints its rows over a few frames: read them once the child's end and the
    // parent's answer after it are in too.
    await tree.locator('li[data-kind="agent_end"]').waitFor();
    await tree.locator('li[data-kind="assistant"]', { hasText: PARENT_ANSWER }).waitFor();
    const rows = await tree.locator("li[data-kind]").evaluateAll((lis) =>
      lis.map((li) => {
        const row = li.querySelector(".tree-row");
        return {
          kind: li.dataset.kind,
          depth: Number(row?.style.getPropertyValue("--depth") || 0),
          indent: row ? row.getBoundingClientRect().left : 0,
          origin: li.querySelector(".row-head .origin, .row-head .lane-label")?.textContent ?? null,
          text: li.innerText,
        };
      }),
    );
    const spawn = rows.findIndex((r) => r.kind === "tool" && r.depth === 0 && /execute_task|generalist/.test(r.text));
    const open = rows.findIndex((r) => r.kind === "agent");
    const close = rows.findIndex((r) => r.kind === "agent_end");
    assert.ok(spawn >= 0 && open === spawn + 1 && close > open, JSON.stringify(rows.map((r) => [r.kind, r.depth])));
    const callId = /call #(\d+)/.exec(rows[spawn].text)?.[1];
    assert.match(rows[open].text, new RegExp(`by call #${callId}\\b`), "the child names its spawning call");
    assert.equal(rows[open].origin, label, "the child's head carries the live origin label");
    const inside = rows.slice(open + 1, close);
    assert.ok(inside.length >= 2, "the child's rows sit between its head and its end");
    for (const r of inside) {
      assert.equal(r.depth, 1, `${r.kind} is at the child's depth`);
      assert.equal(r.origin, label, `${r.kind} names the child`);
      assert.ok(r.indent > rows[spawn].indent, `${r.kind} is indented under the call`);
    }
    assert.ok(inside.some((r) => r.kind === "tool" && r.text.includes("report.md")), "the child's write");
    assert.ok(rows.slice(close + 1).some((r) => r.kind === "assistant" && r.depth === 0 && r.text.includes(PARENT_ANSWER)));
    await tree.locator('li[data-kind="agent"]').scrollIntoViewIfNeeded();
    await shoot("45-subagent-debug-tree");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
