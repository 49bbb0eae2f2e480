// Bypasses in force, each with what it covers, who granted it, the time left and a Revoke button:
// every session's on the inbox, the current session's in the chat.
import { useState } from "react";
import { toApiError, useBypasses, useRevokeBypass, type ApiError, type BypassView } from "../backend";
import { formatSpan } from "./format";

function Row({ bypass, inChat, busy, onRevoke }: { bypass: BypassView; inChat: boolean; busy: boolean; onRevoke: () => void }) {
  const left = formatSpan(bypass.remaining_secs);
  return (
    <li className="bypass-row" data-bypass-id={bypass.id}>
      <span className="bypass-what">
        <strong>{bypass.label}</strong>
        {inChat ? null : (
          <>
            {" "}
            in <a href={`#session/${bypass.session_id}`}>session #{bypass.session_id}</a>{" "}
            <span className="muted">({bypass.source})</span>
          </>
        )}
      </span>
      <span className="muted">
        granted by {bypass.granted_by} · {bypass.duration === "session" ? `this session, ${left} left at most` : `${left} left`}
      </span>
      <button
        type="button"
        className="button button-small"
        disabled={busy}
        aria-label={`Revoke the bypass of ${bypass.label}${inChat ? "" : ` in session ${bypass.session_id}`}`}
        onClick={onRevoke}
      >
        {busy ? "Revoking…" : "Revoke"}
      </button>
    </li>
  );
}

/** `sessionId` given (the chat): that session's bypasses, and nothing at all when none is active.
 * Absent (the inbox): every session's, with an empty state. */
export function BypassList({ sessionId }: { sessionId?: number | null }) {
  const inChat = sessionId !== undefined;
  const bypasses = useBypasses(sessionId);
  const revoke = useRevokeBypass();
  const [revoking, setRevoking] = useState<number | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const list = bypasses.data ?? [];
  if (inChat && list.length === 0 && !error) return null;

  const onRevoke = async (id: number) => {
    setRevoking(id);
    setError(null);
    try {
      await revoke(id);
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setRevoking(null);
    }
  };

  const title = inChat ? "Bypasses in this session" : "Active bypasses";
  return (
    <section className={`bypass-list${inChat ? " bypass-list-chat" : ""}`} aria-label={title}>
      <h2 className="bypass-list-title">{title}</h2>
      {bypasses.isError ? (
        <p className="form-error" role="alert">
          Could not load the bypasses: {bypasses.error.message}
        </p>
      ) : list.length === 0 ? (
        <p className="muted">{bypasses.isPending ? "Loading…" : "None: every call that needs approval asks."}</p>
      ) : (
        <ul className="bypass-rows">
          {list.map((b) => (
            <Row key={b.id} bypass={b} inChat={inChat} busy={revoking === b.id} onRevoke={() => void onRevoke(b.id)} />
          ))}
        </ul>
      )}
      {error ? (
        <p className="form-error" role="alert">
          Could not revoke the bypass: {error.message}
        </p>
      ) : null}
    </section>
  );
}
