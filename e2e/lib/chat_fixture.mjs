// The setup most browser tests share: a temp working directory, the strict fake provider, `skald
// serve` talking to it, a Chromium page open on the chat; and the teardown that stops them all.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser, newPage, screenshot, waitForHash } from "./browser.mjs";
import { startFakeLlm } from "./fake_llm.mjs";
import { startServer } from "./server.mjs";
import { stopAll } from "./teardown.mjs";

/**
 * A fixture made at `describe` level; `start()` (in `before`) brings everything up and resolves to
 * the fixture with `fake`, `server`, `browser`, `page` and `workdir` set; `stop()` (in `after`)
 * takes it down. The page helpers can be taken apart before the start: they find the page when
 * they are called.
 *
 * - `workdir`: the middle of the temp directory's name (`skald-e2e-<workdir>-…`), the server's
 *   tool working directory; null for none. `files`: name → text written into it first.
 * - `chunkDelayMs`, `script`: the fake provider's pause between streamed chunks and its queue.
 * - `byPrompt`: prompt → reply (or replies), queued before the server starts for the requests
 *   whose first message holds the prompt (a task's, a job run's, a tick's).
 * - `config`: config.yml text; `env`: variables added to the server's.
 * - `browser`: false for no browser; `pageOptions`: `newPage`'s options (`permissions` are
 *   granted to the server's origin).
 * - `hash`: where the page opens, `#chat/web` unless given; null leaves it blank (see `open`).
 */
export function chatFixture({
  workdir: name = "work",
  files = {},
  chunkDelayMs = 30,
  script = [],
  byPrompt = {},
  config,
  env = {},
  browser: wantBrowser = true,
  pageOptions = {},
  hash = "#chat/web",
} = {}) {
  const pageErrors = [];
  const fixture = {
    pageErrors,
    fake: undefined,
    server: undefined,
    browser: undefined,
    page: undefined,
    workdir: undefined,
    /** What the server and a `skald chat` need to talk to the fake provider. */
    llmEnv: () => ({ SKALD_LLM_BASE_URL: fixture.fake.baseUrl, SKALD_LLM_MODEL: "fake-model" }),

    async start() {
      if (name !== null) {
        fixture.workdir = mkdtempSync(join(tmpdir(), `skald-e2e-${name}-`));
        for (const [file, text] of Object.entries(files)) writeFileSync(join(fixture.workdir, file), text);
      }
      fixture.fake = await startFakeLlm({ chunkDelayMs, script });
      for (const [prompt, reply] of Object.entries(byPrompt)) await fixture.fake.push(reply, { prompt });
      fixture.server = await startServer({ cwd: fixture.workdir, config, env: { ...fixture.llmEnv(), ...env } });
      if (wantBrowser) {
        fixture.browser = await launchBrowser();
        fixture.page = await newPage(fixture.browser, { origin: fixture.server.base, ...pageOptions, errors: pageErrors });
        if (hash !== null) await fixture.open(hash);
      }
      return fixture;
    },

    /** A server again on the data dir of the one that was killed (`server.kill()`), as after a crash. */
    async restartServer() {
      const { dataDir } = fixture.server;
      fixture.server = await startServer({ cwd: fixture.workdir, env: { ...fixture.llmEnv(), ...env }, dataDir });
      return fixture.server;
    },

    /** Opens `hash` with the server's token; a chat is waited for until its composer shows. */
    async open(to = "#chat/web") {
      await fixture.page.goto(`${fixture.server.url}${to}`);
      if (to.startsWith("#chat/")) await composer().waitFor();
    },

    stop: () => stopAll(fixture),

    shoot: (shotName, options) => screenshot(fixture.page, shotName, options),
    waitForHash: (want) => waitForHash(fixture.page, want),
    composer,
    sendButton: () => fixture.page.getByRole("button", { name: "Send", exact: true }),
    stopButton: () => fixture.page.getByRole("button", { name: "Stop", exact: true }),
    /** Types `text` into the composer and clicks Send. */
    async send(text) {
      await composer().fill(text);
      await fixture.sendButton().click();
    },
  };
  function composer() {
    return fixture.page.getByRole("combobox", { name: "Message" });
  }
  return fixture;
}
