// The live chat of one source: load a window of the active session (the newest rows, or the rows
// around a jump target), grow it as the user scrolls, and follow the session's events.
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import { useLatest } from "../lib/useLatest";
import type { ApiError, DebugMessage, EventEnvelope, ItemRef, SessionWindow } from "./bindings";
import {
  addNotice,
  appendChat,
  applyEvent,
  chatFromWindow,
  emptyChat,
  expandChat,
  prependChat,
  type ChatState,
  type NoticeItem,
} from "./chat";
import { useBackend, useEngineEvents } from "./index";
import { toApiError } from "./types";
import { afterQuery, aroundQuery, beforeQuery, frameBatcher, latestQuery, refKey } from "./window";

type Action =
  | { type: "reset"; state: ChatState }
  | { type: "events"; events: EventEnvelope[] }
  | { type: "notice"; tone: NoticeItem["tone"]; text: string }
  | { type: "prepend"; page: SessionWindow }
  | { type: "append"; page: SessionWindow }
  | { type: "expand"; row: DebugMessage }
  | { type: "highlight"; key: string | null };

/** The chat keys a tree row can show as (a message is a user or an assistant bubble). */
export function chatKeys(ref: ItemRef): string[] {
  switch (ref.type) {
    case "message":
      return [`user-${ref.id}`, `msg-${ref.id}`];
    case "tool":
      return [`tool-${ref.id}`];
    default:
      return [refKey(ref)];
  }
}

function reducer(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case "reset":
      return { ...action.state, generation: state.generation + 1 };
    case "events":
      return action.events.reduce(
        (s, e) => (e.session_id === s.sessionId ? applyEvent(s, e.event, e.frame) : s),
        state,
      );
    case "notice":
      return addNotice(state, action.tone, action.text);
    case "prepend":
      return prependChat(state, action.page);
    case "append":
      return appendChat(state, action.page);
    case "expand":
      return expandChat(state, action.row);
    case "highlight":
      return { ...state, highlight: action.key };
  }
}

export interface ChatController {
  status: "loading" | "ready" | "error";
  error: ApiError | null;
  state: ChatState;
  /** Sends a message (a steer while running); rejects with an ApiError so the caller can keep the text. */
  send(text: string): Promise<void>;
  stop(): Promise<void>;
  /** The session's agent; null until known (a session another client started). */
  agentId: string | null;
  /** Starts a new session for the source, running `agentId` (default: the engine's `main`). */
  newSession(agentId?: string): Promise<void>;
  notice(tone: NoticeItem["tone"], text: string): void;
  retry(): void;
  /** Reads the page before the first loaded row (the user scrolled to the top). */
  loadEarlier(): Promise<void>;
  /** Reads the page after the last loaded row (after a jump, the user scrolled to the bottom). */
  loadLater(): Promise<void>;
  /** Shows `item` highlighted: at once when loaded, else by loading the rows around it. */
  jumpTo(item: ItemRef): Promise<void>;
  /** Back to the newest rows (reloaded when a jump left them). */
  jumpToLatest(): Promise<void>;
  /** Fetches an item a window cut to a preview, whole. */
  expand(item: ItemRef): Promise<void>;
  /** A page is being read at the top or the bottom. */
  paging: boolean;
}

/** Token deltas wait for the next animation frame; one render carries all that arrived. */
const waitsForFrame = (e: EventEnvelope) => e.event.type === "token_delta";

export function useChat(source: string, focus: ItemRef | null = null): ChatController {
  const backend = useBackend();
  const [state, dispatch] = useReducer(reducer, null, () => emptyChat(null));
  const [status, setStatus] = useState<ChatController["status"]>("loading");
  const [error, setError] = useState<ApiError | null>(null);
  const [attempt, setAttempt] = useState(0);
  // Events that arrive while the history loads are held back, then replayed onto it.
  const buffer = useRef<EventEnvelope[] | null>([]);
  const sessionRef = useRef<number | null>(null);
  const loads = useRef(0);
  const sourceRef = useLatest(source);
  const stateRef = useLatest(state);
  const [paging, setPaging] = useState(false);
  const pagingRef = useRef(false);
  const [batcher] = useState(() =>
    frameBatcher<EventEnvelope>((events) => dispatch({ type: "events", events }), waitsForFrame),
  );
  useEffect(() => () => batcher.cancel(), [batcher]);

  // The session's agent, from the window read (null while unknown: a session another client started).
  const [agentId, setAgentId] = useState<string | null>(null);

  const switchTo = useCallback((sessionId: number) => {
    sessionRef.current = sessionId;
    setAgentId(null);
    buffer.current = null;
    // A load still in flight would bring the old session back.
    loads.current += 1;
    dispatch({ type: "reset", state: emptyChat(sessionId) });
  }, []);

  /**
   * Reads the source's session and whether it runs, then shows it. Events that arrive meanwhile
   * are held back and replayed onto it. Only the latest load applies (a later one supersedes it).
   */
  const load = useCallback(
    (onLoaded: () => void, onFailed: (e: ApiError) => void, around: ItemRef | null = null) => {
      const generation = ++loads.current;
      buffer.current = [];
      (async () => {
        const { session_id: id } = await backend.active_session({ source: sourceRef.current });
        const query = around ? aroundQuery(around) : latestQuery;
        const [page, status] = await Promise.all([
          backend.session_window({ session_id: id, query }),
          backend.turn_running({ session_id: id }),
        ]);
        return { id, page, running: status.running };
      })().then(
        ({ id, page, running }) => {
          if (generation !== loads.current) return;
          const held = buffer.current ?? [];
          buffer.current = null;
          sessionRef.current = id;
          setAgentId(page.session.agent_id);
          dispatch({ type: "reset", state: chatFromWindow(page, running) });
          if (held.length > 0) dispatch({ type: "events", events: held });
          onLoaded();
        },
        (e: unknown) => {
          if (generation !== loads.current) return;
          // Keep following live events on what is shown.
          const held = buffer.current ?? [];
          buffer.current = null;
          if (held.length > 0) dispatch({ type: "events", events: held });
          onFailed(toApiError(e));
        },
      );
    },
    [backend, sourceRef],
  );

  useEngineEvents((envelope) => {
    const ev = envelope.event;
    if (ev.type === "new_session") {
      // The source moved on (here or from another client): clear the view and follow it.
      if (envelope.source === sourceRef.current && ev.session_id !== sessionRef.current) switchTo(ev.session_id);
      return;
    }
    if (ev.type === "resync" && sessionRef.current !== null) {
      // Events were missed (a reconnect or a lagging channel): the engine's rows are the truth.
      load(
        () => {},
        (e) => dispatch({ type: "notice", tone: "error", text: `Could not refresh the chat: ${e.message}` }),
      );
      return;
    }
    if (buffer.current) {
      buffer.current.push(envelope);
      return;
    }
    batcher.push(envelope);
  });

  const focusKey = focus ? refKey(focus) : null;
  const focusRef = useLatest(focus);
  // Another source, a jump or a retry starts over from an empty view that says it is loading;
  // done while rendering, so the old conversation is never shown under the new address.
  const [loaded, setLoaded] = useState({ backend, source, attempt, focusKey });
  if (loaded.backend !== backend || loaded.source !== source || loaded.attempt !== attempt || loaded.focusKey !== focusKey) {
    setLoaded({ backend, source, attempt, focusKey });
    setStatus("loading");
    setError(null);
    dispatch({ type: "reset", state: emptyChat(null) });
  }
  useEffect(() => {
    let cancelled = false;
    sessionRef.current = null;
    load(
      () => {
        if (!cancelled) setStatus("ready");
      },
      (e) => {
        if (cancelled) return;
        if (focusRef.current && e.code === "not_found") {
          // A link to a message of another conversation: show this one, and say why.
          load(
            () => {
              if (cancelled) return;
              setStatus("ready");
              dispatch({ type: "notice", tone: "warn", text: "That message is not part of this conversation." });
            },
            (again) => {
              if (cancelled) return;
              setError(again);
              setStatus("error");
            },
          );
          return;
        }
        setError(e);
        setStatus("error");
      },
      focusRef.current,
    );
    return () => {
      cancelled = true;
      // A load still in flight belongs to the old source.
      loads.current += 1;
    };
  }, [load, source, attempt, focusKey, focusRef]);

  /** Reads one page at an edge; a reload meanwhile (another session, a jump) drops it. */
  const page = useCallback(
    async (edge: "before" | "after") => {
      const s = stateRef.current;
      const from = edge === "before" ? s.first : s.last;
      const more = edge === "before" ? s.hasMoreBefore : s.hasMoreAfter;
      if (pagingRef.current || s.sessionId === null || from === null || !more) return;
      const generation = loads.current;
      pagingRef.current = true;
      setPaging(true);
      try {
        const query = edge === "before" ? beforeQuery(from) : afterQuery(from);
        const read = await backend.session_window({ session_id: s.sessionId, query });
        if (generation === loads.current) dispatch({ type: edge === "before" ? "prepend" : "append", page: read });
      } catch (e) {
        dispatch({ type: "notice", tone: "error", text: `Could not load more of the conversation: ${toApiError(e).message}` });
      } finally {
        pagingRef.current = false;
        setPaging(false);
      }
    },
    [backend, stateRef],
  );
  const loadEarlier = useCallback(() => page("before"), [page]);
  const loadLater = useCallback(() => page("after"), [page]);

  const reloadAround = useCallback(
    (around: ItemRef | null) =>
      new Promise<void>((resolve) =>
        load(resolve, (e) => {
          dispatch({ type: "notice", tone: "error", text: `Could not open that part of the conversation: ${e.message}` });
          resolve();
        }, around),
      ),
    [load],
  );

  const jumpTo = useCallback(
    async (item: ItemRef) => {
      const keys = chatKeys(item);
      const loaded = stateRef.current.items.find((i) => keys.includes(i.key));
      if (loaded) dispatch({ type: "highlight", key: loaded.key });
      else await reloadAround(item);
    },
    [reloadAround, stateRef],
  );

  const jumpToLatest = useCallback(async () => {
    if (stateRef.current.hasMoreAfter) await reloadAround(null);
    else dispatch({ type: "highlight", key: null });
  }, [reloadAround, stateRef]);

  const expand = useCallback(
    async (item: ItemRef) => {
      const id = sessionRef.current;
      if (id === null) return;
      try {
        dispatch({ type: "expand", row: await backend.session_item({ session_id: id, item }) });
      } catch (e) {
        dispatch({ type: "notice", tone: "error", text: `Could not load the whole text: ${toApiError(e).message}` });
      }
    },
    [backend],
  );

  const send = useCallback(
    async (text: string) => {
      let result;
      try {
        result = await backend.send_message({ source, text });
      } catch (e) {
        throw toApiError(e);
      }
      // The engine may have started a fresh session for the source (e.g. after /new elsewhere).
      if (sessionRef.current !== null && result.session_id !== sessionRef.current) switchTo(result.session_id);
      // Written while older rows were shown (after a jump): go to where it lands.
      else if (stateRef.current.hasMoreAfter) await jumpToLatest();
    },
    [switchTo, stateRef, jumpToLatest, backend, source],
  );

  const stop = useCallback(async () => {
    const id = sessionRef.current;
    if (id === null) return;
    try {
      const { stopped } = await backend.stop_turn({ session_id: id });
      if (!stopped) dispatch({ type: "notice", tone: "info", text: "Nothing was running." });
    } catch (e) {
      dispatch({ type: "notice", tone: "error", text: `Could not stop: ${toApiError(e).message}` });
    }
  }, [backend]);

  const newSession = useCallback(async (agent?: string) => {
    try {
      const { session_id: id } = await backend.new_session(agent ? { source, agent_id: agent } : { source });
      if (id !== sessionRef.current) switchTo(id);
      // The engine's default agent when none was chosen.
      if (id === sessionRef.current) setAgentId(agent ?? "main");
    } catch (e) {
      dispatch({ type: "notice", tone: "error", text: `Could not start a new session: ${toApiError(e).message}` });
    }
  }, [backend, source, switchTo]);

  const notice = useCallback((tone: NoticeItem["tone"], text: string) => dispatch({ type: "notice", tone, text }), []);
  const retry = useCallback(() => setAttempt((n) => n + 1), []);

  return {
    status,
    error,
    state,
    agentId,
    send,
    stop,
    newSession,
    notice,
    retry,
    loadEarlier,
    loadLater,
    jumpTo,
    jumpToLatest,
    expand,
    paging,
  };
}
