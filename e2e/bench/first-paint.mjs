// First paint of the chat page in Chromium against `skald serve`: a conversation holding a rich
// model answer (GFM table, lists, code in five languages) is opened in a fresh browser context
// (empty cache) RUNS times. Per run, from navigation start: first contentful paint, the frame
// that shows the answer, and the frame that shows its code coloured (grammars load lazily).
//
// Usage: node bench/first-paint.mjs [RUNS]     (default 10)
//   SKALD_UI_DIR   the built UI to serve (default ui/dist), e.g. an older build to compare
//   SKALD_BIN, SKALD_FAKE_LLM_BIN, CHROMIUM_PATH as for the browser tests
import { RICH_ANSWER } from "../lib/answers.mjs";
import { launchBrowser, newPage } from "../lib/browser.mjs";
import { startFakeLlm } from "../lib/fake_llm.mjs";
import { startServer } from "../lib/server.mjs";

const runs = Number(process.argv[2] ?? 10);

// Runs before the page's own scripts: stamps the first frame painted after each marker appears.
const PROBE = () => {
  const marks = {};
  window.__paint = marks;
  const watch = (name, selector) => {
    const check = () => {
      if (marks[name] === undefined && document.querySelector(selector)) {
        marks[name] = -1;
        requestAnimationFrame(() => setTimeout(() => (marks[name] = performance.now())));
      }
    };
    new MutationObserver(check).observe(document, { childList: true, subtree: true, attributes: true });
  };
  watch("answer", "li.bubble-assistant table");
  // The old renderer's classes count too, so an older build can be measured the same way.
  watch("coloured", "li.bubble-assistant pre .hljs-keyword, li.bubble-assistant pre .tok-keyword");
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const fake = await startFakeLlm({ chunkDelayMs: 0 });
const server = await startServer({
  env: { SKALD_LLM_BASE_URL: fake.baseUrl, SKALD_LLM_MODEL: "fake-model", ...(process.env.SKALD_UI_DIR ? { SKALD_UI_DIR: process.env.SKALD_UI_DIR } : {}) },
});
const browser = await launchBrowser();
try {
  await fake.push({ type: "text", content: RICH_ANSWER });
  const res = await fetch(`${server.base}api/sources/web/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ text: "Show me everything" }),
  });
  if (!res.ok) throw new Error(`sending the message failed: ${res.status} ${await res.text()}`);
  const { session_id: session } = await res.json();
  // Measure a stored conversation, not a streaming one: wait for the turn to end.
  for (let tries = 0; ; tries++) {
    const running = await fetch(`${server.base}api/sessions/${session}/running`, { headers: { Authorization: `Bearer ${server.token}` } });
    if (!(await running.json()).running) break;
    if (tries > 300) throw new Error("the turn did not finish");
    await new Promise((r) => setTimeout(r, 100));
  }
  // The token goes into sessionStorage on the first visit; each run's fresh context needs it again.
  const url = `${server.base}?token=${server.token}#chat/web`;
  const rows = [];
  for (let i = 0; i < runs; i++) {
    const page = await newPage(browser);
    await page.addInitScript(PROBE);
    await page.goto(url);
    await page.waitForFunction(() => window.__paint?.coloured > 0 && window.__paint?.answer > 0, null, { timeout: 30_000 });
    const row = await page.evaluate(() => ({
      fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN,
      answer: window.__paint.answer,
      coloured: window.__paint.coloured,
    }));
    rows.push(row);
    await page.context().close();
  }
  const summary = Object.fromEntries(
    ["fcp", "answer", "coloured"].map((k) => [k, { median: Math.round(median(rows.map((r) => r[k]))), max: Math.round(Math.max(...rows.map((r) => r[k]))) }]),
  );
  console.log(JSON.stringify({ runs, ui: process.env.SKALD_UI_DIR ?? "ui/dist", summary }, null, 2));
} finally {
  await browser.close();
  await server.stop();
  await fake.stop();
}
