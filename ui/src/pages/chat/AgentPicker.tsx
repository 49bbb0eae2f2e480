// The chat's agent: shows the session's agent; choosing another starts a new session with it.
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { useAgents, useBackend } from "../../backend";

/** The session's agent: as the chat knows it, else (a session another client started) read from
 * a one-row window. */
function useSessionAgent(sessionId: number | null, known: string | null): string | null {
  const backend = useBackend();
  const { data } = useQuery({
    queryKey: ["session_agent", sessionId],
    queryFn: () =>
      backend.session_window({ session_id: sessionId as number, query: { anchor: { type: "latest" }, limit: 1 } }),
    enabled: sessionId !== null && known === null,
    staleTime: Infinity,
  });
  return known ?? data?.session.agent_id ?? null;
}

export function AgentPicker({
  sessionId,
  agentId,
  disabled,
  onChoose,
}: {
  sessionId: number | null;
  /** The session's agent when the chat knows it. */
  agentId: string | null;
  disabled: boolean;
  /** Starts a new session running `agentId`. */
  onChoose(agentId: string): Promise<void>;
}) {
  const id = useId();
  const agents = useAgents();
  const current = useSessionAgent(sessionId, agentId);
  const [busy, setBusy] = useState(false);
  // Chat and task agents can run a session; broken and system ones cannot.
  const choices = (agents.data ?? []).filter((a) => !a.error && (a.type === "chat" || a.type === "task"));
  // A session keeps its agent even when it can no longer be chosen (deleted, broken).
  const unlisted = current !== null && !choices.some((a) => a.id === current);

  async function choose(agentId: string) {
    if (agentId === current) return;
    setBusy(true);
    try {
      await onChoose(agentId);
    } finally {
      setBusy(false);
    }
  }

  return (
    <span className="agent-picker">
      <label htmlFor={`${id}-agent`}>Agent</label>
      <select
        id={`${id}-agent`}
        value={current ?? ""}
        disabled={disabled || busy || current === null || agents.isPending}
        onChange={(e) => void choose(e.target.value)}
        aria-describedby={`${id}-hint`}
      >
        {current === null ? <option value="">…</option> : null}
        {unlisted ? <option value={current}>{current}</option> : null}
        {choices.map((a) => (
          <option key={a.id} value={a.id}>
            {a.name} ({a.id}, {a.type})
          </option>
        ))}
      </select>
      <span id={`${id}-hint`} className="muted agent-picker-hint">
        Choosing another agent starts a new session with it.
      </span>
    </span>
  );
}
