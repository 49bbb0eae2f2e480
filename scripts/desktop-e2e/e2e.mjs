// Desktop e2e: drives the real Skald app (tauri-driver + WebKitWebDriver) through a chat with a
// pending write, a native notification, an approval in the inbox and deep links, then kills the
// app mid-turn and starts it again (the turn ends by itself), then a sub-agent's lane, a
// background task whose end notifies, a turn run by `skald chat` in another process that the
// open window shows live, and a scheduled job whose run fails: a native notification, a click
// that opens the run's session, and the run's notice in the home chat; last, briefings turned on:
// the reports left reach the home chat as a briefing, notified natively, and its click opens it.
// Usage: node e2e.mjs   (everything comes from the environment; see desktop-e2e.sh)
//   E2E_DRIVER_URL, E2E_DRIVER_PID, E2E_APP, E2E_ARTIFACTS, E2E_WORKDIR, E2E_NOTIFY_LOG,
//   E2E_SKALD, SKALD_DATA_DIR, SKALD_LLM_BASE_URL
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { driver, DriverFailure } from "../desktop-smoke/wd.mjs";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const app = env("E2E_APP");
const artifacts = env("E2E_ARTIFACTS");
const workdir = env("E2E_WORKDIR");
const notifyLog = env("E2E_NOTIFY_LOG");
const dataDir = env("SKALD_DATA_DIR");
const target = join(workdir, "hello.txt");
const d = driver(env("E2E_DRIVER_URL"));

const step = (message) => console.log(`e2e: ${message}`);
const fail = (message) => {
  throw new DriverFailure(message);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** WebKit's rendering of the page and the X display (what a user sees, notifications included). */
async function shot(name) {
  // Let WebKit paint the DOM we just checked (software rendering lags on a busy machine).
  await d
    .runAsync(
      `const done = arguments[arguments.length - 1];
       requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 400)));`,
    )
    .catch(() => sleep(800));
  writeFileSync(join(artifacts, `${name}.png`), await d.screenshot());
  execFileSync("import", ["-window", "root", join(artifacts, `${name}-screen.png`)]);
  step(`screenshot ${name}.png`);
}

const hash = () => d.run("return window.location.hash;");
async function go(route) {
  await d.run("window.location.hash = arguments[0];", [route]);
  await d.waitFor(`route ${route}`, async () => (await hash()) === route);
}
const bodyText = () => d.run("return document.body.innerText;");
/** The first enabled button whose text starts with `name`. */
const button = (name, within = "body") =>
  d.waitFor(`a "${name}" button`, () =>
    d.run(
      `const root = document.querySelector(arguments[1]);
       return root && [...root.querySelectorAll('button')].find((b) => !b.disabled && b.textContent.trim().startsWith(arguments[0])) || null;`,
      [name, within],
    ),
  );
const clickButton = async (name, within) => d.click(Object.values(await button(name, within))[0]);

/** Notify calls on the session bus so far (dbus-monitor prints one method call block each). */
function notifications() {
  const log = existsSync(notifyLog) ? readFileSync(notifyLog, "utf8") : "";
  return log.split("\nmethod call").slice(1).filter((block) => block.includes("member=Notify"));
}

function sql(query) {
  const script = "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(sys.argv[2]).fetchone()[0])";
  return execFileSync("python3", ["-c", script, join(dataDir, "skald.db"), query]).toString().trim();
}

/** Launches the app a second time with `args`; single-instance hands them to the running one. */
function secondLaunch(command, args) {
  const result = spawnSync(command, args, { timeout: 20_000, encoding: "utf8" });
  if (result.error) fail(`${command} ${args.join(" ")}: ${result.error.message}`);
  if (result.status !== 0) fail(`${command} ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
}

async function chatAndApprove() {
  await d.waitFor("the app frame", async () => (await d.find('[data-testid="app-frame"]')).length > 0);
  await go("#chat/web");
  const [composer] = await d.waitFor("the composer", async () => {
    const found = await d.find("form textarea");
    return found.length ? found : null;
  });
  await shot("01-chat");

  await d.type(composer, "Say hello");
  await clickButton("Send", "form");
  await d.waitFor("the streamed answer", async () => (await bodyText()).includes("Hello from the fake model"));
  step("the answer streamed into the chat");
  await shot("02-answer");

  // Notifications are for approvals that arrive while the user looks elsewhere: take the
  // keyboard focus away from the window the way a click on another app would.
  execFileSync("xdotool", ["mousemove", "0", "0"]);
  await sleep(300);
  const before = notifications().length;
  await d.type(composer, "Please write the file");
  await clickButton("Send", "form");
  await d.waitFor("the pending write in the chat", async () => (await bodyText()).includes("hello.txt"));
  if (existsSync(target)) fail("the file was written before anyone approved it");
  // The notifier batches for ~1 s; wait past it so a second (wrong) notification would show.
  await d.waitFor("a notification on the session bus", async () => notifications().length > before, 10_000);
  await sleep(2500);
  const shown = notifications().slice(before);
  if (shown.length !== 1) fail(`expected exactly one notification, saw ${shown.length}:\n${shown.join("\n---\n")}`);
  const [note] = shown;
  if (!note.includes('string "Approval waiting in Skald"')) fail(`unexpected notification title:\n${note}`);
  if (!note.includes("write_file") || !note.includes("hello.txt")) fail(`notification lacks the tool and path:\n${note}`);
  if (note.includes("written by skald")) fail(`notification leaks the file contents:\n${note}`);
  step("exactly one notification: tool and path, no contents");
  await shot("03-pending-write-notified");

  // A click on the notification (dunst's default action) opens the app on that item.
  const callId = sql("SELECT max(tool_call_id) FROM approval_requests");
  await go("#settings");
  execFileSync("dunstctl", ["action", "0"]);
  await d.waitFor("the notification click to open the item", async () => (await hash()) === `#inbox?item=${callId}`, 10_000);
  step(`clicking the notification opened #inbox?item=${callId}`);

  await go("#inbox");
  await button("Approve", "main");
  await shot("04-inbox");
  await clickButton("Approve", "main");
  await d.waitFor("the file to be written", async () => existsSync(target), 15_000);
  const written = readFileSync(target, "utf8");
  if (written !== "written by skald\n") fail(`hello.txt holds ${JSON.stringify(written)}`);
  const decidedBy = sql("SELECT decided_by FROM approval_decisions ORDER BY id DESC LIMIT 1");
  if (decidedBy !== "app") fail(`the decision was recorded as made by ${decidedBy}, not the app`);
  step("approved in the inbox; the file was written");
  await d.waitFor("the inbox to empty", async () => (await bodyText()).includes("Nothing is waiting for you"), 10_000);
  await shot("05-inbox-empty");
  await go("#chat/web");
  await d.waitFor("the final answer", async () => (await bodyText()).includes("I wrote hello.txt"), 15_000);
  // The done write shows what it changed, as a diff under its card.
  const applied = await d.waitFor("the applied write's diff in the chat", () =>
    d.run(`const f = document.querySelector('article[data-status="done"] figure.diff'); return f && f.innerText;`),
  );
  if (!applied.includes("hello.txt") || !applied.includes("written by skald")) {
    fail(`the done write's diff does not show the new file:\n${applied}`);
  }
  step("the chat shows the applied write as a diff");
  await shot("06-final-answer");
}

async function deepLinks() {
  const sessionId = sql("SELECT active_session_id FROM sources WHERE id = 'web'");
  await go("#sessions");
  secondLaunch(app, [`skald://session/${sessionId}`]);
  await d.waitFor(`#session/${sessionId} after a second launch`, async () => (await hash()) === `#session/${sessionId}`);
  await d.waitFor("the session view", async () => (await bodyText()).includes(`#${sessionId}`));
  step(`a second launch with skald://session/${sessionId} opened the session in the running app`);
  await shot("07-deep-link-session");

  // The OS handler (written by the app at startup) through both launchers.
  for (const [command, link, route] of [
    ["gio", "skald://inbox", "#inbox"],
    ["xdg-open", "skald://chat/web", "#chat/web"],
  ]) {
    await go("#settings");
    secondLaunch(command, command === "gio" ? ["open", link] : [link]);
    await d.waitFor(`${route} via ${command}`, async () => (await hash()) === route, 20_000);
    step(`${command} ${link} reached the running app`);
  }

  const decisions = sql("SELECT count(*) FROM approval_decisions");
  const waiting = sql("SELECT count(*) FROM approval_requests");
  secondLaunch(app, ["skald://approval/999999"]);
  await d.waitFor("the not-found page for a forged approval", async () =>
    (await hash()) === "#notfound?reason=approval-not-waiting");
  await sleep(1000);
  if (sql("SELECT count(*) FROM approval_decisions") !== decisions) fail("a forged link recorded a decision");
  if (sql("SELECT count(*) FROM approval_requests") !== waiting) fail("a forged link changed the approvals");
  await shot("08-forged-approval");
  step("a forged skald://approval/999999 changed nothing and said so");

  secondLaunch(app, [`skald://chat/${"x".repeat(3000)}`]);
  await d.waitFor("the not-found page for an oversized link", async () =>
    (await hash()) === "#notfound?reason=link-too-long");
  step("an oversized link was refused");
}

/** The app processes the driver started (its descendants running `app`), by pid. */
function appPids() {
  const parent = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name may hold spaces and parentheses: the fields after the last ")" are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  const root = Number(env("E2E_DRIVER_PID"));
  const under = (pid) => {
    for (let p = parent.get(pid), n = 0; p !== undefined && p > 1 && n < 64; p = parent.get(p), n += 1) if (p === root) return true;
    return false;
  };
  return [...parent.keys()].filter((pid) => {
    try {
      return under(pid) && readlinkSync(`/proc/${pid}/exe`) === app;
    } catch {
      return false;
    }
  });
}

const fakeRoot = () => env("SKALD_LLM_BASE_URL").replace(/\/v1\/?$/, "");

/** What the fake provider saw: every chat request, oldest first. */
async function fakeRequests() {
  return (await fetch(`${fakeRoot()}/__fake/requests`)).json();
}

/** Queues replies on the fake; with `prompt`, for requests whose first message holds it. */
async function fakePush(replies, prompt) {
  const query = prompt ? `?prompt=${encodeURIComponent(prompt)}` : "";
  const res = await fetch(`${fakeRoot()}/__fake/replies${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(replies),
  });
  if (!res.ok) fail(`the fake refused the replies: ${res.status} ${await res.text()}`);
}

/** A turn whose reply hangs mid-stream; the app is killed (SIGKILL) and started again on the same
 * data dir: the engine continues the turn by itself, and the chat shows its final answer. */
async function restartMidTurn() {
  await go("#chat/web");
  const [composer] = await d.waitFor("the composer", async () => {
    const found = await d.find("form textarea");
    return found.length ? found : null;
  });
  const asked = (await fakeRequests()).length;
  await d.type(composer, "Tell me about the tides");
  await clickButton("Send", "form");
  await d.waitFor("the reply to start streaming", async () => (await bodyText()).includes("The tides rise twice"), 15_000);
  await shot("09-mid-turn");
  const pids = appPids();
  if (pids.length !== 1) fail(`expected one app process under the driver, found ${JSON.stringify(pids)}`);
  process.kill(pids[0], "SIGKILL");
  await d.waitFor("the app to be gone", async () => appPids().length === 0, 10_000);
  step(`killed the app (pid ${pids[0]}) mid-turn with SIGKILL`);
  await d.stop();

  const started = Date.now();
  await d.start(app);
  await d.waitFor("the app frame after the restart", async () => (await d.find('[data-testid="app-frame"]')).length > 0);
  await go("#chat/web");
  await d.waitFor("the turn's final answer after the restart", async () => (await bodyText()).includes("Back after the restart"), 30_000);
  step(`the restarted app finished the turn by itself in ${Date.now() - started} ms`);
  await d.waitFor("SEND again (the turn ended)", () =>
    d.run("return [...document.querySelectorAll('form button')].some((b) => b.textContent.trim() === 'Send');"),
  );
  const text = await bodyText();
  if (text.split("Tell me about the tides").length !== 2) fail("the user's message is not shown exactly once after the restart");
  const requests = (await fakeRequests()).slice(asked);
  if (requests.length !== 2) fail(`expected the hung request and one after the restart, saw ${requests.length}`);
  for (const r of requests) {
    if (r.status !== 200 || r.validation_error || r.unscripted) fail(`request ${r.seq} was not accepted: ${JSON.stringify(r)}`);
  }
  const resent = JSON.stringify(requests[1].body.messages);
  if (!resent.includes("Tell me about the tides")) fail("the request after the restart lacks the user's message");
  await shot("10-restart-finished");
}

/** A turn that delegates to the built-in `generalist` sub-agent: its lane under the call. */
async function subAgentLane() {
  const [composer] = await d.find("form textarea");
  await d.type(composer, "Ask a sub-agent about the harbour");
  await clickButton("Send", "form");
  await d.waitFor("the parent's answer after the sub-agent's", async () => (await bodyText()).includes("The sub-agent says the harbour is calm."), 20_000);
  const lane = await d.waitFor("the sub-agent's lane", () =>
    d.run(
      `const head = document.querySelector('[data-testid="lane-head"]');
       const answer = [...document.querySelectorAll('.lane-row .bubble-assistant')].find((b) => b.innerText.includes('Calm water'));
       return head && answer ? { label: head.dataset.laneLabel, status: head.dataset.status } : null;`,
    ),
  );
  if (!/^generalist#[1-9][0-9]*$/.test(lane.label)) fail(`the lane's label is ${lane.label}`);
  if (lane.status !== "done") fail(`the lane ended as ${lane.status}`);
  step(`the chat shows the sub-agent's lane ${lane.label}`);
  await shot("11-sub-agent-lane");
}

/** A background task that ends while the user looks elsewhere: one notification names it and
 * how it ended (not its report), and the idle chat answers the report by itself. */
async function backgroundTaskNotified() {
  const start = { mode: "async", agent_id: "generalist", prompt: "TASK-D: count the boats" };
  await fakePush([{ type: "stall", ms: 1500 }, { type: "text", content: "There are 12 boats." }], "TASK-D");
  await fakePush([
    { type: "tool_calls", calls: [{ name: "execute_task", arguments: JSON.stringify(start) }] },
    { type: "text", content: "Started the count." },
    { type: "text", content: "The generalist counted 12 boats." },
  ]);
  execFileSync("xdotool", ["mousemove", "0", "0"]);
  await sleep(300);
  const before = notifications().length;
  const [composer] = await d.find("form textarea");
  await d.type(composer, "Count the boats in the background");
  await clickButton("Send", "form");
  await d.waitFor("the chat's answer to the task's report", async () => (await bodyText()).includes("The generalist counted 12 boats."), 20_000);
  await d.waitFor("a notification for the task", async () => notifications().length > before, 10_000);
  await sleep(1500);
  const shown = notifications().slice(before);
  if (shown.length !== 1) fail(`expected one notification for the task, saw ${shown.length}:\n${shown.join("\n---\n")}`);
  const [note] = shown;
  if (!/string "Background task generalist#\d+ finished"/.test(note)) fail(`unexpected notification:\n${note}`);
  if (note.includes("12 boats")) fail(`the notification leaks the report:\n${note}`);
  step("a background task that ended unwatched notified once, without its report");
  await shot("12-background-task");
}

/** Events every process sees, in the app: `skald chat` in a terminal runs a turn with a tool call
 * on the chat the window shows (same data dir, same source). The window shows the user message,
 * the tool card and the answer without a reload, each within 1 s of its row's commit. */
async function liveFromTerminal() {
  await go("#chat/web");
  const sessionId = sql("SELECT active_session_id FROM sources WHERE id = 'web'");
  // The session's working directory; without one, tools run in the CLI's own directory.
  const stored = sql(
    `SELECT COALESCE(json_extract(run_context, '$.working_directory'), '') FROM chat_sessions WHERE id = ${Number(sessionId)}`,
  );
  const dir = stored || workdir;
  writeFileSync(join(dir, "tide-table.txt"), "high water 06:12\n");
  const prompt = "From the terminal: when is high water?";
  const answer = "High water is at 06:12, says the tide table.";
  await fakePush([
    { type: "tool_calls", calls: [{ name: "read_file", arguments: JSON.stringify({ path: "tide-table.txt" }) }] },
    { type: "stall", ms: 1200 },
    { type: "text", content: answer },
  ]);
  // In the page: when each part first shows, and a marker a reload would drop.
  await d.run(
    `window.__e2eNoReload = true;
     window.__shownAt = {};
     const items = arguments[0];
     const check = () => {
       for (const [key, selector, text] of items) {
         if (window.__shownAt[key]) continue;
         if ([...document.querySelectorAll(selector)].some((el) => el.textContent.includes(text))) window.__shownAt[key] = Date.now();
       }
     };
     new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
     check();`,
    [[
      ["user", ".bubble-user", prompt],
      ["card", "article[data-status]", "tide-table.txt"],
      ["answer", ".bubble-assistant", answer],
    ]],
  );
  const env = { ...process.env };
  delete env.SKALD_DATA_DIR;
  const output = await new Promise((resolve, reject) => {
    const child = spawn(env.E2E_SKALD, ["--data-dir", dataDir, "chat", "--source", "web", prompt], { cwd: dir, env });
    let text = "";
    child.stdout.on("data", (c) => (text += c));
    child.stderr.on("data", (c) => (text += c));
    child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new DriverFailure(`skald chat exited ${code}: ${text}`))));
  });
  if (!output.includes(answer)) fail(`skald chat did not print the answer:\n${output}`);
  const shown = await d.waitFor("the terminal's turn in the window", async () => {
    const seen = await d.run("return window.__e2eNoReload ? window.__shownAt : null;");
    if (seen === null) fail("the window reloaded");
    return seen.user && seen.card && seen.answer ? seen : null;
  }, 10_000);
  const committed = JSON.parse(
    execFileSync("python3", [
      "-c",
      `import json, sqlite3, sys
from datetime import datetime
db = sqlite3.connect(sys.argv[1])
ms = lambda t: int(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() * 1000)
user_id, user_at = db.execute("SELECT id, created_at FROM chat_history WHERE role = 'user' AND content = ?", (sys.argv[2],)).fetchone()
card_at = db.execute("SELECT t.created_at FROM chat_llm_tools t JOIN chat_history h ON h.id = t.message_id WHERE h.id > ? ORDER BY t.id LIMIT 1", (user_id,)).fetchone()[0]
answer_at = db.execute("SELECT created_at FROM chat_history WHERE role = 'assistant' AND content = ?", (sys.argv[3],)).fetchone()[0]
print(json.dumps({"user": ms(user_at), "card": ms(card_at), "answer": ms(answer_at)}))`,
      join(dataDir, "skald.db"),
      prompt,
      answer,
    ]).toString(),
  );
  const lags = Object.fromEntries(Object.keys(committed).map((k) => [k, shown[k] - committed[k]]));
  step(`the window showed the terminal's turn live: ms after each commit ${JSON.stringify(lags)}`);
  for (const [key, lag] of Object.entries(lags)) {
    if (lag > 1000) fail(`the ${key} showed ${lag} ms after its commit (budget 1000 ms)`);
  }
  if (!(shown.user < shown.answer)) fail("the answer showed before the user message");
  await shot("13-live-from-terminal");
}

/** A scheduled job added from a terminal (the open Jobs page shows it, no reload) whose run the
 * provider refuses, while the user looks elsewhere: exactly one notification names the job, its
 * title escaped and never the provider's error; a click opens the run's session; a run of it that
 * `skald jobs run` ends in another process notifies too; the home chat shows the run's notice
 * with the reason. */
async function failedJobNotified() {
  await go("#jobs");
  await d.waitFor("the Jobs page", async () => (await bodyText()).includes("Add job"));
  const title = "Nightly <b>report</b>";
  const env = { ...process.env };
  delete env.SKALD_DATA_DIR;
  const added = execFileSync(
    env.E2E_SKALD,
    ["--data-dir", dataDir, "--json", "jobs", "add", "--title", title, "--cron", "0 0 3 * * * *", "--tz", "UTC",
      "--agent", "generalist", "--prompt", "JOB-FAIL: write the nightly report", "--workdir", workdir],
    { env },
  ).toString();
  const job = JSON.parse(added);
  await d.waitFor("the job added in a terminal on the open Jobs page", async () => (await bodyText()).includes(title), 10_000);
  step(`the Jobs page showed job ${job.id}, added by skald jobs add, without a reload`);
  const secret = "sk-e2e-not-for-notifications";
  await fakePush(
    [{ type: "status", code: 401, body: JSON.stringify({ error: { message: `invalid api key ${secret}`, type: "auth" } }) }],
    "JOB-FAIL",
  );
  execFileSync("xdotool", ["mousemove", "0", "0"]);
  // Earlier notifications (the background task's) off the screen: the click below is on this
  // run's, not on one still shown from before.
  execFileSync("dunstctl", ["close-all"]);
  await sleep(300);
  const before = notifications().length;
  await clickButton("Run now", `tr[data-job-id="${job.id}"]`);
  await d.waitFor("a notification for the failed run", async () => notifications().length > before, 15_000);
  await sleep(2500);
  const shown = notifications().slice(before);
  if (shown.length !== 1) fail(`expected one notification for the failed run, saw ${shown.length}:\n${shown.join("\n---\n")}`);
  const [note] = shown;
  if (!note.includes("Nightly ‹b›report‹/b›") || !note.includes("failed")) fail(`the notification does not name the failed job:\n${note}`);
  if (note.includes("<b>")) fail(`the notification passes the title's markup on:\n${note}`);
  if (note.includes(secret)) fail(`the notification leaks the provider's error:\n${note}`);
  step("a failed job run notified once, naming the job (escaped), not the error");
  await shot("14-failed-job-notified");

  const sessionId = sql(`SELECT session_id FROM job_runs WHERE job_id = ${Number(job.id)} ORDER BY id DESC LIMIT 1`);
  const state = sql(`SELECT state FROM job_runs WHERE job_id = ${Number(job.id)} ORDER BY id DESC LIMIT 1`);
  if (state !== "failed") fail(`the run is ${state}, not failed`);
  await go("#settings");
  execFileSync("dunstctl", ["action", "0"]);
  await d.waitFor("the notification click to open the run's session", async () => (await hash()) === `#session/${sessionId}`, 10_000);
  step(`clicking the notification opened #session/${sessionId}`);

  // Run by `skald jobs run` in a terminal (its own process, its own engine): the app hears of the
  // failure through the events every process sees and tells it too.
  await fakePush(
    [{ type: "status", code: 401, body: JSON.stringify({ error: { message: `invalid api key ${secret}`, type: "auth" } }) }],
    "JOB-FAIL",
  );
  // The click gave the window the keyboard focus (no window manager takes it back when the
  // pointer leaves): hand it to the root window, as turning to another app would.
  const root = execFileSync("xwininfo", ["-root"]).toString().match(/Window id: (0x[0-9a-f]+)/)?.[1];
  if (!root) fail("xwininfo did not name the root window");
  execFileSync("xdotool", ["windowfocus", root]);
  await sleep(300);
  const beforeTerminal = notifications().length;
  const ran = spawnSync(env.E2E_SKALD, ["--data-dir", dataDir, "jobs", "run", String(job.id)], { env, encoding: "utf8", timeout: 30_000 });
  if (ran.status !== 1 || !/failed/.test(ran.stdout)) fail(`skald jobs run: exit ${ran.status}\n${ran.stdout}\n${ran.stderr}`);
  await d.waitFor("a notification for the run a terminal ran", async () => notifications().length > beforeTerminal, 15_000);
  await sleep(2500);
  const fromTerminal = notifications().slice(beforeTerminal);
  if (fromTerminal.length !== 1) fail(`expected one notification for the terminal's run, saw ${fromTerminal.length}:\n${fromTerminal.join("\n---\n")}`);
  if (!fromTerminal[0].includes("Nightly ‹b›report‹/b›")) fail(`unexpected notification:\n${fromTerminal[0]}`);
  step("a job run that failed in another process notified once in the app");

  await go("#chat/web");
  const notice = await d.waitFor("the run's notice in the home chat", () =>
    d.run(`const n = document.querySelector('.home-notice[data-state="failed"]'); return n && n.innerText;`),
  10_000);
  if (!notice.includes(`Job: ${title}`) || !notice.includes("401")) fail(`the home chat's notice is not the run's:\n${notice}`);
  step("the home chat shows the failed run's notice with the reason and its session");
  await shot("15-failed-job-notice");
}

/** A job's run that `skald jobs run` runs in a terminal (it waits there for the decision) parks
 * on a command that needs approval: the app, which does not run it, notifies once that a job's
 * run waits (naming the job), and a click opens that approval in the Inbox. */
async function waitingJobFromTerminalNotified() {
  const env = { ...process.env };
  delete env.SKALD_DATA_DIR;
  const added = execFileSync(
    env.E2E_SKALD,
    ["--data-dir", dataDir, "--json", "jobs", "add", "--title", "Disk check", "--every", "86400",
      "--agent", "generalist", "--prompt", "JOB-WAIT: check the disk", "--workdir", workdir],
    { env },
  ).toString();
  const job = JSON.parse(added);
  const cmd = JSON.stringify({ command: "df -h ." });
  await fakePush([{ type: "tool_calls", calls: [{ name: "execute_cmd", arguments: cmd }] }], "JOB-WAIT");
  const root = execFileSync("xwininfo", ["-root"]).toString().match(/Window id: (0x[0-9a-f]+)/)?.[1];
  if (!root) fail("xwininfo did not name the root window");
  execFileSync("xdotool", ["windowfocus", root]);
  // Earlier notifications off the screen: the click below is on this one.
  execFileSync("dunstctl", ["close-all"]);
  await sleep(300);
  const before = notifications().length;
  const terminal = spawn(env.E2E_SKALD, ["--data-dir", dataDir, "jobs", "run", String(job.id)], { env, stdio: "ignore" });
  try {
    await d.waitFor("the run waiting in the terminal", async () =>
      sql(`SELECT COUNT(*) FROM job_runs WHERE job_id = ${Number(job.id)} AND state = 'waiting'`) === "1", 15_000);
    await d.waitFor("a notification for the waiting run", async () => notifications().length > before, 15_000);
  } finally {
    // Its decision is not this test's: the terminal stops waiting (the run stays in the Inbox).
    terminal.kill("SIGTERM");
  }
  await sleep(2500);
  const shown = notifications().slice(before);
  if (shown.length !== 1) fail(`expected one notification for the waiting run, saw ${shown.length}:\n${shown.join("\n---\n")}`);
  const [note] = shown;
  if (!note.includes('string "Approval waiting in Skald"') || !note.includes("Job: Disk check")) {
    fail(`the notification does not say a job's run waits:\n${note}`);
  }
  step("a job's run waiting in another process notified once in the app, naming the job");
  const callId = sql("SELECT max(tool_call_id) FROM approval_requests");
  await go("#settings");
  execFileSync("dunstctl", ["action", "0"]);
  await d.waitFor("the notification click to open the approval", async () => (await hash()) === `#inbox?item=${callId}`, 10_000);
  step(`clicking it opened #inbox?item=${callId}`);
  await shot("16-waiting-job-notified");
}

/** Briefings turned on while the app runs (config.yml is re-read): the reports the earlier
 * steps left undelivered reach the home chat as a briefing its agent writes; with the window
 * unfocused a native notification says how many reports (never what they say), and its click
 * opens the home chat, which shows the briefing. Last, so the steps above count their own
 * notifications only. */
async function briefingNotified() {
  const waiting = Number(sql("SELECT COUNT(*) FROM notifications WHERE delivered_at IS NULL"));
  if (waiting < 1) fail("the earlier steps left no report to brief about");
  const briefing = "Your briefing: the nightly report failed twice; a disk check waits for you.";
  // A second batch (a report still held by its run) gets a briefing of its own.
  await fakePush([{ type: "text", content: briefing }, { type: "text", content: briefing }]);
  const root = execFileSync("xwininfo", ["-root"]).toString().match(/Window id: (0x[0-9a-f]+)/)?.[1];
  if (!root) fail("xwininfo did not name the root window");
  execFileSync("xdotool", ["windowfocus", root]);
  execFileSync("dunstctl", ["close-all"]);
  await sleep(300);
  const briefings = () => notifications().filter((n) => n.includes('string "A briefing is ready in Skald"'));
  const before = briefings().length;
  writeFileSync(join(dataDir, "config.yml"), "notifications:\n  briefings: true\n");
  await d.waitFor("a notification for the briefing", async () => briefings().length > before, 30_000);
  await sleep(2500);
  const shown = briefings().slice(before);
  let reports = 0;
  for (const note of shown) {
    const count = note.match(/string "(\d+) reports? from background work, summarised in your home chat\."/);
    if (!count) fail(`the briefing notification does not say how many reports:\n${note}`);
    reports += Number(count[1]);
    if (note.includes("Nightly") || note.includes("Disk check")) fail(`the notification leaks the reports:\n${note}`);
  }
  const delivered = Number(sql("SELECT COUNT(*) FROM notifications WHERE delivered_at IS NOT NULL"));
  if (reports !== delivered) fail(`the notifications counted ${reports} reports, ${delivered} were delivered`);
  step(`the briefing notified on the session bus: ${shown.length} notification(s), ${reports} reports`);
  await shot("17-briefing-notified");
  await go("#settings");
  execFileSync("dunstctl", ["action", "0"]);
  await d.waitFor("the notification click to open the home chat", async () => (await hash()) === "#chat/web", 10_000);
  await d.waitFor("the briefing in the home chat", async () => (await bodyText()).includes(briefing), 30_000);
  step("clicking it opened the home chat (#chat/web), which shows the briefing");
  await shot("18-briefing-in-home-chat");
}

try {
  await d.start(app);
  await chatAndApprove();
  await deepLinks();
  await restartMidTurn();
  await subAgentLane();
  await backgroundTaskNotified();
  await liveFromTerminal();
  await failedJobNotified();
  await waitingJobFromTerminalNotified();
  await briefingNotified();
  step("PASS");
} catch (error) {
  console.error(`e2e: FAIL: ${error instanceof DriverFailure ? error.message : error.stack}`);
  await shot("failure").catch(() => {});
  process.exitCode = 1;
} finally {
  await d.stop();
}
