// Agent memory in the browser against a real `skald serve` and the strict fake provider: a turn in
// which the agent calls memory_write (let through by the seeded memory rule, no approval) shows on
// the Memory page as the agent's edit with its diff and session; a second agent write arrives
// while the page is open (its `file_changed` event, no reload) and is undone from the page (the
// file on disk goes back); the person's own save is recorded too, and an undo of the agent's first
// edit after it is refused with the reason and the person's text kept. axe-core finds no serious
// violation on the page, with a diff and with the refusal shown, in either theme.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { assertAxeBothThemes } from "../lib/axe.mjs";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call, offeredTools, textReply } from "../lib/fake_llm.mjs";
import { turnEnded } from "../lib/server.mjs";

const FIRST = "The user's cat is called Miso.\n";
const SECOND = "The user's cat is called Miso.\nMiso is a tabby who hates the vacuum.\n";
const MINE = "The user's cat is called Miso.\nShe is twelve.\n";

const memoryWrite = (content) => call("memory_write", { path: "notes.md", content });

describe("memory: an agent's write shown as a diff on the Memory page, undone", () => {
  const chat = chatFixture({ workdir: "memory", chunkDelayMs: 5, hash: null });
  const { pageErrors, shoot } = chat;
  let fake, server, page;
  let sessionId;

  const edit = (n) => page.locator(".memory-edit").nth(n);
  const notesFile = () => join(server.dataDir, "memory", "notes.md");
  const axeBothThemes = (what) => assertAxeBothThemes(page, what);

  /** Sends `text` from the web source and waits until its turn has ended. */
  async function turn(text) {
    const sent = await server.call("send_message", { source: "web", text });
    sessionId = sent.session_id;
    await turnEnded(server, sessionId);
  }

  before(async () => {
    ({ fake, server, page } = await chat.start());
  });

  after(() => chat.stop());

  test("an agent's memory_write runs without approval and the page shows it as a diff", async () => {
    await fake.push([memoryWrite(FIRST), textReply("I will remember Miso.")]);
    await turn("Remember that my cat is called Miso.");
    assert.equal(readFileSync(notesFile(), "utf8"), FIRST);
    const [request] = await fake.requests();
    assert.ok(offeredTools(request.body).includes("memory_write"), "memory_write is offered");
    assert.ok(offeredTools(request.body).includes("memory_search"), "memory_search is offered");

    await page.goto(`${server.base}?token=${server.token}#memory`);
    await page.getByRole("heading", { level: 1, name: "Memory" }).waitFor();
    const link = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Memory" });
    assert.equal(await link.getAttribute("aria-current"), "page");
    await page.getByRole("navigation", { name: "Memory files" }).getByRole("link", { name: /notes\.md/ }).waitFor();
    await edit(0).getByText("created by agent").waitFor();
    assert.match(await edit(0).innerText(), new RegExp(`notes\\.md created by agent main in session ${sessionId}`));
    await edit(0).getByText("The user's cat is called Miso.").waitFor();
    assert.equal(
      await edit(0).getByRole("link", { name: `session ${sessionId}` }).getAttribute("href").then((h) => h.split("?")[0]),
      `#session/${sessionId}`,
    );
    await shoot("70-memory-agent-edit");
    await axeBothThemes("the Memory page with an agent's edit");
  });

  test("a second agent write arrives live on the open file and Undo takes it back", async () => {
    await page.getByRole("navigation", { name: "Memory files" }).getByRole("link", { name: /notes\.md/ }).click();
    const content = page.getByLabel("Content of notes.md");
    await content.waitFor();
    assert.equal(await content.inputValue(), FIRST);
    await page.getByRole("heading", { name: "Edits of notes.md" }).waitFor();

    await fake.push([memoryWrite(SECOND), textReply("Noted the vacuum.")]);
    await turn("She is a tabby and hates the vacuum.");
    // No reload: the write's file_changed event brings the edit and the new content.
    await page.locator(".memory-edit").nth(1).waitFor();
    await edit(0).getByText("Miso is a tabby who hates the vacuum.").waitFor();
    await page.waitForFunction((want) => document.querySelector("#memory-content")?.value === want, SECOND);

    const undo = edit(0).getByRole("button", { name: /^Undo edit \d+ of notes\.md$/ });
    await undo.click();
    // The badge comes with the history read again (the "Undone." line before it).
    await edit(0).locator(".badge", { hasText: "undone" }).waitFor();
    assert.equal(await undo.isDisabled(), true);
    assert.equal(readFileSync(notesFile(), "utf8"), FIRST, "the file on disk went back");
    await page.waitForFunction((want) => document.querySelector("#memory-content")?.value === want, FIRST);
    const [latest] = await server.call("memory_history", { path: "notes.md" });
    assert.ok(latest.undone_at, "the edit is recorded as undone");
    await shoot("71-memory-undone");
  });

  test("the person's save is kept: undoing the agent's first edit after it is refused", async () => {
    const content = page.getByLabel("Content of notes.md");
    await content.fill(MINE);
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved.").waitFor();
    assert.equal(readFileSync(notesFile(), "utf8"), MINE);
    await edit(0).getByText("edited by you").waitFor();

    const first = page.locator(".memory-edit").last();
    await first.getByRole("button", { name: /^Undo edit \d+ of notes\.md$/ }).click();
    const alert = first.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.innerText(), /notes\.md changed since this edit/);
    assert.equal(readFileSync(notesFile(), "utf8"), MINE, "the person's text is kept");
    await shoot("72-memory-undo-refused");
    await axeBothThemes("the Memory page with a refused undo");
    assert.deepEqual(pageErrors, []);
  });
});
