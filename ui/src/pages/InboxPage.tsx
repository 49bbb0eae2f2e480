// #inbox: placeholder for the Agent Inbox; it must not pretend nothing is waiting.
import { EmptyPage } from "../components/StatusViews";

export function InboxPage() {
  return (
    <EmptyPage
      title="Agent Inbox"
      lead="The inbox is not connected yet in this build, so it cannot tell you whether anything is waiting."
    >
      <ul className="placeholder-list">
        <li>Approvals for risky tool calls, each shown as a real diff or the exact command line.</li>
        <li>Clarification questions from agents, with suggested answers.</li>
        <li>Decisions parked by cron jobs and async tasks while the window was closed.</li>
      </ul>
      <p className="muted">
        Until then, <code>skald inbox</code>, <code>skald approve</code> and <code>skald deny</code> work from
        the command line.
      </p>
    </EmptyPage>
  );
}
