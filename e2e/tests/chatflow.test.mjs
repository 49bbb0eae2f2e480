// What the chat shows around steers and reconnects, on a fresh install against the fake provider:
// a message sent during a tool run gets its own bubble (its id must not clash with history ids),
// an answer that a steer outlives stays on screen once, a message sent while a write waits for
// approval is queued behind the decision, and a WebSocket that drops while a tool runs resyncs
// the chat from the engine.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call } from "../lib/fake_llm.mjs";
import { allowCommands, turnEnded } from "../lib/server.mjs";

const LONG_ANSWER = Array.from(
  { length: 14 },
  (_, i) => `Part ${i + 1} of the long story goes on about the harbour, the boats and the tides.`,
).join(" ");

const command = (cmd) => call("execute_cmd", { command: cmd });

describe("steers and reconnects in the chat", () => {
  const chat = chatFixture({ workdir: "flow", chunkDelayMs: 30, hash: null });
  const { pageErrors, shoot, composer, sendButton } = chat;
  let fake, server, page;
  /** While true, the page's WebSocket cannot reconnect (each attempt is closed at once). */
  let offline = false;
  let socket = null;
  const api = (op, params) => server.call(op, params);

  /** Enter sends, also while a turn runs (then only STOP is shown as a button). */
  async function send(text) {
    await composer().fill(text);
    await composer().press("Enter");
  }

  /** Reloads the page and waits until the conversation is shown again. */
  async function reloadShowing(text) {
    await page.reload();
    await page.locator(".bubble-user", { hasText: text }).first().waitFor();
  }

  /** The conversation as [kind, text] pairs, from the first user bubble that says `from`. */
  async function conversationFrom(from) {
    const items = await page
      .locator("ol.chat-log > li[data-kind]")
      .evaluateAll((lis) =>
        lis.map((li) => {
          const card = li.querySelector("article");
          const text = card ? card.getAttribute("aria-label") : (li.querySelector(".bubble-text") ?? li).innerText;
          return [li.dataset.kind, text.trim()];
        }),
      );
    const start = items.findIndex(([kind, text]) => kind === "user" && text.startsWith(from));
    assert.ok(start >= 0, `no user bubble "${from}" in ${JSON.stringify(items)}`);
    return items.slice(start);
  }

  before(async () => {
    ({ fake, server, page } = await chat.start());
    // Commands run without asking here, so a tool can be running while the test acts.
    await allowCommands(server);
    await page.routeWebSocket(/\/api\/ws/, (ws) => {
      if (offline) {
        ws.close();
        return;
      }
      ws.connectToServer();
      socket = ws;
    });
    await chat.open("#chat/web");
  });

  after(() => chat.stop());

  test("a message sent while a tool runs shows as queued, then joins the conversation after the tool", async () => {
    await fake.push([command("sleep 2"), { type: "text", content: "Saw both messages." }]);
    await send("First, nap for two seconds");
    await page.locator('article[data-status="running"]').waitFor();
    // On a fresh install this is pending input 1, while the first history row is message 1.
    await send("Then say you saw this");
    const steer = page.locator(".bubble-user", { hasText: "Then say you saw this" });
    await steer.waitFor();
    assert.equal(await steer.locator(".bubble-queued").count(), 1, "the steer is marked queued");
    await shoot("30-chat-steer-queued");

    await page.locator(".bubble-assistant", { hasText: "Saw both messages." }).waitFor();
    await sendButton().waitFor();
    assert.equal(await page.locator(".bubble-user.is-queued").count(), 0, "nothing stays queued");
    const live = await conversationFrom("First, nap");
    assert.deepEqual(
      live.map(([kind]) => kind),
      ["user", "tool", "user", "assistant"],
      JSON.stringify(live),
    );
    assert.equal(live[2][1], "Then say you saw this");
    // The model got the steer after the tool's result, as one more user message (the request's
    // closing system message is the environment, not conversation).
    const last = (await fake.requests()).at(-1).body.messages.filter((m) => m.role !== "system");
    assert.equal(last.at(-1).role, "user");
    assert.equal(last.at(-1).content, "Then say you saw this");
    assert.equal(last.at(-2).role, "tool");
    await shoot("31-chat-steer-folded");

    await reloadShowing("First, nap");
    assert.deepEqual(await conversationFrom("First, nap"), live, "a reload shows the same conversation");
  });

  test("a steer sent while the answer streams: the first answer stays, the second follows once", async () => {
    await fake.push([{ type: "text", content: LONG_ANSWER }, { type: "text", content: "Short version: boats." }]);
    await send("Tell me the long story");
    await page.locator(".bubble-assistant.is-streaming").waitFor();
    await send("Actually, keep it short");
    await page.locator(".bubble-assistant:not(.is-streaming)", { hasText: "Short version: boats." }).waitFor();
    await sendButton().waitFor();
    const live = await conversationFrom("Tell me the long story");
    assert.deepEqual(
      live.map(([kind, text]) => [kind, text.slice(0, 30)]),
      [
        ["user", "Tell me the long story"],
        ["assistant", LONG_ANSWER.slice(0, 30)],
        ["user", "Actually, keep it short"],
        ["assistant", "Short version: boats."],
      ],
    );
    assert.equal(live[1][1], LONG_ANSWER, "the first answer is shown whole");
    assert.equal(await page.locator(".bubble-assistant.is-streaming").count(), 0);
    await shoot("32-chat-steer-after-answer");

    await reloadShowing("Tell me the long story");
    assert.deepEqual(await conversationFrom("Tell me the long story"), live, "a reload shows the same conversation");
  });

  test("a message sent while a write waits for approval is queued behind it until the decision", async () => {
    await fake.push([
      call("write_file", { path: "plan.md", content: "# Plan\n" }),
      { type: "text", content: "Wrote plan.md and noted the deadline." },
    ]);
    await send("Write plan.md");
    const card = page.locator("section.approval-card");
    await card.waitFor();
    const asked = (await fake.requests()).length;
    await send("The deadline is Friday");
    const queued = page.locator(".bubble-user.is-queued", { hasText: "The deadline is Friday" });
    await queued.waitFor();
    assert.match(await queued.locator(".bubble-queued").innerText(), /waiting for your decision on write_file plan\.md/);
    await shoot("35-chat-queued-behind-approval");
    assert.equal((await fake.requests()).length, asked, "the model is not asked while the write waits");

    await card.getByRole("button", { name: /^Approve/ }).first().click();
    await page.locator(".bubble-assistant", { hasText: "Wrote plan.md and noted the deadline." }).waitFor();
    const live = await conversationFrom("Write plan.md");
    assert.deepEqual(
      live.map(([kind]) => kind),
      ["user", "tool", "user", "assistant"],
      JSON.stringify(live),
    );
    const last = (await fake.requests()).at(-1).body.messages.filter((m) => m.role !== "system");
    assert.deepEqual(
      last.slice(-2).map((m) => m.role),
      ["tool", "user"],
      "the write's result, then the queued message",
    );
  });

  test("a reconnect while a tool runs brings the card and the answer up to date without a reload", async () => {
    const { session_id: sessionId } = await api("active_session", { source: "web" });
    await fake.push([command("sleep 2 && echo rested"), { type: "text", content: "Rested and ready." }]);
    await page.evaluate(() => {
      window.__sameDocument = true;
    });
    await send("Rest for two seconds");
    await page.locator('article[data-status="running"]').waitFor();
    offline = true;
    await socket.close();
    // Everything of this turn happens while the page is disconnected.
    await turnEnded(server, sessionId);
    await shoot("33-chat-disconnected");
    assert.equal(await page.locator('article[data-status="running"]').count(), 1, "the page missed the events");
    offline = false;

    await page.locator('article[data-status="done"]', { hasText: "sleep 2 && echo rested" }).waitFor();
    await page.locator(".bubble-assistant", { hasText: "Rested and ready." }).waitFor();
    await sendButton().waitFor();
    assert.equal(await page.locator('article[data-status="running"]').count(), 0);
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was not reloaded");
    await shoot("34-chat-resynced");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
