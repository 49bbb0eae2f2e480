// The strict fake provider (`skald-fake-llm`) as a child process, with its control API.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "./server.mjs";

const LISTENING = /^listening on (http:\/\/127\.0\.0\.1:\d+\/v1)$/;

export function fakeLlmBinary() {
  return process.env.SKALD_FAKE_LLM_BIN ?? join(REPO_ROOT, "target", "debug", "skald-fake-llm");
}

/**
 * Starts the fake with `script` (an array of Reply objects) queued and a pause between streamed
 * chunks so streaming is visible in the browser. `baseUrl` ends in /v1 (what SKALD_LLM_BASE_URL
 * wants); `push`/`requests` use the control API at the root.
 */
export async function startFakeLlm({ script = [], chunkDelayMs = 30, timeoutMs = 15_000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "skald-fake-"));
  const scriptPath = join(dir, "script.json");
  writeFileSync(scriptPath, JSON.stringify(script));
  const child = spawn(
    fakeLlmBinary(),
    ["--script", scriptPath, "--chunk-delay-ms", String(chunkDelayMs), "--when-empty", "error"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((res) => child.on("exit", (code, signal) => res({ code, signal })));
  let timer;
  const ready = new Promise((res, rej) => {
    createInterface({ input: child.stdout }).once("line", (line) => {
      const m = LISTENING.exec(line.trim());
      if (m) res(m[1]);
      else rej(new Error(`unexpected first line from skald-fake-llm: ${line}`));
    });
    child.on("error", rej);
    exited.then(({ code }) => rej(new Error(`skald-fake-llm exited early (${code}): ${stderr}`)));
    timer = setTimeout(() => rej(new Error(`skald-fake-llm did not start in ${timeoutMs} ms`)), timeoutMs);
  }).finally(() => clearTimeout(timer));

  let baseUrl;
  try {
    baseUrl = await ready;
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const root = baseUrl.replace(/\/v1$/, "");

  return {
    baseUrl,
    root,
    stderr: () => stderr,
    /** Queues one reply (or an array of them); with `prompt`, for the requests whose first
     *  message contains it (a sub-agent's or a task's, whatever order requests arrive in). */
    async push(reply, { prompt } = {}) {
      const query = prompt ? `?prompt=${encodeURIComponent(prompt)}` : "";
      const res = await fetch(`${root}/__fake/replies${query}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(reply),
      });
      if (!res.ok) throw new Error(`fake push failed: ${res.status} ${await res.text()}`);
      return res.json();
    },
    /** Every chat-completions request so far, oldest first. */
    async requests() {
      const res = await fetch(`${root}/__fake/requests`);
      return res.json();
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      const result = await exited;
      rmSync(dir, { recursive: true, force: true });
      return result;
    },
  };
}

/** A reply of plain text. */
export const textReply = (content) => ({ type: "text", content });
/** A reply that calls one tool `name` with `args` (an object, sent as its JSON text). */
export const call = (name, args) => ({ type: "tool_calls", calls: [{ name, arguments: JSON.stringify(args) }] });
/** The names of the tools a request offered. */
export const offeredTools = (body) => (body.tools ?? []).map((t) => t.function.name);
/** The first conversation message of a request (a task's or a job run's prompt). */
export const firstMessage = (body) => String((body.messages ?? []).find((m) => m.role !== "system")?.content ?? "");
/** The contents of a request's tool results, oldest first. */
export const toolResults = (body) => (body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));
