// TIC in the browser against a real `skald serve`, the strict fake provider and a real MCP server
// that pushes notifications (scripts/mcp-peers/push_server.py, written with the official Python
// `mcp` package, installed by scripts/mcp-peers/install.sh) marked `keep_connected` in config.yml:
// the engine starts it on its own, stores what it pushes, and a tick (Run a tick now on the TIC
// page, or the interval's own) has the hidden `tic` agent read the batch. The page shows the tick
// done with its two events and their server, shows the events as text (a `<img>` in a server's
// params stays text), and its link opens the tick's session with the synthetic prompt and the
// agent's answer. axe-core finds no serious violation on the page, in either theme.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { assertAxeBothThemes } from "../lib/axe.mjs";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { firstMessage, textReply } from "../lib/fake_llm.mjs";
import { REPO_ROOT } from "../lib/server.mjs";

const PEERS = join(REPO_ROOT, "scripts", "mcp-peers");
const PYTHON = join(PEERS, ".venv", "bin", "python");
const ANSWER = "Two messages arrived in the inbox; the quarterly report is the one that matters.";
const PARAMS = JSON.stringify({ subject: "<img src=x onerror=alert(1)> Quarterly report" });

describe("TIC: a kept server's pushes read by a tick, shown on the TIC page", () => {
  const chat = chatFixture({
    // No working directory: the tick only answers.
    workdir: null,
    chunkDelayMs: 5,
    byPrompt: { "TIC tick:": textReply(ANSWER) },
    // An hour between ticks: the interval's own tick comes at most once during the test.
    config: [
      "tic:",
      "  interval_secs: 3600",
      "mcp:",
      "  servers:",
      "    - name: inbox",
      `      command: ${PYTHON}`,
      `      args: [${JSON.stringify(join(PEERS, "push_server.py"))}]`,
      "      description: my mail",
      "      keep_connected: true",
      "      env:",
      '        PUSH_ON_START: "2"',
      "        PUSH_METHOD: event/new_email",
      `        PUSH_PARAMS: ${JSON.stringify(PARAMS)}`,
      "",
    ].join("\n"),
    hash: "#tic",
  });
  const { pageErrors, shoot, waitForHash } = chat;
  let fake, server, page;
  let tickId;

  const table = () => page.getByRole("table", { name: "TIC ticks" });
  const axeBothThemes = (what) => assertAxeBothThemes(page, what);

  before(async () => {
    assert.ok(existsSync(PYTHON), `${PYTHON}: run scripts/mcp-peers/install.sh (scripts/e2e-browser.sh does)`);
    ({ fake, server, page } = await chat.start());
    await page.getByRole("heading", { level: 1, name: "TIC" }).waitFor();
  });

  after(() => chat.stop());

  test("the kept server is started by the engine and what it pushes is stored", async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const status = await server.call("tic_status", {});
      assert.deepEqual(status.kept_connected, ["inbox"]);
      if (status.pending_events === 2 || status.ticks.some((t) => t.events === 2)) break;
      assert.ok(Date.now() < deadline, `the pushed events were not stored: ${JSON.stringify(status)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  test("a tick reads them: the page shows it done with its events and server", async () => {
    const status = await server.call("tic_status", {});
    if (status.pending_events === 2) {
      await page.getByRole("button", { name: "Run a tick now" }).click();
      await page.getByText(/Tick \d+ started on 2 event\(s\)\./).waitFor();
    }
    await table().waitFor();
    await page.waitForFunction(
      () => document.querySelector('table[aria-label="TIC ticks"] tbody tr')?.getAttribute("data-state") === "done",
      null,
      { timeout: 30_000 },
    );
    const row = table().locator("tbody tr").first();
    tickId = Number(await row.getAttribute("data-tick-id"));
    assert.equal((await row.locator("td").nth(1).innerText()).trim(), "2");
    assert.equal((await row.locator("td").nth(2).innerText()).trim(), "inbox");
    await page.getByTestId("tic-summary").getByText(/Servers kept connected: inbox\./).waitFor();
    // Exactly one model request, the tick's, with the batch as data.
    const journal = await fake.requests();
    const asked = journal.filter((e) => firstMessage(e.body).startsWith("TIC tick:"));
    assert.equal(asked.length, 1);
    const prompt = firstMessage(asked[0].body);
    assert.match(prompt, /event\/new_email/);
    assert.ok(!prompt.includes("<img"), "the params are escaped in the prompt");
    await shoot("70-tic-page");
    await axeBothThemes("the TIC page");
  });

  test("its events show as text, and its link opens the tick's session", async () => {
    await page.getByRole("button", { name: `Events of tick ${tickId}` }).click();
    const list = page.getByRole("list", { name: `Events of tick ${tickId}` });
    await list.waitFor();
    assert.equal(await list.getByRole("listitem").count(), 2);
    await list.getByText("<img src=x onerror=alert(1)> Quarterly report", { exact: false }).first().waitFor();
    assert.equal(await list.locator("img").count(), 0);
    await shoot("71-tic-events");
    await axeBothThemes("a tick's events");

    const link = table().locator("tbody tr").first().getByRole("link", { name: /^Session #\d+$/ });
    const href = await link.getAttribute("href");
    await link.click();
    await waitForHash(href);
    const user = page.locator('li[data-kind="user"]').first();
    await user.waitFor();
    assert.match(await user.innerText(), /TIC tick: 2 event\(s\)/);
    await page.getByText(ANSWER).first().waitFor();
    await shoot("72-tic-session");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
