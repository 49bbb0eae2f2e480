// Drives the real Skald window through tauri-driver (W3C WebDriver) and asserts what a user sees.
// Usage: node webdriver.mjs <driver-url> <app-binary> <ui|startup-error> <webview.png> <screen.png>
// webview.png is WebKit's own rendering; screen.png is the X display (ImageMagick `import`), which
// proves the window was really mapped on screen. Plain Node 20 (global fetch); no npm packages.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";

const [driverUrl, application, scenario, screenshotPath, screenPath] = process.argv.slice(2);
const minColours = Number(process.env.SKALD_SMOKE_MIN_COLOURS ?? 64);
if (!driverUrl || !application || !scenario || !screenshotPath || !screenPath) {
  console.error("usage: webdriver.mjs <driver-url> <app-binary> <ui|startup-error> <webview.png> <screen.png>");
  process.exit(2);
}

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
const SIDEBAR = ["Chat", "Inbox", "Sessions", "TIC", "Settings"];

class SmokeFailure extends Error {}

async function wd(method, path, body) {
  const response = await fetch(`${driverUrl}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = json?.value?.message ?? JSON.stringify(json);
    throw new SmokeFailure(`WebDriver ${method} ${path} failed (${response.status}): ${detail}`);
  }
  return json.value;
}

async function waitFor(what, probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new SmokeFailure(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? `: ${last.message}` : ""}`);
}

const find = async (session, css) =>
  (await wd("POST", `/session/${session}/elements`, { using: "css selector", value: css })).map((e) => e[ELEMENT]);
const text = async (session, element) => wd("GET", `/session/${session}/element/${element}/text`);
const run = async (session, script, args = []) => wd("POST", `/session/${session}/execute/sync`, { script, args });

async function checkUi(session) {
  const [frame] = await waitFor('[data-testid="app-frame"]', async () => {
    const found = await find(session, '[data-testid="app-frame"]');
    return found.length ? found : null;
  });
  console.log("app frame rendered");

  const links = await find(session, "nav a");
  const labels = await Promise.all(links.map((link) => text(session, link)));
  const names = labels.map((label) => label.trim());
  const missing = SIDEBAR.filter((name) => !names.includes(name));
  if (missing.length) throw new SmokeFailure(`sidebar lacks ${missing.join(", ")} (has: ${names.join(", ")})`);
  console.log(`sidebar shows ${SIDEBAR.join(", ")}`);

  // The default page may not list sessions; the Sessions entry always does.
  if ((await find(session, '[data-testid="session-list"]')).length === 0) {
    await wd("POST", `/session/${session}/element/${links[names.indexOf("Sessions")]}/click`, {});
  }
  const [list] = await waitFor('[data-testid="session-list"]', async () => {
    const found = await find(session, '[data-testid="session-list"]');
    return found.length ? found : null;
  });
  // Settled = the list_sessions command answered (no spinner left inside the list).
  const state = await waitFor("the session list to finish loading", async () => {
    const s = await run(
      session,
      `const list = arguments[0];
       if (list.querySelector('.state-loading,[role="status"]')) return null;
       return { error: !!list.querySelector('[role="alert"]'), text: list.innerText };`,
      [{ [ELEMENT]: list }],
    );
    return s;
  });
  if (state.error) throw new SmokeFailure(`the session list shows an error: ${state.text.trim()}`);
  console.log(`session list loaded from the engine: ${JSON.stringify(state.text.trim().slice(0, 120))}`);
  void frame;
}

async function checkStartupError(session) {
  const [page] = await waitFor('[data-testid="startup-error"]', async () => {
    const found = await find(session, '[data-testid="startup-error"]');
    return found.length ? found : null;
  });
  const shown = await text(session, page);
  if (!shown.includes("Skald could not start")) throw new SmokeFailure(`startup error page says: ${shown}`);
  const [message] = await find(session, '[data-testid="startup-error-message"]');
  const reason = message ? (await text(session, message)).trim() : "";
  if (!reason) throw new SmokeFailure("startup error page shows no reason");
  console.log(`startup error page shown: ${JSON.stringify(reason.slice(0, 160))}`);
}

let session;
try {
  await waitFor("tauri-driver to listen", async () => (await wd("GET", "/status"))?.ready !== false, 30_000);
  // One attempt only: every POST /session launches the app.
  const created = await wd("POST", "/session", {
    capabilities: { alwaysMatch: { "tauri:options": { application } } },
  });
  session = created.sessionId;
  const title = await wd("GET", `/session/${session}/title`);
  console.log(`window opened (document title: ${JSON.stringify(title)})`);
  if (scenario === "ui") await checkUi(session);
  else if (scenario === "startup-error") await checkStartupError(session);
  else throw new SmokeFailure(`unknown scenario ${scenario}`);
  // The DOM can be complete before WebKit has painted it (software rendering on a busy CI box),
  // so keep capturing until both images show real content or the paint deadline passes.
  const colours = (file) => Number(execFileSync("identify", ["-format", "%k", file]).toString().trim());
  await waitFor(`the window to paint (>= ${minColours} colours on screen and in the webview)`, async () => {
    const png = await wd("GET", `/session/${session}/screenshot`);
    writeFileSync(screenshotPath, Buffer.from(png, "base64"));
    execFileSync("import", ["-window", "root", screenPath]);
    return colours(screenshotPath) >= minColours && colours(screenPath) >= minColours;
  }, 30_000);
  console.log(`screenshots saved to ${screenshotPath} (webview) and ${screenPath} (display)`);
} catch (error) {
  console.error(`FAIL (${scenario}): ${error instanceof SmokeFailure ? error.message : error.stack}`);
  process.exitCode = 1;
} finally {
  if (session) await wd("DELETE", `/session/${session}`).catch(() => {});
}
