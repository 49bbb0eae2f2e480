// Full-text search through the real stack: turns stored by `skald serve` against the strict fake
// provider are found from the Sessions page's search box (the matched word marked in the hit's
// snippet), the hit opens its session at the matching message (#session/ID?message=M), and Find
// in session steps to the match there.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { turnEnded } from "../lib/server.mjs";

// More rows than a window holds (100): the hit and the first find are not loaded when asked for.
const TURNS = 60;
const HIT_TURN = 7;
const HIT_ANSWER = "The quokka burrow is mapped under the old ledger shed.";

describe("search", () => {
  const chat = chatFixture({ workdir: "search", chunkDelayMs: 0, hash: null });
  const { pageErrors, shoot, waitForHash } = chat;
  let fake, server, page;
  const api = (op, params) => server.call(op, params);
  /** Waits (on the stored rows) until the session's turn has ended. */
  const ended = (sessionId) => turnEnded(server, sessionId, { pollMs: 50 });

  before(async () => {
    ({ fake, server, page } = await chat.start());
  });

  after(() => chat.stop());

  test("a word typed in the Sessions search is found, marked, and opens its session at the message", async () => {
    let sessionId;
    for (let i = 0; i < TURNS; i++) {
      await fake.push({ type: "text", content: i === HIT_TURN ? HIT_ANSWER : `Answer ${i}: nothing to report.` });
      const sent = await api("send_message", { source: "web", text: `Round ${i}: what changed?` });
      sessionId = sent.session_id;
      await ended(sessionId);
    }
    await fake.push({ type: "text", content: "A different conversation." });
    const other = await api("send_message", { source: "other", text: "hello elsewhere" });
    await ended(other.session_id);

    const { hits } = await api("search", { query: { text: "quokka", limit: 5 } });
    assert.equal(hits.length, 1, JSON.stringify(hits));
    const messageId = hits[0].at.message_id;

    await page.goto(`${server.url}#sessions`);
    await page.getByRole("searchbox", { name: "Search" }).fill("quokk");
    const hit = page.locator(`tr[data-session-id="${sessionId}"] .search-hit`);
    await hit.waitFor();
    assert.equal(await page.locator("tbody tr").count(), 1, "only the session that holds the word is listed");
    assert.deepEqual(await hit.locator("mark").allInnerTexts(), ["quokka"]);
    assert.match(await hit.innerText(), /The quokka burrow is mapped under the old ledger shed\./);
    await shoot("40-sessions-search");

    const link = hit.getByRole("link", { name: "Assistant" });
    assert.equal(await link.getAttribute("href"), `#session/${sessionId}?message=${messageId}`);
    await link.click();
    await waitForHash(`#session/${sessionId}?message=${messageId}`);
    await page.getByRole("list", { name: "Session messages" }).getByText(HIT_ANSWER).waitFor();
    // The session opens at the hit, highlighted (the windowed tree's focus row).
    const focused = page.locator("li.is-focus");
    await focused.waitFor();
    assert.ok((await focused.innerText()).includes(HIT_ANSWER), await focused.innerText());

    // Find in session counts the session's matches and steps to them.
    const find = page.getByRole("search", { name: "Find in this session" });
    await find.getByRole("searchbox", { name: "Find in session" }).fill("ledger");
    await find.getByRole("status").filter({ hasText: "1 match" }).waitFor();
    await find.getByRole("searchbox", { name: "Find in session" }).fill("what changed");
    await find.getByRole("status").filter({ hasText: `${TURNS} matches` }).waitFor();
    await find.getByRole("button", { name: "Next" }).click();
    await find.getByRole("status").filter({ hasText: `1 of ${TURNS}` }).waitFor();
    const first = await api("find_in_session", { session_id: sessionId, text: "what changed" });
    await waitForHash(`#session/${sessionId}?message=${first.matches[0].message_id}`);
    // The first match is older than the newest window: it is loaded, shown and highlighted.
    await page.locator("li.is-focus").filter({ hasText: "Round 0: what changed?" }).waitFor();
    await shoot("41-find-in-session");
    assert.deepEqual(pageErrors, []);
  });
});
