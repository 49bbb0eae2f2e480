import { describe, expect, it } from "vitest";
import { formatRoute, parseHash } from "./route";

describe("hash routes", () => {
  it("parses every page the sidebar and links produce", () => {
    expect(parseHash("")).toEqual({ name: "chat", source: "web", focus: null });
    expect(parseHash("#chat/telegram")).toEqual({ name: "chat", source: "telegram", focus: null });
    expect(parseHash("#chat/my%20project")).toEqual({ name: "chat", source: "my project", focus: null });
    expect(parseHash("#inbox")).toEqual({ name: "inbox" });
    expect(parseHash("#settings")).toEqual({ name: "settings" });
    expect(parseHash("#session/42")).toEqual({ name: "session", id: 42, focus: null })
    // A search hit or a notification opens a conversation at one row.
    expect(parseHash("#session/42?message=123")).toEqual({ name: "session", id: 42, focus: { type: "message", id: 123 } });
    expect(parseHash("#session/42?call=9")).toEqual({ name: "session", id: 42, focus: { type: "tool", id: 9 } });
    expect(parseHash("#chat/web?message=5")).toEqual({ name: "chat", source: "web", focus: { type: "message", id: 5 } });
    expect(parseHash("#session/42?message=x")).toEqual({ name: "session", id: 42, focus: null });
    expect(parseHash("#tic")).toEqual({ name: "tic", page: 1 });
    expect(parseHash("#tic?page=3")).toEqual({ name: "tic", page: 3 });
    expect(parseHash("#jobs")).toEqual({ name: "jobs", job: null });
    expect(parseHash("#jobs/12")).toEqual({ name: "jobs", job: 12 });
    expect(parseHash("#memory")).toEqual({ name: "memory", file: null });
    expect(parseHash("#memory?file=projects%2Fskald.md")).toEqual({ name: "memory", file: "projects/skald.md" });
    expect(parseHash("#sessions?source=cron&search=disk&page=2")).toEqual({
      name: "sessions",
      params: { source: "cron", search: "disk", page: 2 },
    });
  });

  it("rejects what no page claims", () => {
    for (const hash of ["#session", "#session/0", "#session/-1", "#session/1.5", "#session/1/2", "#inbox/x", "#jobs/0", "#jobs/x", "#jobs/1/2", "#memory/x", "#chat/%E0%A4%A", "#whatever"]) {
      expect(parseHash(hash).name, hash).toBe("not_found");
    }
  });

  it("falls back to page 1 for a bad page number", () => {
    expect(parseHash("#tic?page=abc")).toEqual({ name: "tic", page: 1 });
    expect(parseHash("#tic?page=0")).toEqual({ name: "tic", page: 1 });
  });

  it("formats routes that parse back to themselves", () => {
    const routes = [
      { name: "chat", source: "a b/c", focus: null },
      { name: "chat", source: "web", focus: { type: "message", id: 3 } },
      { name: "tic", page: 4 },
      { name: "jobs", job: null },
      { name: "jobs", job: 5 },
      { name: "memory", file: null },
      { name: "memory", file: "a b/c&d.md" },
      { name: "session", id: 7, focus: null },
      { name: "session", id: 7, focus: { type: "tool", id: 8 } },
      { name: "sessions", params: { source: "tic", search: "x & y", page: 3 } },
      { name: "sessions", params: { source: null, search: null, page: 1 } },
    ] as const;
    for (const r of routes) expect(parseHash(formatRoute(r))).toEqual(r);
    expect(formatRoute({ name: "sessions", params: { source: null, search: null, page: 1 } })).toBe("#sessions");
  });
});
