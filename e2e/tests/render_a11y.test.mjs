// A model answer rendered as GFM with highlighted code, the word marks of an approval's diff, and
// axe-core on every page in the light and the dark theme, against `skald serve` and the fake
// provider.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { RICH_ANSWER } from "../lib/answers.mjs";
import { seriousViolations, showEveryBadge } from "../lib/axe.mjs";
import { launchBrowser, newPage, screenshot, screenshotPath } from "../lib/browser.mjs";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call } from "../lib/fake_llm.mjs";
import { seedStatusSession, seedTicSessions } from "../lib/seed.mjs";
import { startServer } from "../lib/server.mjs";

/** Serious and critical axe findings on each page (hash, element to wait for), in both themes. */
async function auditPages(page, base, pages) {
  const found = [];
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [name, hash, ready] of pages) {
      await page.goto(`${base}${hash}`);
      await page.locator(ready).first().waitFor();
      // Let lazily loaded grammars colour the code before contrast is measured.
      await page.waitForFunction(() => !document.querySelector("pre.md-code code[class*='language-']:not(:has(span))"));
      for (const v of await seriousViolations(page)) found.push(`${scheme} · ${name}: ${v}`);
      await screenshot(page, `32-a11y-${scheme}-${name.replace(/[^a-z0-9]+/gi, "-")}`);
    }
  }
  return found;
}

const OLD_SOURCE = 'fn main() {\n    println!("hello");\n}\n';
const NEW_SOURCE = 'fn main() {\n\tprintln!("hello, world");\n}\n';

describe("rendering of model output and accessibility of every page", () => {
  const chat = chatFixture({
    workdir: "render",
    files: { "main.rs": OLD_SOURCE },
    chunkDelayMs: 5,
    pageOptions: { permissions: ["clipboard-read", "clipboard-write"] },
    hash: null,
  });
  const { pageErrors, send } = chat;
  let fake, server, page;

  const api = (op, params) => server.call(op, params);
  const tokens = (block, cls) => block.locator(`.hljs-${cls}`).allInnerTexts();

  before(async () => {
    ({ fake, server, page } = await chat.start());
  });

  after(() => chat.stop());

  test("a model answer renders its table, task list, nested lists and highlighted code in five languages", async () => {
    await fake.push({ type: "text", content: RICH_ANSWER });
    await chat.open("#chat/web");
    await send("Show me everything");
    const answer = page.locator(".bubble-assistant:not(.is-streaming)", { hasText: "deepest" });
    await answer.waitFor();

    const table = answer.getByRole("table");
    assert.deepEqual(await table.getByRole("columnheader").allInnerTexts(), ["Step", "Owner", "Done"]);
    assert.deepEqual(await table.getByRole("cell").allInnerTexts(), ["Parse", "engine", "3", "Render", "ui", "5"]);
    assert.equal(await table.getByRole("cell", { name: "5" }).evaluate((td) => getComputedStyle(td).textAlign), "right");
    const boxes = answer.getByRole("checkbox");
    assert.deepEqual([await boxes.nth(0).isChecked(), await boxes.nth(1).isChecked()], [true, false]);
    assert.equal(await answer.locator("ol > li > ul > li > ol > li").innerText(), "deepest");

    const blocks = answer.locator(".code-block");
    assert.equal(await blocks.count(), 5);
    // Each grammar is fetched when first needed; the tokens carry highlight.js classes.
    await blocks.nth(4).locator(".hljs-built_in").waitFor();
    const [rust, python, ts, go, bash] = [0, 1, 2, 3, 4].map((i) => blocks.nth(i));
    assert.deepEqual(await tokens(rust, "keyword"), ["fn", "let"]);
    assert.deepEqual(await tokens(rust, "title"), ["main"]);
    assert.deepEqual(await tokens(rust, "number"), ["42"]);
    assert.deepEqual(await tokens(python, "keyword"), ["def", "return"]);
    assert.deepEqual(await tokens(python, "title"), ["greet"]);
    assert.ok((await tokens(python, "string")).some((s) => s.startsWith('f"hi')));
    assert.deepEqual(await tokens(ts, "keyword"), ["const"]);
    assert.deepEqual(await tokens(ts, "built_in"), ["number"]);
    assert.deepEqual(await tokens(ts, "comment"), ["// sum"]);
    assert.deepEqual(await tokens(go, "keyword"), ["func", "return"]);
    assert.deepEqual(await tokens(go, "type"), ["int", "int"]);
    assert.deepEqual(await tokens(bash, "built_in"), ["echo"]);
    assert.deepEqual(await tokens(bash, "string"), ['"done"']);
    assert.deepEqual(await tokens(bash, "comment"), ["# finished"]);
    // Keyword colour differs from plain text: the stylesheet applies to the real token classes.
    const colour = (loc) => loc.evaluate((el) => getComputedStyle(el).color);
    assert.notEqual(await colour(rust.locator(".hljs-keyword").first()), await colour(rust.locator("code")));

    await rust.getByRole("button", { name: "Copy rust code" }).click();
    await rust.getByRole("button", { name: "Copied rust code" }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), "fn main() { let n = 42; }");
    await answer.screenshot({ path: screenshotPath("30-chat-rich-answer") });
  });

  test("the approval's diff marks the changed indentation and words", async () => {
    await fake.push(call("write_file", { path: "main.rs", content: NEW_SOURCE }));
    await send("Greet the world");
    const card = page.locator("section.approval-card").last();
    await card.waitFor();
    const marks = card.locator("mark.word");
    await marks.nth(2).waitFor();
    assert.deepEqual(await marks.evaluateAll((ms) => ms.map((m) => [m.className, m.textContent])), [
      ["word word-delete", "    "],
      ["word word-insert", "\t"],
      ["word word-insert", ", world"],
    ]);
    // The Rust grammar colours the line around and inside the marks.
    await card.locator("mark.word-insert .hljs-string").waitFor();
    await card.screenshot({ path: screenshotPath("31-approval-word-marks") });
  });

  test("every page has no serious or critical axe violations, in the light and the dark theme", async () => {
    const tic = seedTicSessions(server.dbPath, 3);
    const { session_id: web } = await api("active_session", { source: "web" });
    const statuses = seedStatusSession(server.dbPath);
    const pages = [
      ["chat with a conversation", "#chat/web", "section.approval-card"],
      ["sessions list", "#sessions", "tbody tr.row-link"],
      ["session detail", `#session/${web}`, 'li[data-kind="tool"]'],
      ["inbox with an approval", "#inbox", "figure.diff"],
      ["TIC", "#tic", '[data-testid="tic-summary"]'],
      ["TIC session detail", `#session/${tic[0]}`, 'li[data-kind="user"]'],
      ["session with every end status", `#session/${statuses}`, ".status-cancelled"],
      ["settings", "#settings", "dl.facts"],
    ];
    const found = await auditPages(page, server.base, pages);
    assert.deepEqual(found, [], `axe found:\n${found.join("\n")}`);
  });

  test("every status, badge and notice of the stylesheet has no serious axe finding, in both themes", async () => {
    const found = [];
    for (const scheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${server.base}#settings`);
      await page.locator("dl.facts").waitFor();
      const shown = await showEveryBadge(page);
      for (const name of ["status-done", "status-running", "status-pending", "status-error", "status-failed", "status-rejected",
        "status-cancelled", "badge-ok", "badge-warn", "badge-env", "badge-failed", "badge-synthetic", "badge-seed", "nav-badge"]) {
        assert.ok(shown.includes(name), `${name} is not in the stylesheet's classes: ${shown.join(" ")}`);
      }
      for (const v of await seriousViolations(page)) found.push(`${scheme}: ${v}`);
      await screenshot(page, `33-a11y-${scheme}-every-badge`);
    }
    assert.deepEqual(found, [], `axe found:\n${found.join("\n")}`);
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe("accessibility of the pages a new user sees first (no model configured, nothing yet)", () => {
  let server;
  let browser;
  let page;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    page = await newPage(browser);
    await page.goto(server.url);
    await page.getByTestId("app-frame").waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("the first-run guide and the empty pages have no serious or critical axe violations", async () => {
    const found = await auditPages(page, server.base, [
      ["first-run settings", "#settings", "dl.facts"],
      ["empty chat", "#chat/web", "[data-testid='app-frame']"],
      ["empty inbox", "#inbox", "[data-testid='app-frame']"],
      ["no sessions", "#sessions", "[data-testid='app-frame']"],
      ["no TIC runs", "#tic", "[data-testid='app-frame']"],
      ["no jobs", "#jobs", ".state-empty"],
    ]);
    assert.deepEqual(found, [], `axe found:\n${found.join("\n")}`);
  });
});
