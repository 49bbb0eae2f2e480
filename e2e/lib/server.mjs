// Starts the real `skald serve --port 0` on a fresh data dir and hands back its URL and token.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const LISTENING = /^listening on (http:\/\/127\.0\.0\.1:(\d+)\/)\?token=([0-9a-f]+)$/;

export function skaldBinary() {
  return process.env.SKALD_BIN ?? join(REPO_ROOT, "target", "debug", "skald");
}

/**
 * Resolves once the server printed its listening line. `stop()` sends SIGTERM and resolves with
 * the exit code; the data dir is removed afterwards.
 *
 * `env` adds variables (e.g. SKALD_LLM_* for the fake provider), `cwd` is the tool working
 * directory, `config` is written to the data dir's config.yml before the start, and `dataDir`
 * starts on an existing data dir instead of a fresh one.
 */
export async function startServer({ timeoutMs = 30_000, env: extraEnv = {}, cwd, config, dataDir: reuse } = {}) {
  // `dataDir`: a restart on the data dir of a server that was killed (`kill()`).
  const dataDir = reuse ?? mkdtempSync(join(tmpdir(), "skald-e2e-"));
  if (config !== undefined) writeFileSync(join(dataDir, "config.yml"), config);
  const env = { ...process.env };
  for (const key of ["SKALD_DATA_DIR", "SKALD_LLM_BASE_URL", "SKALD_LLM_MODEL", "SKALD_LLM_API_KEY"]) {
    delete env[key];
  }
  Object.assign(env, extraEnv);
  const child = spawn(skaldBinary(), ["--data-dir", dataDir, "serve", "--port", "0"], {
    env,
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((res) => child.on("exit", (code, signal) => res({ code, signal })));

  let timer;
  const ready = new Promise((res, rej) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => {
      const m = LISTENING.exec(line.trim());
      if (m) res({ base: m[1], port: Number(m[2]), token: m[3] });
      else rej(new Error(`unexpected first line from skald serve: ${line}`));
    });
    child.on("error", rej);
    exited.then(({ code }) => rej(new Error(`skald serve exited early (${code}): ${stderr}`)));
    timer = setTimeout(() => rej(new Error(`skald serve did not start in ${timeoutMs} ms: ${stderr}`)), timeoutMs);
  }).finally(() => clearTimeout(timer));

  let info;
  try {
    info = await ready;
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }

  return {
    ...info,
    dataDir,
    dbPath: join(dataDir, "skald.db"),
    url: `${info.base}?token=${info.token}`,
    stderr: () => stderr,
    /** One operation of the API, as the web UI sends it: `POST /api/<op>` with `params` as the
     * body; resolves with the result, throws with the status and body otherwise. */
    async call(op, params = {}) {
      const res = await fetch(`${info.base}api/${op}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${info.token}`, "Content-Type": "application/json" },
        body: JSON.stringify(params),
      });
      if (!res.ok) throw new Error(`POST /api/${op}: ${res.status} ${await res.text()}`);
      return res.json();
    },
    /** SIGKILL, as a crash: nothing is shut down and the data dir stays for a restart. */
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const result = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      return result;
    },
  };
}

/** Lets `execute_cmd` run without asking on `server` (a stored allow rule), so a test can act while a
 * command runs, or another process's turn never parks. */
export function allowCommands(server) {
  return server.call("save_approval_rule", {
    id: null,
    input: {
      group_id: null,
      tool_pattern: "execute_cmd",
      path_pattern: null,
      agent_id: null,
      source: null,
      action: "allow",
      priority: 1,
      note: "e2e: commands run unattended",
    },
  });
}

/** Resolves once `server` says the session's turn has ended (asked every `pollMs`); fails after
 * `timeoutMs`. */
export async function turnEnded(server, sessionId, { pollMs = 100, timeoutMs = 30_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { running } = await server.call("turn_running", { session_id: sessionId });
    if (!running) return;
    assert.ok(Date.now() < deadline, `the turn of session ${sessionId} did not end in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
