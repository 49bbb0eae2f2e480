// Hash routes: parsing and formatting; the address bar is the source of truth for what is shown.
import { useCallback, useSyncExternalStore } from "react";
import type { ItemRef } from "../backend";

export const DEFAULT_CHAT_SOURCE = "web";

export type ListParams = { source: string | null; search: string | null; page: number };

/**
 * A row to open a conversation at (loaded with the rows around it and highlighted):
 * `?message=ID` or `?call=ID` after `#chat/{source}` or `#session/{id}`.
 */
export type Focus = ItemRef | null;

export type Route =
  | { name: "chat"; source: string; focus: Focus }
  | { name: "inbox" }
  | { name: "sessions"; params: ListParams }
  | { name: "session"; id: number; focus: Focus }
  | { name: "tic"; page: number }
  /** `job`: the job whose run history is open (`#jobs/ID`). */
  | { name: "jobs"; job: number | null }
  /** `file`: the memory file open (`#memory?file=notes.md`). */
  | { name: "memory"; file: string | null }
  | { name: "settings" }
  | { name: "not_found"; hash: string };

function positiveInt(value: string | null | undefined): number | null {
  if (value == null || !/^\d+$/.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

function focusOf(query: URLSearchParams): Focus {
  const message = positiveInt(query.get("message"));
  if (message) return { type: "message", id: message };
  const call = positiveInt(query.get("call"));
  return call ? { type: "tool", id: call } : null;
}

function focusQuery(focus: Focus): string {
  if (focus?.type === "message") return `?message=${focus.id}`;
  if (focus?.type === "tool") return `?call=${focus.id}`;
  return "";
}

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

export function parseHash(hash: string): Route {
  const raw = hash.startsWith("#") ? hash.slice(1) : hash;
  const [path = "", queryString = ""] = raw.split("?", 2) as [string, string?];
  const query = new URLSearchParams(queryString);
  const segments = path.split("/");
  const [head = "", ...rest] = segments;
  const notFound: Route = { name: "not_found", hash: `#${raw}` };

  switch (head) {
    case "":
      return rest.length === 0 ? { name: "chat", source: DEFAULT_CHAT_SOURCE, focus: null } : notFound;
    case "chat": {
      if (rest.length === 0) return { name: "chat", source: DEFAULT_CHAT_SOURCE, focus: focusOf(query) };
      const source = rest.length === 1 && rest[0] ? decode(rest[0]) : null;
      return source ? { name: "chat", source, focus: focusOf(query) } : notFound;
    }
    case "inbox":
      return rest.length === 0 ? { name: "inbox" } : notFound;
    case "settings":
      return rest.length === 0 ? { name: "settings" } : notFound;
    case "sessions":
      if (rest.length !== 0) return notFound;
      return {
        name: "sessions",
        params: {
          source: query.get("source") || null,
          search: query.get("search") || null,
          page: positiveInt(query.get("page")) ?? 1,
        },
      };
    case "tic":
      return rest.length === 0 ? { name: "tic", page: positiveInt(query.get("page")) ?? 1 } : notFound;
    case "jobs": {
      if (rest.length === 0) return { name: "jobs", job: null };
      const job = rest.length === 1 ? positiveInt(rest[0]) : null;
      return job ? { name: "jobs", job } : notFound;
    }
    case "memory":
      return rest.length === 0 ? { name: "memory", file: query.get("file") || null } : notFound;
    case "session": {
      const id = rest.length === 1 ? positiveInt(rest[0]) : null;
      return id ? { name: "session", id, focus: focusOf(query) } : notFound;
    }
    default:
      return notFound;
  }
}

export function formatRoute(route: Exclude<Route, { name: "not_found" }>): string {
  switch (route.name) {
    case "chat":
      return `#chat/${encodeURIComponent(route.source)}${focusQuery(route.focus)}`;
    case "inbox":
      return "#inbox";
    case "settings":
      return "#settings";
    case "session":
      return `#session/${route.id}${focusQuery(route.focus)}`;
    case "tic":
      return route.page > 1 ? `#tic?page=${route.page}` : "#tic";
    case "jobs":
      return route.job ? `#jobs/${route.job}` : "#jobs";
    case "memory":
      return route.file ? `#memory?${new URLSearchParams({ file: route.file }).toString()}` : "#memory";
    case "sessions": {
      const q = new URLSearchParams();
      if (route.params.source) q.set("source", route.params.source);
      if (route.params.search) q.set("search", route.params.search);
      if (route.params.page > 1) q.set("page", String(route.params.page));
      const s = q.toString();
      return s ? `#sessions?${s}` : "#sessions";
    }
  }
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener("hashchange", onChange);
  return () => window.removeEventListener("hashchange", onChange);
}

const readHash = () => window.location.hash;

/** The current route, re-rendered on every hash change (links, back/forward, typed URLs). */
export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, readHash, readHash);
  return parseHash(hash);
}

/**
 * Moves to a route. `replace` is for refinements such as typing in a search box, which should
 * not leave one history entry per keystroke.
 */
export function useNavigate(): (hash: string, options?: { replace?: boolean }) => void {
  return useCallback((hash, options) => {
    if (window.location.hash === hash) return;
    if (options?.replace) {
      const url = new URL(window.location.href);
      url.hash = hash;
      window.history.replaceState(window.history.state, "", url.toString());
      // replaceState does not fire hashchange; tell subscribers ourselves.
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } else {
      window.location.hash = hash;
    }
  }, []);
}
