// Catches a render error of the routed page, so one broken page shows what failed and a way back
// instead of blanking the window; the sidebar stays usable, and a move to another address retries.
import { useQueryClient } from "@tanstack/react-query";
import { Component, useCallback, useState, type ErrorInfo, type ReactNode } from "react";
import { Visible } from "../components/visible";
import { DEFAULT_CHAT_SOURCE } from "./route";

/** The longest error text shown; a page's error can carry a whole response or document. */
const MAX_MESSAGE = 2000;

/** What a thrown value says of itself, as plain text of bounded length. */
export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = error.message || error.name;
  else if (typeof error === "string") text = error;
  else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      text = String(error);
    }
  }
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

type CatcherProps = { resetKey: string; attempt: number; fallback(error: unknown): ReactNode; children: ReactNode };
type CatcherState = { error: unknown; caught: boolean; resetKey: string; attempt: number };

/** The boundary proper (React catches render errors only in a class); cleared when the address
 * or the attempt changes. */
class Catcher extends Component<CatcherProps, CatcherState> {
  state: CatcherState = { error: null, caught: false, resetKey: this.props.resetKey, attempt: this.props.attempt };

  static getDerivedStateFromError(error: unknown): Partial<CatcherState> {
    return { error, caught: true };
  }

  static getDerivedStateFromProps(props: CatcherProps, state: CatcherState): Partial<CatcherState> | null {
    if (props.resetKey === state.resetKey && props.attempt === state.attempt) return null;
    return { error: null, caught: false, resetKey: props.resetKey, attempt: props.attempt };
  }

  componentDidCatch(error: unknown, info: ErrorInfo): void {
    // The stack of components names the broken one for whoever reads the console.
    console.error("skald: a page failed to render", error, info.componentStack);
  }

  render(): ReactNode {
    return this.state.caught ? this.props.fallback(this.state.error) : this.props.children;
  }
}

/** `page` names the page in the message; `resetKey` is the address it shows. */
export function PageBoundary({ page, resetKey, children }: { page: string; resetKey: string; children: ReactNode }) {
  const client = useQueryClient();
  const [attempt, setAttempt] = useState(0);
  const retry = useCallback(() => {
    // Read the page's data again: the error may come from what was loaded, not from the code.
    void client.invalidateQueries();
    setAttempt((n) => n + 1);
  }, [client]);
  const fallback = (error: unknown) => (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">{page} could not be shown</h1>
      </header>
      <div className="state state-error" role="alert">
        <p className="state-title">Something on this page failed while it was drawn.</p>
        <pre className="state-body page-error">
          <Visible text={errorText(error)} />
        </pre>
        <p className="state-body muted">The rest of the app still works; the details are in the developer console.</p>
        <div className="page-error-actions">
          <button type="button" className="button" onClick={retry}>
            Reload this page
          </button>
          <a className="button" href={`#chat/${DEFAULT_CHAT_SOURCE}`}>
            Go to Chat
          </a>
        </div>
      </div>
    </section>
  );
  return (
    <Catcher resetKey={resetKey} attempt={attempt} fallback={fallback}>
      {children}
    </Catcher>
  );
}
