// A clarification question an agent asks (`ask_user_clarification`): its title, the question,
// one-click suggested answers that prefill the reply, and a free-text answer.
import { useId, useState } from "react";
import { toApiError, type ApiError } from "../backend";
import { AskedBy } from "./ApprovalCard";
import { Markdown } from "./Markdown";
import { Visible, visibleString } from "./visible";

export type QuestionView = {
  toolCallId: number;
  title: string;
  /** Markdown. */
  question: string;
  suggestedAnswers: string[];
};

export function QuestionCard({
  question,
  origin = null,
  onAnswer,
}: {
  question: QuestionView;
  /** The origin label of the sub-agent that asks; null for the session's own agent. */
  origin?: string | null;
  onAnswer: (toolCallId: number, answer: string) => Promise<unknown>;
}) {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const answerId = useId();

  const send = async () => {
    const answer = text.trim();
    if (!answer) return;
    setBusy(true);
    setError(null);
    try {
      await onAnswer(question.toolCallId, answer);
      // The card goes away when the engine reports clarification_resolved.
      setSent(true);
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section
      className="question-card"
      aria-label={`Question${origin ? ` from ${visibleString(origin)}` : ""}: ${visibleString(question.title)}`}
      data-tool-call-id={question.toolCallId}
      data-origin={origin ?? undefined}
    >
      <h3 className="approval-title">
        <Visible text={question.title} mode="line" />
      </h3>
      <AskedBy origin={origin} />
      <Markdown text={question.question} />
      {question.suggestedAnswers.length > 0 ? (
        <div className="question-chips" role="group" aria-label="Suggested answers">
          {question.suggestedAnswers.map((s) => (
            <button key={s} type="button" className="button button-small" disabled={sent} onClick={() => setText(s)}>
              <Visible text={s} mode="line" />
            </button>
          ))}
        </div>
      ) : null}
      <form
        className="field"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <label htmlFor={answerId}>Your answer</label>
        <textarea id={answerId} rows={2} value={text} onChange={(e) => setText(e.target.value)} disabled={sent} />
        <div className="approval-actions">
          <button type="submit" className="button button-primary" disabled={busy || sent || !text.trim()}>
            {busy ? "Sending…" : "Send answer"}
          </button>
          {sent ? (
            <span className="muted" role="status">
              Answered, waiting for the agent…
            </span>
          ) : null}
        </div>
      </form>
      {error ? (
        <p className="form-error" role="alert">
          Could not send the answer: {error.message}
        </p>
      ) : null}
    </section>
  );
}
