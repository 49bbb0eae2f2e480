// A window of one session's debug tree: the newest rows (or the rows around a jump target), grown
// page by page as the user scrolls, with live rows appended while it reaches the newest.
import { useCallback, useEffect, useRef, useState } from "react";
import { useLatest } from "../lib/useLatest";
import type { ApiError, DebugMessage, EndedTurn, EventEnvelope, ItemRef, SessionMeta, SessionWindow } from "./bindings";
import { useBackend, useEngineEvents } from "./index";
import { liveAnchor } from "./lanes";
import { toApiError } from "./types";
import {
  afterQuery,
  appendPage,
  aroundQuery,
  beforeQuery,
  itemRef,
  latestQuery,
  prependPage,
  refKey,
  replaceAfter,
  replaceRow,
  rowKey,
  windowFrom,
  type TreeWindow,
} from "./window";

/** Live changes are read at most this often (ms): a turn writes many rows a second. */
const LIVE_READ_MS = 250;

/** Events that change a loaded call's row. */
const CALL_EVENTS = new Set(["tool_done", "tool_error", "tool_cancelled", "tool_rejected", "approval_resolved", "file_changed"]);

export interface TreeWindowController {
  status: "loading" | "ready" | "error";
  error: ApiError | null;
  session: SessionMeta | null;
  window: TreeWindow;
  /** Counts fresh windows (a load or a jump): the list starts over at each. */
  generation: number;
  awaiting: number[];
  /** How the turns within the loaded rows ended, oldest first. */
  turnEnds: EndedTurn[];
  paging: boolean;
  loadEarlier(): Promise<void>;
  loadLater(): Promise<void>;
  jumpTo(item: ItemRef): Promise<void>;
  jumpToLatest(): Promise<void>;
  /** Fetches a row the window cut to a preview, whole. */
  expand(item: ItemRef): Promise<void>;
  retry(): void;
  /** Shows the session's metadata as the engine answered it after a change (a rename). */
  showMeta(meta: SessionMeta): void;
}

/** The turn ends of both, each once, oldest first. */
function mergeEnds(known: EndedTurn[], read: EndedTurn[]): EndedTurn[] {
  const ids = new Set(known.map((t) => t.id));
  return [...known, ...read.filter((t) => !ids.has(t.id))].sort((a, b) => a.id - b.id);
}

const EMPTY: TreeWindow = { rows: [], hasMoreBefore: false, hasMoreAfter: false, focus: null };

export function useTreeWindow(sessionId: number, focus: ItemRef | null): TreeWindowController {
  const backend = useBackend();
  const [status, setStatus] = useState<TreeWindowController["status"]>("loading");
  const [error, setError] = useState<ApiError | null>(null);
  const [session, setSession] = useState<SessionMeta | null>(null);
  const [win, setWin] = useState<TreeWindow>(EMPTY);
  const [generation, setGeneration] = useState(0);
  const [awaiting, setAwaiting] = useState<number[]>([]);
  const [turnEnds, setTurnEnds] = useState<EndedTurn[]>([]);
  const [paging, setPaging] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const winRef = useLatest(win);
  const loads = useRef(0);
  const busy = useRef(false);

  const show = useCallback((page: SessionWindow) => {
    setSession(page.session);
    setAwaiting(page.awaiting_human);
    setTurnEnds(page.turn_ends);
    setWin(windowFrom(page));
    setGeneration((g) => g + 1);
  }, []);

  const load = useCallback(
    async (around: ItemRef | null) => {
      const generationAtStart = ++loads.current;
      try {
        const page = await backend.session_window({
          session_id: sessionId,
          query: around ? aroundQuery(around) : latestQuery,
        });
        if (generationAtStart !== loads.current) return;
        show(page);
        setStatus("ready");
        setError(null);
      } catch (e) {
        if (generationAtStart !== loads.current) return;
        setError(toApiError(e));
        setStatus("error");
      }
    },
    [backend, sessionId, show],
  );

  const focusKey = focus ? refKey(focus) : null;
  const focusRef = useLatest(focus);
  // Another session, a jump or a retry starts over from an empty view that says it is loading;
  // done while rendering, so the old rows are never shown under the new address.
  const [loaded, setLoaded] = useState({ backend, sessionId, focusKey, attempt });
  if (loaded.backend !== backend || loaded.sessionId !== sessionId || loaded.focusKey !== focusKey || loaded.attempt !== attempt) {
    setLoaded({ backend, sessionId, focusKey, attempt });
    setStatus("loading");
    setWin(EMPTY);
  }
  useEffect(() => {
    void load(focusRef.current);
    return () => {
      loads.current += 1;
    };
  }, [load, focusKey, attempt, focusRef]);

  /** Reads a page at one edge; a reload meanwhile drops it. */
  const page = useCallback(
    async (edge: "before" | "after") => {
      const w = winRef.current;
      const from = edge === "before" ? w.rows[0] : w.rows[w.rows.length - 1];
      const more = edge === "before" ? w.hasMoreBefore : w.hasMoreAfter;
      if (busy.current || !from || !more) return;
      const generationAtStart = loads.current;
      busy.current = true;
      setPaging(true);
      try {
        const ref = itemRef(from);
        const read = await backend.session_window({
          session_id: sessionId,
          query: edge === "before" ? beforeQuery(ref) : afterQuery(ref),
        });
        if (generationAtStart !== loads.current) return;
        setAwaiting(read.awaiting_human);
        setTurnEnds((known) => mergeEnds(known, read.turn_ends));
        setWin((current) => (edge === "before" ? prependPage(current, read) : appendPage(current, read)));
      } catch (e) {
        setError(toApiError(e));
      } finally {
        busy.current = false;
        setPaging(false);
      }
    },
    [backend, sessionId, winRef],
  );

  // Live rows: read after the last loaded row, and re-read the loaded calls that changed.
  const dirty = useRef<{ rows: boolean; calls: Set<number> }>({ rows: false, calls: new Set() });
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const flush = useCallback(async () => {
    timer.current = null;
    const { rows, calls } = dirty.current;
    dirty.current = { rows: false, calls: new Set() };
    const generationAtStart = loads.current;
    const loaded = new Set(winRef.current.rows.map(rowKey));
    for (const id of calls) {
      const ref: ItemRef = { type: "tool", id };
      if (!loaded.has(refKey(ref))) continue;
      try {
        const read = await backend.session_window({
          session_id: sessionId,
          query: { anchor: { type: "around", item: ref }, limit: 1 },
        });
        const row = read.items[0];
        if (row && generationAtStart === loads.current) setWin((w) => replaceRow(w, row));
      } catch {
        // The next change or a reload reads it again.
      }
    }
    const w = winRef.current;
    if (!rows || w.hasMoreAfter) return;
    if (w.rows.length === 0) {
      await load(null);
      return;
    }
    // The window reaches the newest row: what is new follows the last row, or a running
    // sub-agent's last row (its frame's closing row is already there).
    const index = liveAnchor(w.rows);
    const anchor = w.rows[index] as DebugMessage;
    try {
      const read = await backend.session_window({ session_id: sessionId, query: afterQuery(itemRef(anchor)) });
      if (generationAtStart !== loads.current) return;
      setAwaiting(read.awaiting_human);
      setTurnEnds((known) => mergeEnds(known, read.turn_ends));
      setWin((current) => {
        const at = current.rows.findIndex((m) => rowKey(m) === rowKey(anchor));
        return at < 0 ? appendPage(current, read) : replaceAfter(current, at, read);
      });
    } catch {
      // The next change or a reload reads it again.
    }
  }, [winRef, backend, sessionId, load]);

  useEngineEvents((envelope: EventEnvelope) => {
    const type = envelope.event.type;
    if (type === "resync") {
      void load(null);
      return;
    }
    if (envelope.session_id !== sessionId || type === "token_delta") return;
    if ("tool_call_id" in envelope.event && CALL_EVENTS.has(type)) dirty.current.calls.add(envelope.event.tool_call_id);
    dirty.current.rows = true;
    if (timer.current === null) timer.current = setTimeout(() => void flush(), LIVE_READ_MS);
  });
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
    },
    [],
  );

  const jumpTo = useCallback(
    async (item: ItemRef) => {
      const key = refKey(item);
      if (winRef.current.rows.some((m) => rowKey(m) === key)) setWin((w) => ({ ...w, focus: key }));
      else await load(item);
    },
    [load, winRef],
  );
  const jumpToLatest = useCallback(async () => {
    if (winRef.current.hasMoreAfter) await load(null);
    else setWin((w) => ({ ...w, focus: null }));
  }, [load, winRef]);

  const expand = useCallback(
    async (item: ItemRef) => {
      try {
        const row: DebugMessage = await backend.session_item({ session_id: sessionId, item });
        setWin((w) => replaceRow(w, row));
      } catch (e) {
        setError(toApiError(e));
      }
    },
    [backend, sessionId],
  );

  return {
    status,
    error,
    session,
    window: win,
    generation,
    awaiting,
    turnEnds,
    paging,
    loadEarlier: useCallback(() => page("before"), [page]),
    loadLater: useCallback(() => page("after"), [page]),
    jumpTo,
    jumpToLatest,
    expand,
    retry: useCallback(() => setAttempt((n) => n + 1), []),
    showMeta: setSession,
  };
}
