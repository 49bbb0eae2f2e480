// Events every process sees, in the browser: the page of a real `skald serve` is open on a chat
// while `skald chat` runs turns on the same data dir and source from another process (a terminal).
// The page shows the terminal's user message, its tool card and the final answer without a
// reload, each within 1 s of the row's commit (read from the database). Then the page's WebSocket
// is cut for 30 s while the terminal runs another turn; on reconnect the page asks for the events
// after the last sequence it saw and shows the missed turn from them: no resync, no reload, no
// re-read of the conversation.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call } from "../lib/fake_llm.mjs";
import { allowCommands, skaldBinary } from "../lib/server.mjs";

const SOURCE = "term";
/** How long the page stays disconnected (the 30 s; E2E_DISCONNECT_MS shortens it locally). */
const DISCONNECT_MS = Number(process.env.E2E_DISCONNECT_MS ?? 30_000);
/** The longest a row may take from its commit to the page. */
const LIVE_BUDGET_MS = 1_000;

const command = (cmd) => call("execute_cmd", { command: cmd });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Commit times (ms since the epoch) of a turn's rows, from the database itself. */
function commitTimes(dbPath, prompt, answer) {
  const script = `
import json, sqlite3, sys
from datetime import datetime
db = sqlite3.connect(sys.argv[1])
ms = lambda t: int(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() * 1000)
user_id, user_at = db.execute("SELECT id, created_at FROM chat_history WHERE role = 'user' AND content = ?", (sys.argv[2],)).fetchone()
call_at, done_at = db.execute("SELECT t.created_at, t.updated_at FROM chat_llm_tools t JOIN chat_history h ON h.id = t.message_id WHERE h.id > ? ORDER BY t.id LIMIT 1", (user_id,)).fetchone()
answer_at = db.execute("SELECT created_at FROM chat_history WHERE role = 'assistant' AND content = ?", (sys.argv[3],)).fetchone()[0]
print(json.dumps({"user": ms(user_at), "card": ms(call_at), "cardDone": ms(done_at), "answer": ms(answer_at)}))
`;
  return JSON.parse(execFileSync("python3", ["-c", script, dbPath, prompt, answer], { encoding: "utf8" }));
}

describe("a turn run by skald chat in a terminal shows live on the serve page", () => {
  const chat = chatFixture({ workdir: "live", chunkDelayMs: 5, hash: null });
  const { pageErrors, shoot, sendButton } = chat;
  let fake, server, page, workdir;
  /** While true, the page's WebSocket cannot reconnect (each attempt is closed at once). */
  let offline = false;
  let socket = null;
  /** Every socket URL the page opened, and every frame the server sent it (with its socket's index). */
  const socketUrls = [];
  const frames = [];
  /** Requests for the conversation's rows (a resync re-reads them). */
  const windowReads = [];

  /** `skald chat --source term MESSAGE` in its own process, as from a terminal; resolves on exit 0. */
  function terminalChat(message) {
    const env = { ...process.env, ...chat.llmEnv() };
    delete env.SKALD_DATA_DIR;
    delete env.SKALD_LLM_API_KEY;
    const child = spawn(skaldBinary(), ["--data-dir", server.dataDir, "chat", "--source", SOURCE, message], {
      cwd: workdir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c) => (output += c));
    child.stderr.on("data", (c) => (output += c));
    return new Promise((resolve, reject) => {
      child.on("exit", (code) => (code === 0 ? resolve(output) : reject(new Error(`skald chat exited ${code}: ${output}`))));
    });
  }

  /** Starts recording, in the page, when each of `watch` ([key, selector, text]) first shows. */
  async function watchFor(watch) {
    await page.evaluate((items) => {
      window.__shownAt = {};
      const check = () => {
        for (const [key, selector, text] of items) {
          if (window.__shownAt[key]) continue;
          for (const el of document.querySelectorAll(selector)) {
            if (el.textContent.includes(text)) {
              window.__shownAt[key] = Date.now();
              break;
            }
          }
        }
      };
      window.__observer?.disconnect();
      window.__observer = new MutationObserver(check);
      window.__observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      check();
    }, watch);
  }

  const shownAt = () => page.evaluate(() => window.__shownAt);

  function turnWatch(prompt, cmd, answer) {
    return [
      ["user", ".bubble-user", prompt],
      ["card", "article[data-status]", cmd],
      ["cardDone", 'article[data-status="done"]', cmd],
      ["answer", ".bubble-assistant", answer],
    ];
  }

  async function waitShown(keys, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const seen = await shownAt();
      if (keys.every((k) => seen[k])) return seen;
      assert.ok(Date.now() < deadline, `not shown in time: ${keys.filter((k) => !seen[k]).join(", ")}`);
      await sleep(50);
    }
  }

  before(async () => {
    ({ fake, server, page, workdir } = await chat.start());
    // The terminal's commands run without asking, so its turns never park.
    await allowCommands(server);
    page.on("request", (req) => {
      if (req.url().includes("/api/session_window")) windowReads.push(Date.now());
    });
    await page.routeWebSocket(/\/api\/ws/, (ws) => {
      const index = socketUrls.push(ws.url()) - 1;
      if (offline) {
        ws.close();
        return;
      }
      const toServer = ws.connectToServer();
      toServer.onMessage((message) => {
        frames.push({ socket: index, data: JSON.parse(message) });
        ws.send(message);
      });
      socket = ws;
    });
    await chat.open(`#chat/${SOURCE}`);
    await page.evaluate(() => {
      window.__sameDocument = true;
    });
  });

  after(() => chat.stop());

  test("the terminal's user message, tool card and answer each show within 1 s of their commit", async () => {
    const prompt = "From the terminal: check the disk";
    const cmd = "sleep 0.5 && echo disk ok";
    const answer = "The disk is fine (checked from the terminal).";
    await fake.push([command(cmd), { type: "text", content: answer }]);
    await watchFor(turnWatch(prompt, cmd, answer));

    const output = await terminalChat(prompt);
    assert.match(output, /The disk is fine/);
    const seen = await waitShown(["user", "card", "cardDone", "answer"], 10_000);
    const committed = commitTimes(server.dbPath, prompt, answer);
    const lag = Object.fromEntries(Object.keys(committed).map((k) => [k, seen[k] - committed[k]]));
    console.log(`commit → page (ms): ${JSON.stringify(lag)}`);
    for (const [key, ms] of Object.entries(lag)) {
      assert.ok(ms <= LIVE_BUDGET_MS, `${key} showed ${ms} ms after its commit: ${JSON.stringify(lag)}`);
    }
    assert.equal(await page.locator(".bubble-assistant", { hasText: answer }).count(), 1, "the answer shows once");
    assert.equal(await page.locator(".bubble-user", { hasText: prompt }).count(), 1, "the message shows once");
    // The page follows the terminal's turn to its end: no STOP left on.
    await sendButton().waitFor();
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was not reloaded");
    await shoot("60-live-terminal-turn");
  });

  test(`a page cut off for ${DISCONNECT_MS / 1000} s reconnects from its sequence and shows what it missed`, async () => {
    const prompt = "From the terminal, while the page is away: list the logs";
    const cmd = "echo three log files";
    const answer = "There are three log files (listed while you were away).";
    await fake.push([command(cmd), { type: "text", content: answer }]);
    const lastSeq = Math.max(...frames.filter((f) => typeof f.data.seq === "number").map((f) => f.data.seq));
    await watchFor(turnWatch(prompt, cmd, answer));

    offline = true;
    const cutAt = Date.now();
    await socket.close();
    const opened = socketUrls.length;
    await terminalChat(prompt);
    await sleep(1_000);
    assert.deepEqual(await shownAt(), {}, "the disconnected page saw nothing of the turn");
    await shoot("61-live-disconnected");
    await sleep(Math.max(0, DISCONNECT_MS - (Date.now() - cutAt)));
    const readsBefore = windowReads.length;
    offline = false;

    const seen = await waitShown(["user", "card", "cardDone", "answer"], 20_000);
    const resumedUrl = socketUrls.slice(opened).find((u) => u.includes("since="));
    assert.ok(resumedUrl, `the page reconnected with its sequence: ${socketUrls.slice(opened).join(" ")}`);
    assert.equal(new URL(resumedUrl).searchParams.get("since"), String(lastSeq));
    // What it showed came from replayed events: sequences after the one it had, no resync, no
    // re-read of the conversation, same document.
    const replayed = frames.filter((f) => f.socket >= opened);
    assert.equal(replayed[0].data.event.type, "subscribed");
    assert.ok(!replayed.some((f) => f.data.event.type === "resync"), "no resync");
    // Notices about the data dir's files (config_reloaded) carry no sequence; they are not news of the turn.
    const unsequenced = replayed.slice(1).filter((f) => f.data.seq === null).map((f) => f.data.event.type);
    assert.ok(unsequenced.every((t) => t === "config_reloaded" || t === "agents_changed"), JSON.stringify(unsequenced));
    const seqs = replayed.slice(1).map((f) => f.data.seq).filter((s) => s !== null);
    assert.deepEqual(seqs, seqs.map((_, i) => lastSeq + 1 + i), "the missed events, in order, once");
    assert.ok(replayed.some((f) => f.data.event.type === "done" && f.data.event.content === answer));
    assert.equal(windowReads.length, readsBefore, "the conversation was not read again");
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was not reloaded");
    assert.equal(await page.locator(".bubble-assistant", { hasText: answer }).count(), 1, "the answer shows once");
    assert.ok(seen.answer >= cutAt + DISCONNECT_MS, "shown after the reconnect");
    await sendButton().waitFor();
    await shoot("62-live-caught-up");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
