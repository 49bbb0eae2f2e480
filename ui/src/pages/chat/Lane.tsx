// The head of a sub-agent's lane in the chat: its origin label (the fold toggle), how it
// stands, what it does right now, and the tokens it and its own sub-agents spent.
import type { ReactNode } from "react";
import type { LaneItem, LaneView } from "../../backend/lanes";
import { Visible } from "../../components/visible";

const STATUS_TEXT: Record<LaneView["status"], string> = {
  running: "running",
  done: "done",
  failed: "failed",
  stopped: "stopped",
};

/** `↑in · ↓out`, as the chat writes token counts. */
export function tokenPair(input: number, output: number): string {
  return `↑${input.toLocaleString()} · ↓${output.toLocaleString()}`;
}

/** A cost in USD as the chat shows it; empty when no reply carried one. */
export function usd(cost: number | null): string {
  return cost === null ? "" : ` · $${cost.toFixed(4)}`;
}

/** Indents a row of a lane by its depth, with the lane's rule on its left. */
export function LaneRow({ depth, children }: { depth: number; children: ReactNode }) {
  if (depth === 0) return <>{children}</>;
  return (
    <div className="lane-row" data-lane-depth={depth} style={{ "--lane-depth": depth } as React.CSSProperties}>
      {children}
    </div>
  );
}

export function LaneHead({
  head,
  view,
  open,
  onToggle,
}: {
  head: LaneItem;
  view: LaneView | undefined;
  open: boolean;
  onToggle: (lane: number) => void;
}) {
  const status = view?.status ?? "running";
  const spent = view && (view.input > 0 || view.output > 0 || view.cost !== null);
  return (
    <div
      className={`lane-head lane-${status}`}
      data-testid="lane-head"
      data-lane={head.lane}
      data-lane-label={head.label}
      data-status={status}
    >
      <button type="button" className="lane-toggle" aria-expanded={open} onClick={() => onToggle(head.lane)}>
        <span className="lane-chevron" aria-hidden="true">
          {open ? "▾" : "▸"}
        </span>
        <code className="lane-label">
          <Visible text={head.label} mode="line" />
        </code>
      </button>
      <span className={`status status-${status === "stopped" ? "cancelled" : status}`}>{STATUS_TEXT[status]}</span>
      {view?.step ? (
        <span className="lane-step">
          <Visible text={view.step} mode="line" />
        </span>
      ) : null}
      {spent ? (
        <span className="tokens lane-tokens" title="Tokens (and cost, where the provider reports it) of this sub-agent and its own sub-agents">
          {tokenPair(view.input, view.output)} tok{usd(view.cost)}
        </span>
      ) : null}
    </div>
  );
}
