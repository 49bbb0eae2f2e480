// Seeds rows into a running server's database through Python's sqlite3: TIC sessions (no engine API
// creates them) and long conversations (thousands of rows in a second, for the windowed views).
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "seed_tic.py");

export function seedTicSessions(dbPath, count) {
  const out = execFileSync("python3", [SCRIPT, dbPath, String(count)], { encoding: "utf8" });
  return out.trim().split("\n").map(Number);
}

const LONG = join(dirname(fileURLToPath(import.meta.url)), "seed_long.py");

/** Appends `turns` turns of `rounds` tool rounds to a session; resolves to its user message ids. */
export function seedLongSession(dbPath, sessionId, turns, rounds) {
  const out = execFileSync("python3", [LONG, dbPath, String(sessionId), String(turns), String(rounds)], {
    encoding: "utf8",
  });
  return out.trim().split("\n").map(Number);
}

const STATUSES = join(dirname(fileURLToPath(import.meta.url)), "seed_statuses.py");

/** Adds a session with a synthetic and a failed message and a call in each end status; its id. */
export function seedStatusSession(dbPath) {
  return Number(execFileSync("python3", [STATUSES, dbPath], { encoding: "utf8" }).trim());
}
