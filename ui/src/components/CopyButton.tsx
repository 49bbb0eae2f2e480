// A button that copies a text to the clipboard and says so, visibly and to screen readers.
import { useEffect, useState } from "react";

type State = "idle" | "copied" | "failed";

const LABEL: Record<State, string> = { idle: "Copy", copied: "Copied", failed: "Copy failed" };
const ANNOUNCE: Record<State, string> = { idle: "", copied: "Copied to the clipboard", failed: "Could not copy to the clipboard" };

/** How long "Copied" stays before the button reads "Copy" again. */
export const COPY_FEEDBACK_MS = 2000;

/** `what` completes the accessible name ("Copy rust code"); the visible label starts it. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [state, setState] = useState<State>("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = window.setTimeout(() => setState("idle"), COPY_FEEDBACK_MS);
    return () => window.clearTimeout(timer);
  }, [state]);

  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
  };

  return (
    <>
      <button type="button" className="button button-small copy-button" data-state={state} onClick={() => void copy()}>
        {LABEL[state]} <span className="visually-hidden">{what}</span>
      </button>
      <span role="status" className="visually-hidden">
        {ANNOUNCE[state]}
      </span>
    </>
  );
}
