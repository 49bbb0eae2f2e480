// A long session in the windowed chat and debug tree: 300 turns of 4 tool rounds (1,800 messages,
// 1,200 tool calls) seeded into the web source's session, then a real turn that parks a write for
// approval. The pages open at the newest rows with a bounded DOM, load earlier pages as they are
// scrolled up (keeping what is on screen in place), open at a linked message highlighted, and jump
// to the pending approval.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { launchBrowser, newPage, screenshotPath } from "../lib/browser.mjs";
import { startFakeLlm } from "../lib/fake_llm.mjs";
import { seedLongSession } from "../lib/seed.mjs";
import { startServer } from "../lib/server.mjs";
import { stopAll } from "../lib/teardown.mjs";

const TURNS = 300;
const ROUNDS = 4;
/** What a windowed page may hold at most, whatever the session's length (the target). */
const MAX_DOM_NODES = 3_000;
/** Rows in the DOM at once: a screen and the library's buffer, never the session. */
const MAX_ROWS = 80;

describe("a long session, windowed", () => {
  let fake;
  let server;
  let browser;
  let page;
  let workdir;
  let sessionId;
  let users;
  let pendingCall;
  const pageErrors = [];
  const windowReads = [];

  const api = (op, params) => server.call(op, params);
  const shoot = (name) => page.screenshot({ path: screenshotPath(name) });
  const domNodes = () => page.evaluate(() => document.getElementsByTagName("*").length);
  const rowsInDom = () => page.locator("li[data-kind]").count();
  /** Whether `locator`'s first element is inside the viewport of its scroller. */
  const onScreen = (locator) =>
    locator.first().evaluate((el) => {
      const r = el.getBoundingClientRect();
      const s = el.closest(".virtual-scroll").getBoundingClientRect();
      return r.bottom > s.top && r.top < s.bottom;
    });
  const bubble = (text) =>
    page.locator(".bubble-text").filter({ hasText: new RegExp(`^${text}$`) });

  /** Polls a condition on the test's side (requests seen), without a fixed sleep. */
  async function until(condition, what) {
    for (let i = 0; i < 300; i += 1) {
      if (condition()) return;
      await page.waitForTimeout(50);
    }
    assert.fail(`timed out waiting for ${what}`);
  }

  async function assertBounded(what) {
    const nodes = await domNodes();
    const rows = await rowsInDom();
    assert.ok(nodes < MAX_DOM_NODES, `${what}: ${nodes} DOM nodes`);
    assert.ok(rows <= MAX_ROWS, `${what}: ${rows} rows in the DOM`);
    return { nodes, rows };
  }

  /** Scrolls the list to its top until `done()` holds, one page at a time. */
  async function scrollUpUntil(done, what) {
    for (let i = 0; i < 200; i += 1) {
      if (await done()) return;
      await page.locator(".virtual-scroll").evaluate((el) => {
        el.scrollTop = 0;
      });
      // Wait for the page the top asked for (or for nothing more to read).
      await page.waitForFunction(() => !document.querySelector(".log-jumps [role=status]"));
    }
    assert.fail(`never reached ${what}`);
  }

  before(async () => {
    workdir = mkdtempSync(join(tmpdir(), "skald-e2e-work-"));
    writeFileSync(join(workdir, "notes.md"), "# Notes\n");
    fake = await startFakeLlm({ chunkDelayMs: 0 });
    server = await startServer({ cwd: workdir, env: { SKALD_LLM_BASE_URL: fake.baseUrl, SKALD_LLM_MODEL: "fake-model" } });
    sessionId = (await api("active_session", { source: "web" })).session_id;
    users = seedLongSession(server.dbPath, sessionId, TURNS, ROUNDS);
    assert.equal(users.length, TURNS);
    // A real turn after the seeded ones: the write waits for a decision.
    await fake.push({
      type: "tool_calls",
      calls: [{ name: "write_file", arguments: JSON.stringify({ path: "notes.md", content: "# Notes\nlong session\n" }) }],
    });
    await api("send_message", { source: "web", text: "Please update notes.md" });
    for (let i = 0; i < 100 && !pendingCall; i += 1) {
      const inbox = await api("inbox", {});
      pendingCall = inbox.items[0]?.tool_call_id;
      if (!pendingCall) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pendingCall, "the write waits in the inbox");
    browser = await launchBrowser();
    page = await newPage(browser, pageErrors);
    page.on("request", (r) => {
      if (r.url().endsWith("/api/session_window")) windowReads.push(JSON.parse(r.postData() ?? "{}").query);
    });
  });

  after(async () => {
    // Let the parked turn end, so the server stops cleanly.
    await fake?.push({ type: "text", content: "Left it as it was." });
    if (server && pendingCall) {
      await api("decide", { tool_call_id: pendingCall, input: { approved: false, note: null, bypass: null } }).catch(() => {});
    }
    await stopAll({ browser, server, fake, workdir });
    assert.deepEqual(pageErrors, []);
  });

  test("the chat opens at the newest rows with a bounded DOM and loads earlier pages as it scrolls up", async () => {
    await page.goto(`${server.base}?token=${server.token}#chat/web`);
    const newest = page.locator(".bubble-assistant", { hasText: `Answer ${TURNS}:` });
    await newest.waitFor();
    await page.locator("section.approval-card").waitFor();
    assert.ok(await onScreen(page.locator("section.approval-card")), "the newest row (the pending write) is on screen");
    assert.deepEqual(windowReads[0]?.anchor, { type: "latest" }, "the chat read the newest window first");
    const opened = await assertBounded("chat opened");
    assert.ok(!(await bubble("Question 1").count()), "the oldest turn is not loaded at first");
    await shoot("50-long-chat-newest");

    // What the reader sees stays in place when the page above it arrives.
    const before = windowReads.length;
    const anchor = page.locator("li[data-kind]").first();
    const anchorText = (await anchor.innerText()).slice(0, 40);
    await page.locator(".virtual-scroll").evaluate((el) => {
      el.scrollTop = 0;
    });
    await until(() => windowReads.length > before, "an earlier page to be read");
    await page.waitForFunction(() => !document.querySelector(".log-jumps [role=status]"));
    assert.equal(windowReads.at(-1).anchor.type, "before");
    assert.ok(
      await page.getByText(anchorText, { exact: false }).first().evaluate((el) => el.getBoundingClientRect().top > 0),
      "the row that was at the top is still below the top after the earlier page came in",
    );

    await scrollUpUntil(async () => (await bubble("Question 1").count()) > 0, "the first turn");
    assert.ok(await onScreen(bubble("Question 1")), "the first question is on screen at the top");
    const top = await assertBounded("chat scrolled to the first turn");
    assert.ok(windowReads.filter((q) => q.anchor.type === "before").length >= 10, "the history came page by page");
    console.log(`chat: ${opened.nodes} DOM nodes at the end, ${top.nodes} at the top; ${windowReads.length} window reads`);
    await shoot("51-long-chat-top");
    // Back at the end: the pending write is there.
    await page.getByRole("button", { name: "Jump to latest" }).click();
    await page.waitForFunction(() => {
      const card = document.querySelector("section.approval-card");
      const s = document.querySelector(".virtual-scroll");
      return card && s && card.getBoundingClientRect().top < s.getBoundingClientRect().bottom;
    });
  });

  test("a link to a message opens the chat around it, highlighted; then jump to the pending approval", async () => {
    await page.goto(`${server.base}?token=${server.token}#chat/web?message=${users[9]}`);
    const focused = page.locator("li.is-focus");
    await focused.waitFor();
    assert.equal((await focused.innerText()).trim(), "Question 10");
    assert.ok(await onScreen(focused), "the linked message is on screen");
    assert.deepEqual(windowReads.at(-1).anchor, { type: "around", item: { type: "message", id: users[9] } });
    assert.equal(await page.locator("section.approval-card").count(), 0, "the newest rows are not loaded");
    await assertBounded("chat around a message");
    await shoot("52-long-chat-linked-message");

    await page.getByRole("button", { name: "Jump to the pending approval" }).click();
    const card = page.locator("li.is-focus section.approval-card");
    await card.waitFor();
    assert.ok(await onScreen(card), "the pending approval is on screen");
    assert.match(await card.innerText(), /long session/);
    await assertBounded("chat at the pending approval");
    await shoot("53-long-chat-pending-approval");
  });

  test("the debug tree opens at the newest rows, pages up, and jumps to the pending approval and to a message", async () => {
    await page.goto(`${server.base}?token=${server.token}#session/${sessionId}`);
    await page.locator('li[data-kind="tool"] .status-pending').waitFor();
    await assertBounded("tree opened");
    const reads = windowReads.length;
    await scrollUpUntil(async () => (await page.getByText(`Answer ${TURNS - 20}:`).count()) > 0, `turn ${TURNS - 20}`);
    assert.ok(windowReads.length - reads >= 2, "earlier pages were read");
    await assertBounded("tree scrolled up");
    assert.equal(await page.locator('li[data-kind="tool"] .status-pending').count(), 0, "the newest rows left the DOM");

    await page.getByRole("button", { name: "Jump to the pending approval" }).click();
    const pending = page.locator("li.is-focus .status-pending");
    await pending.waitFor();
    assert.ok(await onScreen(pending), "the pending call is on screen");
    await shoot("54-long-tree-pending");

    await page.goto(`${server.base}?token=${server.token}#session/${sessionId}?message=${users[0]}`);
    const first = page.locator("li.is-focus");
    await first.waitFor();
    assert.match(await first.innerText(), /Question 1\b/);
    assert.ok(await onScreen(first));
    await assertBounded("tree around the first message");
    await shoot("55-long-tree-first-message");
  });
});
