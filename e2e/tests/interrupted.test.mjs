// A crash in the middle of a shell command, in the browser against a real `skald serve`: the user
// approves a slow command, the server is SIGKILLed while it runs and started again on the same
// data dir. The command dies with the server and never finishes; the restarted server continues
// the turn by itself without running the command again, and the Agent Inbox lists the call under
// "Interrupted calls" (no serious axe finding) until the user says it did not run.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { seriousViolations } from "../lib/axe.mjs";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call } from "../lib/fake_llm.mjs";

const COMMAND = "echo started > started.txt; sleep 3; echo late > late.txt";
const AFTER_RESTART = "The deploy script was cut off by a restart; please check whether it ran.";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, check, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe("a command cut off by a crash is listed in the Agent Inbox until the user answers", () => {
  const chat = chatFixture({ workdir: "crash", chunkDelayMs: 5, script: [call("execute_cmd", { command: COMMAND })] });
  const { pageErrors, shoot, send } = chat;
  let fake, server, page, workdir;
  const interrupted = () => page.getByRole("list", { name: "Interrupted calls" });

  before(async () => {
    ({ fake, server, page, workdir } = await chat.start());
  });

  // Stops the restarted server too: the fixture holds the newest.
  after(() => chat.stop());

  test("the approved command runs; a SIGKILL of the server takes it down before it finishes", async () => {
    await send("Run the deploy script");
    const card = page.locator("section.approval-card");
    await card.waitFor();
    await card.getByRole("button", { name: /^Approve/ }).first().click();
    await until("the command to start", () => existsSync(join(workdir, "started.txt")));

    const { signal } = await server.kill();
    assert.equal(signal, "SIGKILL");
    await sleep(3500);
    assert.equal(existsSync(join(workdir, "late.txt")), false, "the command died with the server");
  });

  test("started again, the server finishes the turn without re-running the command and the Inbox lists it", async () => {
    await fake.push({ type: "text", content: AFTER_RESTART });
    server = await chat.restartServer();
    await page.goto(`${server.url}#chat/web`);
    await page.locator(".bubble-assistant:not(.is-streaming)", { hasText: AFTER_RESTART }).waitFor();

    await page.locator('nav a[href="#inbox"]').click();
    await interrupted().waitFor();
    const rows = interrupted().getByRole("listitem");
    assert.equal(await rows.count(), 1);
    const row = rows.first();
    assert.match(await row.innerText(), /execute_cmd echo started > started\.txt/);
    assert.match(await row.getByRole("link").getAttribute("href"), /^#session\/\d+$/);
    assert.deepEqual(await seriousViolations(page), [], "no serious or critical axe finding");
    await shoot("60-inbox-interrupted-call");

    await row.getByRole("button", { name: "It did not run" }).click();
    await page.getByText("Nothing is waiting for you").waitFor();
    const [flag] = await server.call("interrupted_calls", {
      session_id: (await server.call("active_session", { source: "web" })).session_id,
    });
    assert.equal(flag.choice, "did_not_run");
    assert.equal(existsSync(join(workdir, "late.txt")), false, "nothing ran it again");
    // The first server's request, the restarted server's one.
    const requests = await fake.requests();
    assert.equal(requests.length, 2, JSON.stringify(requests.map((r) => r.status)));
    for (const r of requests) {
      assert.equal(r.unscripted, false, `request ${r.seq} was scripted`);
      assert.equal(r.validation_error ?? null, null, `request ${r.seq} was valid`);
    }
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
