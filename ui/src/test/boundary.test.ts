// Guards the layering rule (only src/backend/ may reach the engine: Tauri IPC, fetch, WebSocket),
// and that tests drive pages only with events the engine emits.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { EVENT_KINDS } from "../backend/api";

const SRC = resolve(import.meta.dirname, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|js|jsx|mts|cts)$/.test(name) ? [path] : [];
  });
}

// Built from pieces so this file's own text does not match its patterns.
const TAURI = "@tauri-apps" + "/";
const FORBIDDEN: Array<[string, RegExp]> = [
  ["imports " + TAURI, new RegExp(`(from|import|require)\\s*\\(?\\s*["'\`]${TAURI.replace("/", "\\/")}`)],
  ["calls fetch", new RegExp("\\bfetch" + "\\s*\\(")],
  ["opens a web socket", new RegExp("\\bWebSocket" + "\\s*\\(")],
  ["uses XHR", new RegExp("\\bXMLHttp" + "Request\\b")],
  ["uses server-sent events", new RegExp("\\bEvent" + "Source\\s*\\(")],
];

function violations(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const [what, re] of FORBIDDEN) {
      if (re.test(text)) found.push(`${relative(SRC, file)} ${what}`);
    }
  }
  return found;
}

describe("backend boundary", () => {
  const all = sourceFiles(SRC);
  const backendDir = join(SRC, "backend") + sep;
  const outside = all.filter((f) => !f.startsWith(backendDir));
  const inside = all.filter((f) => f.startsWith(backendDir));

  it("no file outside src/backend/ imports Tauri or talks HTTP/WebSocket", () => {
    expect(outside.length).toBeGreaterThan(10);
    expect(violations(outside)).toEqual([]);
  });

  it("the patterns do catch the backend's own transport code", () => {
    // If this fails, the patterns went blind and the test above proves nothing.
    const hits = violations(inside);
    expect(hits.some((h) => h.includes("tauri.ts") && h.includes(TAURI))).toBe(true);
    expect(hits.some((h) => h.includes("web.ts") && h.includes("calls fetch"))).toBe(true);
    expect(hits.some((h) => h.includes("web.ts") && h.includes("opens a web socket"))).toBe(true);
  });
});

describe("events in tests", () => {
  // Tests drive pages with events; one the engine never emits tests a path no user can reach.
  const EVENT_TYPE = /(?:emit\(\s*\w+\s*,\s*|event:\s*)\{\s*type:\s*"([a-z_]+)"/g;

  it("use only event kinds the engine emits", () => {
    const tests = sourceFiles(SRC).filter((f) => /\.test\.tsx?$/.test(f));
    const used = new Set<string>();
    for (const file of tests) {
      for (const match of readFileSync(file, "utf8").matchAll(EVENT_TYPE)) used.add(match[1]!);
    }
    expect(used.size).toBeGreaterThan(10);
    const known = new Set<string>(EVENT_KINDS);
    expect([...used].filter((t) => !known.has(t))).toEqual([]);
  });
});
