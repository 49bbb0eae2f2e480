// The built UI in system Chromium against a real `skald serve`: frame, lists, paging, detail, back.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { launchBrowser, newPage, screenshot, waitForHash as waitForPageHash } from "../lib/browser.mjs";
import { seedTicSessions } from "../lib/seed.mjs";
import { startServer } from "../lib/server.mjs";
import { stopAll } from "../lib/teardown.mjs";

const TIC_COUNT = 25;

describe("skald serve + web UI in a real browser", () => {
  let server;
  let browser;
  let page;
  let ticIds = [];
  const pageErrors = [];

  const rows = () => page.locator("tbody tr.row-link");
  const rowIds = async () =>
    (await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-session-id")))).map(Number);
  const waitForRowCount = (n) =>
    page.waitForFunction((want) => document.querySelectorAll("tbody tr.row-link").length === want, n);
  const waitForPagination = (text) =>
    page.locator(".pagination-label", { hasText: text }).waitFor({ state: "visible" });
  const waitForHash = (hash) => waitForPageHash(page, hash);
  const shoot = (name) => screenshot(page, name);

  before(async () => {
    server = await startServer();
    // The schema exists once the server printed its line: the engine migrated before listening.
    ticIds = seedTicSessions(server.dbPath, TIC_COUNT);
    assert.equal(ticIds.length, TIC_COUNT);
    browser = await launchBrowser();
    page = await newPage(browser, pageErrors, { timeoutMs: 10_000 });
  });

  after(() => stopAll({ browser, server }));

  test("loads the app frame with its sidebar entries, hides the token, lands on the first-run guide", async () => {
    const response = await page.goto(server.url);
    assert.equal(response?.status(), 200);
    await page.getByTestId("app-frame").waitFor();
    const labels = await page.locator('nav[aria-label="Main"] a.nav-link').allTextContents();
    assert.deepEqual(labels.map((l) => l.trim()), ["Chat", "Inbox", "Sessions", "TIC", "Jobs", "Memory", "Settings"]);
    await page.waitForFunction(() => !window.location.search.includes("token="));
    // No LLM is configured here: the first visit to the chat lands on #settings and its guide.
    await page.waitForFunction(() => window.location.hash === "#settings");
    await page.getByRole("heading", { name: "Connect a language model to get started" }).waitFor();
    await shoot("01-app-frame");
  });

  test("#sessions lists every seeded session", async () => {
    await page.locator('nav a[href="#sessions"]').click();
    await waitForHash("#sessions");
    await waitForRowCount(TIC_COUNT);
    await waitForPagination("page 1 of 1");
    const ids = await rowIds();
    assert.deepEqual([...ids].sort((a, b) => a - b), ticIds, "the list shows exactly the seeded sessions");
    await shoot("02-sessions");
  });

  test("#tic shows the TIC page: seeded sessions are no ticks, so none is listed", async () => {
    await page.locator('nav a[href="#tic"]').click();
    await waitForHash("#tic");
    await page.getByRole("heading", { level: 1, name: "TIC" }).waitFor();
    await page.getByText("No ticks yet").waitFor();
    await page.getByText(/No MCP server is kept connected yet/).waitFor();
    await shoot("03-tic-page");
  });

  test("a row of #sessions opens #session/{id} with its user message, and Back returns", async () => {
    await page.locator('nav a[href="#sessions"]').click();
    await waitForHash("#sessions");
    await waitForRowCount(TIC_COUNT);
    const oldest = ticIds[0];
    await page.locator(`tbody tr[data-session-id="${oldest}"]`).click();
    await waitForHash(`#session/${oldest}`);
    const user = page.locator('li[data-kind="user"]');
    await user.waitFor();
    assert.match(await user.innerText(), /TIC tick 1: review the inbox/);
    assert.match(await page.locator("h1").innerText(), new RegExp(`Session #${oldest}`));
    await shoot("05-session-detail");

    await page.getByRole("button", { name: /Back/ }).click();
    await waitForHash("#sessions");
    await waitForRowCount(TIC_COUNT);
    await shoot("06-back-to-sessions");
  });

  test("a session created over the API appears live (WebSocket event, no reload)", async () => {
    await page.locator('nav a[href="#sessions"]').click();
    await waitForRowCount(TIC_COUNT);
    const { session_id: created } = await server.call("new_session", { source: "web" });
    await page.locator(`tbody tr[data-session-id="${created}"]`).waitFor();
    await shoot("07-sessions-live-update");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
