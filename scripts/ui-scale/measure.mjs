// Measures the real Skald app on one data dir (tauri-driver + WebKitWebDriver): for the chat page
// and the session debug tree, the time from opening the page until its newest answer is painted,
// the DOM node count then, and the resident memory of the app and its web process.
// Prints one JSON line. Usage: node measure.mjs <driver-url> <app> <driver-pid> <session-id> <answer-text|->
//   answer-text "-" = an empty session (the baseline): the page is done when its list settled.
import { execFileSync } from "node:child_process";
import { driver, DriverFailure } from "../desktop-smoke/wd.mjs";

const [driverUrl, app, driverPid, sessionId, answer] = process.argv.slice(2);
if (!answer) {
  console.error("usage: measure.mjs <driver-url> <app> <driver-pid> <session-id> <answer-text|->");
  process.exit(2);
}
const d = driver(driverUrl);

/** Kilobytes resident of `pid` and every process under it (the app, WebKit's web process...). */
function treeRss(pid) {
  const table = execFileSync("ps", ["-eo", "pid=,ppid=,rss=,comm="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .map(([p, pp, rss, ...comm]) => ({ pid: Number(p), ppid: Number(pp), rss: Number(rss), comm: comm.join(" ") }));
  const under = new Set([Number(pid)]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of table) if (under.has(row.ppid) && !under.has(row.pid)) (under.add(row.pid), (grew = true));
  }
  const rows = table.filter((r) => under.has(r.pid));
  const pick = (re) => rows.filter((r) => re.test(r.comm)).reduce((sum, r) => sum + r.rss, 0);
  return { app: pick(/^skald-desktop/), web: pick(/^WebKitWebProces/) };
}

/**
 * Opens `hash` and waits inside the page until `text` is in the DOM and two frames have passed
 * (the frame that painted it); returns the milliseconds and the DOM node count then.
 */
const OPEN = `
  const [hash, text, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
  const start = performance.now();
  location.hash = hash;
  const ready = () => {
    if (text !== "-") return document.body.innerText.includes(text);
    // An empty session: the page shows its empty state once loaded.
    return !document.querySelector('.state-loading, [aria-busy="true"]') &&
      !!document.querySelector('.chat-empty, .page-session p.muted, .virtual-scroll');
  };
  const poll = () => {
    if (performance.now() - start > 60000) return done({ error: "timeout" });
    if (!ready()) return requestAnimationFrame(poll);
    requestAnimationFrame(() => requestAnimationFrame(() =>
      done({ ms: performance.now() - start, nodes: document.getElementsByTagName('*').length })));
  };
  poll();`;

async function open(hash) {
  // Start from a page that holds no conversation.
  await d.run("location.hash = '#settings';");
  await d.waitFor("the settings page", () => d.run("return !!document.querySelector('.page h1');"));
  const r = await d.runAsync(OPEN, [hash, answer]);
  if (r.error) throw new DriverFailure(`${hash}: ${r.error}`);
  // Let WebKit settle (layout, decoded images, GC) before reading memory.
  await d.runAsync("const done = arguments[arguments.length - 1]; setTimeout(done, 1000);");
  return { ...r, rss: treeRss(driverPid) };
}

let result;
try {
  await d.start(app);
  await d.waitFor("the app frame", async () => (await d.find('[data-testid="app-frame"]')).length > 0, 60_000);
  const chat = await open("#chat/web");
  const tree = await open(`#session/${sessionId}`);
  result = { chat, tree };
} catch (error) {
  console.error(`ui-scale: ${error instanceof DriverFailure ? error.message : error.stack}`);
  process.exitCode = 1;
} finally {
  await d.stop();
}
if (result) console.log(JSON.stringify(result));
