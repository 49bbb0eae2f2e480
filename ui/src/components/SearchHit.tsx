// One search hit as the session list shows it: where it is, and its snippet with the matched
// stretches in <mark> elements (the engine sends parts, never markup, so nothing is parsed).
import type { HitKind, MatchRef, SearchHit, SnippetPart } from "../backend";

const KIND_LABELS: Record<Exclude<HitKind, "tool">, string> = {
  user: "You",
  assistant: "Assistant",
  agent: "Sub-agent prompt",
};

/**
 * Where a match opens: the session at the matching message, or at the call for a tool match
 * (the `?message=` / `?call=` focus the session view scrolls to and highlights).
 */
export function matchHref(sessionId: number, at: MatchRef): string {
  const focus = at.tool_call_id !== null ? `call=${at.tool_call_id}` : `message=${at.message_id}`;
  return `#session/${sessionId}?${focus}`;
}

export function hitHref(hit: SearchHit): string {
  return matchHref(hit.session_id, hit.at);
}

function hitLabel(hit: SearchHit): string {
  return hit.at.kind === "tool" ? `${hit.tool_name ?? "Tool"} call` : KIND_LABELS[hit.at.kind];
}

export function Snippet({ parts }: { parts: SnippetPart[] }) {
  return (
    <span className="snippet">
      {parts.map((p, i) => (p.hit ? <mark key={i}>{p.text}</mark> : <span key={i}>{p.text}</span>))}
    </span>
  );
}

/** The best hit of a listed session, linked to where it is; `count` is the session's hits. */
export function SearchHitLine({ hit, count }: { hit: SearchHit; count: number }) {
  const label = hitLabel(hit);
  return (
    <p className="search-hit">
      <a href={hitHref(hit)} className="search-hit-where">
        {label}
      </a>
      {count > 1 ? <span className="muted"> · {count} matches</span> : null}
      <span className="muted">: </span>
      <Snippet parts={hit.snippet} />
    </p>
  );
}
