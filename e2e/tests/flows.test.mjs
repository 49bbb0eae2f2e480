// User flows against a real `skald serve` talking to the strict fake provider: a streamed turn, an
// edit rejected with a note from the Inbox and the next one approved, the debug tree with the raw
// request, a reload mid-turn that keeps STOP, an approval with a bypass that is listed and revoked,
// and the Settings page with the env client.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call } from "../lib/fake_llm.mjs";

const NOTE = "Keep the title line, only change the body";
const ORIGINAL = "# Notes\nhello\n";
const REJECTED = "# Renamed\nrejected body\n";
const APPROVED = "# Notes\napproved body\n";
const STREAMED =
  "Streaming works: the quick brown fox jumps over the lazy dog, then the dog naps in the warm afternoon sun.";

const writeCall = (content) => call("write_file", { path: "notes.md", content });

describe("chat, approvals, debug tree and settings against the fake provider", () => {
  const chat = chatFixture({
    workdir: "work",
    files: { "notes.md": ORIGINAL },
    chunkDelayMs: 30,
    // Keep each round's request so the debug tree can show it.
    config: "llm:\n  request_log:\n    enabled: true\n",
    hash: null,
  });
  const { pageErrors, shoot, composer, sendButton, stopButton, send, waitForHash } = chat;
  let fake, server, page, workdir;
  const api = (op, params) => server.call(op, params);

  before(async () => {
    ({ fake, server, page, workdir } = await chat.start());
  });

  after(() => chat.stop());

  test("a streamed turn in #chat/web: tokens appear one by one, then the final text", async () => {
    await fake.push({ type: "text", content: STREAMED });
    await chat.open("#chat/web");
    // A client exists (the env one), so the first-run redirect must not fire.
    assert.equal(await page.evaluate(() => window.location.hash), "#chat/web");

    await send("Say something long, please");
    await page.locator('.bubble-user', { hasText: "Say something long, please" }).waitFor();
    const bubble = page.locator(".bubble-assistant").last();
    // While streaming, the bubble holds a growing prefix of the answer.
    await page.locator(".bubble-assistant.is-streaming").waitFor();
    await stopButton().waitFor();
    const partial = (await bubble.innerText()).trim();
    assert.ok(partial.length > 0 && partial.length < STREAMED.length, `partial text while streaming: "${partial}"`);
    assert.ok(STREAMED.startsWith(partial.slice(0, 10)), `streamed text is a prefix of the answer: "${partial}"`);
    await shoot("10-chat-streaming");

    await page.locator(".bubble-assistant:not(.is-streaming)", { hasText: "lazy dog, then the dog naps" }).waitFor();
    assert.equal((await bubble.innerText()).trim(), STREAMED);
    await sendButton().waitFor();
    await shoot("11-chat-streamed");
  });

  test("an edit rejected from the Inbox with a note; the note reaches the model; the next edit is approved", async () => {
    await fake.push([writeCall(REJECTED), writeCall(APPROVED), { type: "text", content: "Updated notes.md as asked." }]);
    await send("Rewrite notes.md");

    // The chat shows the approval card with the diff.
    const card = page.locator("section.approval-card").last();
    await card.waitFor();
    assert.match(await card.innerText(), /rejected body/);
    await shoot("12-chat-approval-card");

    await page.locator('nav a[href="#inbox"]').click();
    await waitForHash("#inbox");
    const rows = page.locator("ul.inbox-list li.inbox-row");
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1);
    const firstId = Number(await rows.first().getAttribute("data-tool-call-id"));
    const diff = page.locator("figure.diff");
    await diff.waitFor();
    assert.match(await diff.innerText(), /notes\.md/);
    assert.match(await diff.innerText(), /rejected body/);
    assert.match(await page.locator('nav a[href="#inbox"]').innerText(), /1/);
    await shoot("13-inbox-first-edit");

    await page.getByLabel("Rejection note (reaches the agent)").fill(NOTE);
    await page.getByRole("button", { name: /^Reject/ }).click();

    // The model retries; its second edit lands in the Inbox.
    await page.waitForFunction(
      (old) => {
        const ids = [...document.querySelectorAll("ul.inbox-list li.inbox-row")].map((li) => Number(li.getAttribute("data-tool-call-id")));
        return ids.length === 1 && ids[0] !== old;
      },
      firstId,
    );
    assert.match(await page.locator("figure.diff").innerText(), /approved body/);
    assert.equal(readFileSync(join(workdir, "notes.md"), "utf8"), ORIGINAL, "a rejected edit leaves the file alone");

    // The provider's journal: the request after the rejection carries the note verbatim.
    const journal = await fake.requests();
    const toolResults = journal.flatMap((r) => (r.body?.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content)));
    assert.ok(
      toolResults.includes(`User rejected this tool call. Reason: ${NOTE}`),
      `a tool result carries the rejection note; saw: ${JSON.stringify(toolResults)}`,
    );
    await shoot("14-inbox-second-edit");

    await page.getByRole("button", { name: /^Approve a$/ }).click();
    await page.locator("ul.inbox-list").waitFor({ state: "detached" });
    await page.waitForFunction(() => !document.querySelector(".nav-badge"));
    await shoot("15-inbox-empty");

    const deadline = Date.now() + 10_000;
    while (readFileSync(join(workdir, "notes.md"), "utf8") !== APPROVED && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(readFileSync(join(workdir, "notes.md"), "utf8"), APPROVED, "the approved edit is on disk");

    await page.locator('nav a[href="#chat/web"]').click();
    await page.locator(".bubble-assistant", { hasText: "Updated notes.md as asked." }).waitFor();
    await sendButton().waitFor();
    // The done write shows what it changed: "hello" replaced by "approved body".
    const applied = page.locator('article[data-status="done"] figure.diff');
    await applied.waitFor();
    assert.match(await applied.innerText(), /approved body/);
    assert.match(await applied.innerText(), /hello/);
    assert.equal(await page.locator('article[data-status="rejected"] figure.diff').count(), 0, "a rejected write changed nothing");
    await shoot("16-chat-after-edits");
  });

  test("the session's debug tree shows the rejected and the done write, and a round's raw request", async () => {
    const { session_id: id } = await api("active_session", { source: "web" });
    await page.goto(`${server.base}#session/${id}`);
    const tree = page.getByRole("list", { name: "Session messages" });
    await tree.waitFor();
    const tools = tree.locator('li[data-kind="tool"]');
    await tools.first().waitFor();
    const statuses = await tools.locator(".status").allInnerTexts();
    assert.deepEqual(statuses, ["rejected", "done"]);
    assert.match(await tools.nth(0).innerText(), /write_file/);
    assert.match(await tools.nth(0).innerText(), /Renamed/);
    // Only the done write recorded a change.
    assert.equal(await tools.nth(0).locator("figure.diff").count(), 0);
    assert.match(await tools.nth(1).locator("figure.diff").innerText(), /approved body/);

    await tools.first().scrollIntoViewIfNeeded();
    await shoot("17-session-debug-tree");

    const round = tree.locator('li[data-kind="thinking"]').first();
    const toggle = round.getByRole("button", { name: "Show request" });
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    await toggle.click();
    const raw = round.locator("pre.raw-request");
    await raw.waitFor();
    const text = await raw.innerText();
    // The engine labels the logged request with the client that served it (`env` here).
    assert.match(text, /"model": "(env|fake-model)"/);
    assert.match(text, /"name": "write_file"/, "the offered tools are part of the request");
    assert.match(text, /Rewrite notes\.md/);
    await shoot("17b-session-raw-request");
  });

  test("a reload during a stalled round still shows STOP, then the answer arrives and SEND returns", async () => {
    await fake.push([{ type: "stall", ms: 4000, then_hang: false }, { type: "text", content: "Sorry for the wait: here it is." }]);
    await page.goto(`${server.base}#chat/web`);
    await composer().waitFor();
    await send("Are you there?");
    await stopButton().waitFor();
    await page.reload();
    await composer().waitFor();
    // The engine is still waiting for the provider; the page asks and restores the running state.
    await stopButton().waitFor({ timeout: 3_000 });
    assert.equal(await sendButton().count(), 0);
    await shoot("18-chat-reloaded-running");

    await page.locator(".bubble-assistant", { hasText: "Sorry for the wait: here it is." }).waitFor({ timeout: 15_000 });
    await sendButton().waitFor();
    assert.equal(await stopButton().count(), 0);
    await shoot("19-chat-after-stall");
  });

  test("an approval with a bypass lets the next write run unasked; the inbox lists it and Revoke ends it", async () => {
    const bypassWrite = (content) => call("write_file", { path: "bypass.md", content });
    await fake.push([bypassWrite("one\n"), bypassWrite("two\n"), { type: "text", content: "Wrote bypass.md twice." }]);
    await page.goto(`${server.base}#chat/web`);
    await composer().waitFor();
    await send("Write bypass.md twice");
    await page.locator("section.approval-card").last().waitFor();

    await page.locator('nav a[href="#inbox"]').click();
    await waitForHash("#inbox");
    await page.locator("ul.inbox-list li.inbox-row").first().waitFor();
    const covers = page.getByLabel("Covers");
    assert.deepEqual(await covers.locator("option").allInnerTexts(), ["filesystem tools", "All tools"]);
    await page.getByLabel("For").selectOption({ label: "This session (until /new, at most 24 h)" });
    await shoot("21-inbox-bypass-choice");
    await page.getByRole("button", { name: "Approve + bypass" }).click();

    // The second write needed no decision: the turn finishes by itself.
    const bypasses = page.getByRole("region", { name: "Active bypasses" });
    const row = bypasses.locator("li.bypass-row");
    await row.waitFor();
    assert.match(await row.innerText(), /filesystem tools in session #\d+ \(web\)/);
    assert.match(await row.innerText(), /granted by web · this session, (23 h 59 min|1 d) left at most/);
    const current = () => (existsSync(join(workdir, "bypass.md")) ? readFileSync(join(workdir, "bypass.md"), "utf8") : null);
    const deadline = Date.now() + 10_000;
    while (current() !== "two\n" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(readFileSync(join(workdir, "bypass.md"), "utf8"), "two\n", "the second write ran under the bypass");
    assert.equal((await api("inbox")).total, 0, "nothing waited for the second write");
    await shoot("22-inbox-bypass-listed");

    // The chat shows the session's bypass too.
    await page.locator('nav a[href="#chat/web"]').click();
    await page.locator(".bubble-assistant", { hasText: "Wrote bypass.md twice." }).waitFor();
    const strip = page.getByRole("region", { name: "Bypasses in this session" });
    await strip.waitFor();
    assert.match(await strip.innerText(), /filesystem tools/);
    await shoot("23-chat-bypass-strip");

    await page.locator('nav a[href="#inbox"]').click();
    await row.getByRole("button", { name: /^Revoke the bypass of filesystem tools/ }).click();
    await row.waitFor({ state: "detached" });
    assert.deepEqual(await api("active_bypasses"), [], "revoked for every process");

    // Revoked: the next write asks again.
    await fake.push([bypassWrite("three\n"), { type: "text", content: "Wrote it again." }]);
    await page.locator('nav a[href="#chat/web"]').click();
    await composer().waitFor();
    await strip.waitFor({ state: "detached" });
    await send("Write bypass.md once more");
    const card = page.locator("section.approval-card").last();
    await card.waitFor();
    assert.equal(readFileSync(join(workdir, "bypass.md"), "utf8"), "two\n");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await page.locator(".bubble-assistant", { hasText: "Wrote it again." }).waitFor();
    assert.equal(readFileSync(join(workdir, "bypass.md"), "utf8"), "three\n");
    await shoot("24-chat-after-revoke");
  });

  test("Settings shows the env client read-only, the seeded rules, the built-in agents and the files", async () => {
    await page.locator('nav a[href="#settings"]').click();
    await waitForHash("#settings");
    const clients = page.getByRole("list", { name: "LLM clients in fallback order" });
    await clients.waitFor();
    const env = clients.locator('li[data-client="env"]');
    await env.waitFor();
    const envText = await env.innerText();
    assert.match(envText, /from environment/);
    assert.match(envText, /fake-model/);
    assert.match(envText, /SKALD_LLM_BASE_URL/);
    assert.equal(await env.getByRole("button", { name: /^Edit/ }).count(), 0, "the env client cannot be edited");

    await env.getByRole("button", { name: "Test connection" }).click();
    await env.getByText(/Connected in \d+ ms · 2 models/).waitFor();

    const rules = page.getByRole("table", { name: "Approval rules" });
    await rules.waitFor();
    assert.ok((await rules.locator("tbody tr").count()) > 0, "the seeded rules are listed");
    assert.ok((await rules.locator(".badge-seed").count()) > 0, "seeded rules are marked as defaults");
    const agents = page.getByRole("table", { name: "Agents" });
    await agents.waitFor();
    // The built-ins are there on a fresh install: the chat agent and one to delegate to.
    const main = await agents.locator('tr[data-agent-id="main"]').innerText();
    assert.ok(/built-in/.test(main) && /\bchat\b/.test(main), main);
    assert.match(await agents.locator('tr[data-agent-id="generalist"]').innerText(), /\btask\b/);
    assert.match(await page.locator("dl.facts").innerText(), /config\.yml/);
    assert.equal(await page.getByText("Connect a language model to get started").count(), 0);
    await shoot("20-settings");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
