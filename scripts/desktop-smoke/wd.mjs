// Minimal W3C WebDriver client for tauri-driver (plain Node 20 fetch, no npm packages).
// Shared by the desktop smoke and e2e drivers.
export const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export class DriverFailure extends Error {}

export function driver(driverUrl) {
  async function wd(method, path, body) {
    const response = await fetch(`${driverUrl}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = json?.value?.message ?? JSON.stringify(json);
      throw new DriverFailure(`WebDriver ${method} ${path} failed (${response.status}): ${detail}`);
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
    throw new DriverFailure(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? `: ${last.message}` : ""}`);
  }

  let session;
  const s = () => {
    if (!session) throw new DriverFailure("no WebDriver session");
    return session;
  };
  const api = {
    wd,
    waitFor,
    async start(application) {
      await waitFor("tauri-driver to listen", async () => (await wd("GET", "/status"))?.ready !== false);
      // One attempt only: every POST /session launches the app.
      const created = await wd("POST", "/session", { capabilities: { alwaysMatch: { "tauri:options": { application } } } });
      session = created.sessionId;
      return session;
    },
    async stop() {
      if (session) await wd("DELETE", `/session/${session}`).catch(() => {});
      session = undefined;
    },
    find: async (css) =>
      (await wd("POST", `/session/${s()}/elements`, { using: "css selector", value: css })).map((e) => e[ELEMENT]),
    text: (element) => wd("GET", `/session/${s()}/element/${element}/text`),
    click: (element) => wd("POST", `/session/${s()}/element/${element}/click`, {}),
    type: (element, value) => wd("POST", `/session/${s()}/element/${element}/value`, { text: value }),
    run: (script, args = []) => wd("POST", `/session/${s()}/execute/sync`, { script, args }),
    runAsync: (script, args = []) => wd("POST", `/session/${s()}/execute/async`, { script, args }),
    screenshot: async () => Buffer.from(await wd("GET", `/session/${s()}/screenshot`), "base64"),
    ref: (element) => ({ [ELEMENT]: element }),
  };
  return api;
}
