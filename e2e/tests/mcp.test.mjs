// An MCP server in the browser against a real `skald serve`, the strict fake provider and the
// real `@modelcontextprotocol/server-everything` (npm, scripts/mcp-peers) declared in config.yml:
// the model delegates to the built-in generalist, which activates the server for itself; its
// call of a tool the server does not call read-only waits in its lane as an MCP approval naming
// the server and the tool; the approval runs it on the server and the child reads its answer;
// the parent is never offered the server's tools. Settings lists the server, starts it on demand
// and shows its tools with which ones ask first.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call, firstMessage, offeredTools, toolResults } from "../lib/fake_llm.mjs";

const SERVER_BIN = process.env.SKALD_MCP_EVERYTHING;
const CHILD_TASK = "MCP-TASK: turn on the test server's simulated logging";
const CHILD_ANSWER = "Simulated logging is on.";
const PARENT_ANSWER = "Your generalist turned the server's logging on.";
const TOGGLE = "mcp__everything__toggle-simulated-logging";


describe("an MCP server activated by a sub-agent, approved in its lane", () => {
  const chat = chatFixture({
    workdir: "mcp",
    chunkDelayMs: 5,
    script: [
      call("execute_task", { mode: "sync", agent_id: "generalist", prompt: CHILD_TASK }),
      call("activate_tools", { groups: ["everything"] }),
      call(TOGGLE, {}),
      { type: "text", content: CHILD_ANSWER },
      { type: "text", content: PARENT_ANSWER },
    ],
    // Marked trusted, so its read-only tools run freely (an untrusted server's all ask first);
    // its toggle tool is not read-only and still asks.
    config: `mcp:\n  servers:\n    - name: everything\n      command: ${SERVER_BIN}\n      description: the MCP reference test server\n      trusted: true\n`,
  });
  const { pageErrors, shoot, send, sendButton } = chat;
  let fake, server, page;

  before(async () => {
    assert.ok(SERVER_BIN && existsSync(SERVER_BIN), "SKALD_MCP_EVERYTHING: run scripts/mcp-peers/install.sh (scripts/e2e-browser.sh does)");
    ({ fake, server, page } = await chat.start());
  });

  after(() => chat.stop());

  test("the child's MCP call waits in its lane naming server and tool; approving runs it on the server", async () => {
    await send("Have a sub-agent turn on the test server's logging");

    const head = page.locator('[data-testid="lane-head"]');
    await head.waitFor();
    const label = await head.getAttribute("data-lane-label");
    assert.match(label, /^generalist#[1-9][0-9]*$/);
    const card = page.locator(`section.approval-card[data-origin="${label}"]`);
    await card.waitFor();
    const text = await card.innerText();
    assert.match(text, /Calls toggle-simulated-logging on MCP server everything/);
    assert.equal(await card.locator("xpath=ancestor::div[contains(@class,'lane-row')]").count(), 1, "the card sits in the lane");
    // The activation reads as what it did, in the child's lane.
    const laneText = await page.locator(".lane-row").allInnerTexts();
    assert.ok(laneText.some((t) => t.includes("activate_tools everything")), JSON.stringify(laneText));
    await shoot("60-mcp-approval-in-lane");

    await card.getByRole("button", { name: /^Approve/ }).first().click();
    await page.locator(".lane-row .bubble-assistant", { hasText: CHILD_ANSWER }).waitFor();
    await page.locator(".bubble-assistant:not(.is-streaming)", { hasText: PARENT_ANSWER }).waitFor();
    await sendButton().waitFor();
    await shoot("61-mcp-turn-done");

    // parent, child ×3, parent; the child's rounds after its activation offer the server's
    // tools, the parent's never do; the server's own answer reached the child.
    const requests = await fake.requests();
    assert.equal(requests.length, 5);
    const offers = requests.map((r) => [firstMessage(r.body).includes("MCP-TASK"), offeredTools(r.body).includes(TOGGLE)]);
    assert.deepEqual(offers, [
      [false, false],
      [true, false],
      [true, true],
      [true, true],
      [false, false],
    ]);
    for (const r of requests) {
      assert.equal(r.validation_error ?? null, null, `request ${r.seq} was valid`);
      assert.equal(r.unscripted, false, `request ${r.seq} was scripted`);
      const names = offeredTools(r.body);
      assert.equal(new Set(names).size, names.length, `no tool offered twice: ${names}`);
    }
    const serverSaid = toolResults(requests[3].body).at(-1);
    assert.match(serverSaid, /logging/i, serverSaid);
  });

  test("Settings lists the server and, once started, its tools and which ask first", async () => {
    await page.locator('nav a[href="#settings"]').click();
    const item = page.locator('[data-mcp-server="everything"]');
    await item.waitFor();
    assert.match(await item.innerText(), /the MCP reference test server/);
    await page.getByRole("button", { name: "Start servers and list their tools" }).click();
    const tools = page.getByRole("table", { name: "Tools of everything" });
    await tools.waitFor();
    const echo = tools.locator("tr", { hasText: "mcp__everything__echo" });
    assert.match(await echo.innerText(), /Read-only, runs freely/);
    const toggle = tools.locator("tr", { hasText: TOGGLE });
    assert.match(await toggle.innerText(), /Asks first/);
    await item.scrollIntoViewIfNeeded();
    await shoot("62-mcp-settings");

    // Adding a server from the form writes it into config.yml, after the one declared by hand.
    await page.getByRole("button", { name: "Add a server" }).click();
    const form = page.getByRole("form", { name: "Add an MCP server" });
    await form.getByLabel("Name").fill("tracker");
    await form.getByLabel("Runs").selectOption("remote");
    await form.getByLabel("URL").fill("https://mcp.example.com/mcp");
    await form.getByLabel(/Key variable/).fill("TRACKER_KEY");
    await form.getByRole("button", { name: "Add server" }).click();
    await page.locator('[data-mcp-server="tracker"]').waitFor();
    const config = readFileSync(join(server.dataDir, "config.yml"), "utf8");
    assert.match(config, /- name: everything[\s\S]*- name: tracker\n\s+url: https:\/\/mcp\.example\.com\/mcp\n\s+api_key_env: TRACKER_KEY\n/, config);
    await page.getByRole("button", { name: "Disable MCP server tracker" }).click();
    await page.locator('[data-mcp-server="tracker"] .mcp-state-disabled').waitFor();
    assert.match(readFileSync(join(server.dataDir, "config.yml"), "utf8"), /enabled: false/);
    await shoot("63-mcp-settings-added");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
