// The live chat of one source: load the active session, then follow its events.
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import type { ApiError, EventEnvelope } from "./bindings";
import { addNotice, applyEvent, chatFromDetail, emptyChat, type ChatState, type NoticeItem } from "./chat";
import { useBackend, useEngineEvents } from "./index";
import { toApiError } from "./types";

type Action =
  | { type: "reset"; state: ChatState }
  | { type: "events"; events: EventEnvelope[] }
  | { type: "notice"; tone: NoticeItem["tone"]; text: string };

function reducer(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case "reset":
      return action.state;
    case "events":
      return action.events.reduce(
        (s, e) => (e.session_id === s.sessionId ? applyEvent(s, e.event) : s),
        state,
      );
    case "notice":
      return addNotice(state, action.tone, action.text);
  }
}

export interface ChatController {
  status: "loading" | "ready" | "error";
  error: ApiError | null;
  state: ChatState;
  /** Sends a message (a steer while running); rejects with an ApiError so the caller can keep the text. */
  send(text: string): Promise<void>;
  stop(): Promise<void>;
  newSession(): Promise<void>;
  notice(tone: NoticeItem["tone"], text: string): void;
  retry(): void;
}

export function useChat(source: string): ChatController {
  const backend = useBackend();
  const [state, dispatch] = useReducer(reducer, null, () => emptyChat(null));
  const [status, setStatus] = useState<ChatController["status"]>("loading");
  const [error, setError] = useState<ApiError | null>(null);
  const [attempt, setAttempt] = useState(0);
  // Events that arrive while the history loads are held back, then replayed onto it.
  const buffer = useRef<EventEnvelope[] | null>([]);
  const sessionRef = useRef<number | null>(null);
  const loads = useRef(0);
  const sourceRef = useRef(source);
  sourceRef.current = source;

  const switchTo = useCallback((sessionId: number) => {
    sessionRef.current = sessionId;
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
    (onLoaded: () => void, onFailed: (e: ApiError) => void) => {
      const generation = ++loads.current;
      buffer.current = [];
      (async () => {
        const { session_id: id } = await backend.active_session({ source: sourceRef.current });
        const [detail, status] = await Promise.all([
          backend.session_detail({ session_id: id }),
          backend.turn_running({ session_id: id }),
        ]);
        return { id, detail, running: status.running };
      })().then(
        ({ id, detail, running }) => {
          if (generation !== loads.current) return;
          const held = buffer.current ?? [];
          buffer.current = null;
          sessionRef.current = id;
          dispatch({ type: "reset", state: chatFromDetail(detail, running) });
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
    [backend],
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
    dispatch({ type: "events", events: [envelope] });
  });

  useEffect(() => {
    let cancelled = false;
    sessionRef.current = null;
    setStatus("loading");
    setError(null);
    dispatch({ type: "reset", state: emptyChat(null) });
    load(
      () => {
        if (!cancelled) setStatus("ready");
      },
      (e) => {
        if (cancelled) return;
        setError(e);
        setStatus("error");
      },
    );
    return () => {
      cancelled = true;
      // A load still in flight belongs to the old source.
      loads.current += 1;
    };
  }, [load, source, attempt]);

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
    },
    [backend, source, switchTo],
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

  const newSession = useCallback(async () => {
    try {
      const { session_id: id } = await backend.new_session({ source });
      if (id !== sessionRef.current) switchTo(id);
    } catch (e) {
      dispatch({ type: "notice", tone: "error", text: `Could not start a new session: ${toApiError(e).message}` });
    }
  }, [backend, source, switchTo]);

  const notice = useCallback((tone: NoticeItem["tone"], text: string) => dispatch({ type: "notice", tone, text }), []);
  const retry = useCallback(() => setAttempt((n) => n + 1), []);

  return { status, error, state, send, stop, newSession, notice, retry };
}
