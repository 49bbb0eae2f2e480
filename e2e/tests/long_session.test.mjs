// A long session in the windowed chat and debug tree: 300 turns of 4 tool rounds (1,800 messages,
// 1,200 tool calls) seeded into the web source's session, then a real turn that parks a write for
// approval. The pages open at the newest rows with a bounded DOM, load earlier pages as they are
// scrolled up (keeping what is on screen in place), open at a linked message highlighted, and jump
// to the pending approval.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call } from "../lib/fake_llm.mjs";
import { seedLongSession } from "../lib/seed.mjs";

const TURNS = 300;
const ROUNDS = 4;
/** What a windowed page may hold at most, whatever the session's length (the target). */
const MAX_DOM_NODES = 3_000;
/** Rows in the DOM at once: a screen and the library's buffer, never the session. */
const MAX_ROWS = 80;

describe("a long session, windowed", () => {
  const chat = chatFixture({ workdir: "work", files: { "notes.md": "# Notes\n" }, chunkDelayMs: 0, hash: null });
  const { pageErrors } = chat;
  let fake, server, page;
  let sessionId;
  let users;
  let pendingCall;
  const windowReads = [];

  const api = (op, params) => server.call(op, params);
  /** The viewport only: what a reader of the windowed list sees. */
  const shoot = (name) => chat.shoot(name, { fullPage: false });
  const domNodes = () => page.evaluate(() => document.getElementsByTagName("*").length);
  const rowsInDom = () => page.locator("li[data-kind]").count();
  /** Whether `locator`'s first element is inside the viewport of its scroller. */
  const onScreen = (locator) =>
    locator.first().evaluate((el) => {
      const r = el.getBoundingClientRect();
      const s = el.closest(".virtual-scroll").getBoundingClientRect();
      return r.bottom > s.top && r.top < s.bottom;
    });
  /** The first row whose bottom is below the top of the list's viewport: its key and offset. */
  const topRow = () =>
    page.evaluate(() => {
      const top = document.querySelector(".virtual-scroll").getBoundingClientRect().top;
      const row = [...document.querySelectorAll("li[data-key]")].find((el) => el.getBoundingClientRect().bottom > top);
      return { key: row.dataset.key, offset: row.getBoundingClientRect().top - top };
    });
  /** How far (px) the row with `key` is below the top of the list's viewport; null when not in the DOM. */
  const rowOffset = (key) =>
    page.evaluate((k) => {
      const row = document.querySelector(`li[data-key="${k}"]`);
      if (!row) return null;
      return row.getBoundingClientRect().top - document.querySelector(".virtual-scroll").getBoundingClientRect().top;
    }, key);
  const bubble = (text) =>
    page.locator(".bubble-text").filter({ hasText: new RegExp(`^${text}$`) });

  async function assertBounded(what) {
    const nodes = await domNodes();
    const rows = await rowsInDom();
    assert.ok(nodes < MAX_DOM_NODES, `${what}: ${nodes} DOM nodes`);
    assert.ok(rows <= MAX_ROWS, `${what}: ${rows} rows in the DOM`);
    return { nodes, rows };
  }

  /** Scrolls the list to its top, page by page, until `done()` holds once the top is shown. */
  async function scrollUpUntil(done, what) {
    const scroller = page.locator(".virtual-scroll");
    for (let i = 0; i < 100; i += 1) {
      const more = (await scroller.getAttribute("data-more-before")) === "true";
      // The top asks for the page before it: wait until it is read and shown.
      const read = more ? page.waitForResponse((r) => r.url().endsWith("/api/session_window")) : null;
      await scroller.evaluate((el) => {
        el.scrollTop = 0;
      });
      if (read) {
        await read;
        await page.waitForFunction(() => !document.querySelector(".log-jumps [role=status]"));
      } else {
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      }
      if (await done()) return;
      if (!more) break;
    }
    assert.fail(`never reached ${what}`);
  }

  /** The lowest turn whose answer is in the DOM (Infinity for none). */
  const oldestAnswerShown = () =>
    page.evaluate(() =>
      Math.min(...[...document.body.innerText.matchAll(/Answer (\d+):/g)].map((m) => Number(m[1]))),
    );

  before(async () => {
    ({ fake, server, page } = await chat.start());
    sessionId = (await api("active_session", { source: "web" })).session_id;
    users = seedLongSession(server.dbPath, sessionId, TURNS, ROUNDS);
    assert.equal(users.length, TURNS);
    // A real turn after the seeded ones: the write waits for a decision.
    await fake.push(call("write_file", { path: "notes.md", content: "# Notes\nlong session\n" }));
    await api("send_message", { source: "web", text: "Please update notes.md" });
    for (let i = 0; i < 100 && !pendingCall; i += 1) {
      const inbox = await api("inbox", {});
      pendingCall = inbox.items[0]?.tool_call_id;
      if (!pendingCall) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pendingCall, "the write waits in the inbox");
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
    await chat.stop();
    assert.deepEqual(pageErrors, []);
  });

  test("the chat opens at the newest rows with a bounded DOM and loads earlier pages as it scrolls up", async () => {
    await page.goto(`${server.url}#chat/web`);
    const newest = page.locator(".bubble-assistant", { hasText: `Answer ${TURNS}:` });
    await newest.waitFor();
    await page.locator("section.approval-card").waitFor();
    assert.ok(await onScreen(page.locator("section.approval-card")), "the newest row (the pending write) is on screen");
    assert.deepEqual(windowReads[0]?.anchor, { type: "latest" }, "the chat read the newest window first");
    const opened = await assertBounded("chat opened");
    assert.ok(!(await bubble("Question 1").count()), "the oldest turn is not loaded at first");
    await shoot("50-long-chat-newest");

    // What the reader sees stays in place when the page above it arrives: the earlier page is
    // held back until the row at the top of the screen and its offset have been read.
    let release;
    const held = new Promise((r) => (release = r));
    await page.route("**/api/session_window", async (route) => {
      await held;
      await route.continue();
    });
    const before = windowReads.length;
    const asked = page.waitForRequest((r) => r.url().endsWith("/api/session_window"));
    await page.locator(".virtual-scroll").evaluate((el) => {
      el.scrollTop = 0;
    });
    await asked;
    assert.equal(windowReads.at(-1).anchor.type, "before");
    const top = await topRow();
    release();
    await page.waitForFunction(() => !document.querySelector(".log-jumps [role=status]"));
    await page.unroute("**/api/session_window");
    assert.ok((await rowOffset(top.key)) !== null, "the row that was at the top is still in the page");
    assert.ok(
      Math.abs((await rowOffset(top.key)) - top.offset) < 2,
      `the row at the top stayed where it was (${top.offset}px from the top)`,
    );

    // Done when the first question is on screen: the top of the session was reached.
    const first = bubble("Question 1");
    await scrollUpUntil(async () => (await first.count()) > 0 && (await onScreen(first)), "the first turn");
    assert.equal(await page.locator(".virtual-scroll").getAttribute("data-more-before"), "false");
    const atTop = await assertBounded("chat scrolled to the first turn");
    assert.ok(windowReads.filter((q) => q.anchor.type === "before").length >= 10, "the history came page by page");
    console.log(`chat: ${opened.nodes} DOM nodes at the end, ${atTop.nodes} at the top; ${windowReads.length} window reads`);
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
    await page.goto(`${server.url}#chat/web?message=${users[9]}`);
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
    const jumpButton = page.getByRole("button", { name: "Jump to the pending approval" });
    await jumpButton.waitFor({ state: "detached" });
    assert.equal(await jumpButton.count(), 0, "no jump to an approval already on screen");
    await assertBounded("chat at the pending approval");
    await shoot("53-long-chat-pending-approval");
  });

  test("the debug tree opens at the newest rows, pages up, and jumps to the pending approval and to a message", async () => {
    await page.goto(`${server.url}#session/${sessionId}`);
    await page.locator('li[data-kind="tool"] .status-pending').waitFor();
    await assertBounded("tree opened");
    const reads = windowReads.length;
    await scrollUpUntil(async () => (await oldestAnswerShown()) <= TURNS - 20, `turn ${TURNS - 20}`);
    assert.ok(windowReads.length - reads >= 2, "earlier pages were read");
    await assertBounded("tree scrolled up");
    assert.equal(await page.locator('li[data-kind="tool"] .status-pending').count(), 0, "the newest rows left the DOM");

    await page.getByRole("button", { name: "Jump to the pending approval" }).click();
    const pending = page.locator("li.is-focus .status-pending");
    await pending.waitFor();
    assert.ok(await onScreen(pending), "the pending call is on screen");
    await page.getByRole("button", { name: "Jump to the pending approval" }).waitFor({ state: "detached" });
    await shoot("54-long-tree-pending");

    await page.goto(`${server.url}#session/${sessionId}?message=${users[0]}`);
    const first = page.locator("li.is-focus");
    await first.waitFor();
    assert.match(await first.innerText(), /Question 1\b/);
    assert.ok(await onScreen(first));
    await assertBounded("tree around the first message");
    await shoot("55-long-tree-first-message");
  });
});
