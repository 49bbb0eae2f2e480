// Seeds rows into a running server's database through Python's sqlite3 (no engine API yet creates
// TIC sessions), returning the new session ids in insertion order.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "seed_tic.py");

export function seedTicSessions(dbPath, count) {
  const out = execFileSync("python3", [SCRIPT, dbPath, String(count)], { encoding: "utf8" });
  return out.trim().split("\n").map(Number);
}
