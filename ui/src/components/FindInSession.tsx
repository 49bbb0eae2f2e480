// Find-in-session: every message and call of the session that matches, stepped through with
// Next/Previous. Each step moves the address to the match (#session/ID?message=M or ?call=C),
// and the session view opens there, loading the rows around it when they are not on screen.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useState } from "react";
import { useNavigate } from "../app/route";
import { sessionKeys, useBackend, type ApiError, type SessionMatches } from "../backend";
import { matchHref } from "./SearchHit";

const FIND_DEBOUNCE_MS = 300;

export function FindInSession({ sessionId }: { sessionId: number }) {
  const backend = useBackend();
  const navigate = useNavigate();
  const inputId = useId();
  const [typed, setTyped] = useState("");
  const [text, setText] = useState("");
  // Which match the last step went to, and for which text; -1 before the first step for it.
  const [stepped, setStepped] = useState({ text: "", at: -1 });
  const at = stepped.text === text ? stepped.at : -1;

  useEffect(() => {
    const timer = setTimeout(() => setText(typed.trim()), FIND_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [typed]);

  const found = useQuery<SessionMatches, ApiError>({
    queryKey: sessionKeys.find(sessionId, text),
    queryFn: () => backend.find_in_session({ session_id: sessionId, text }),
    enabled: text !== "",
  });
  const matches = found.data?.matches ?? [];

  const step = (by: 1 | -1) => {
    if (matches.length === 0) return;
    // The first step forward goes to the first match, the first step back to the last.
    const next = at < 0 ? (by === 1 ? 0 : matches.length - 1) : (at + by + matches.length) % matches.length;
    setStepped({ text, at: next });
    navigate(matchHref(sessionId, matches[next]!), { replace: true });
  };

  let status = "";
  if (text !== "" && found.isError) status = `Could not search: ${found.error.message}`;
  else if (text !== "" && found.data) {
    status =
      matches.length === 0
        ? "No matches"
        : at < 0
          ? `${matches.length} ${matches.length === 1 ? "match" : "matches"}`
          : `${at + 1} of ${matches.length}`;
  }

  return (
    <form
      className="find-in-session"
      role="search"
      aria-label="Find in this session"
      onSubmit={(e) => {
        e.preventDefault();
        step(1);
      }}
    >
      <label htmlFor={inputId}>Find in session</label>
      <input id={inputId} type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
      <button type="button" className="button button-small" onClick={() => step(-1)} disabled={matches.length === 0}>
        Previous
      </button>
      <button type="submit" className="button button-small" disabled={matches.length === 0}>
        Next
      </button>
      <span className="muted" role="status">
        {status}
      </span>
    </form>
  );
}
